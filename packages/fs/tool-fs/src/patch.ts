import { Buffer } from 'node:buffer'
import { resolve } from 'node:path'
import { invalidArgs, type ToolExecution, type ToolOutput } from '@deepseek-ai/dsh-tools'
import {
  closestRegion,
  countLines,
  dominantEol,
  encode,
  shapeWrite,
  textLines,
  type Change,
  type Eol,
} from './change.ts'
import { changeMessages, rowsOf } from './change-text.ts'
import { FsError, FsErrorCode } from './errors.ts'
import {
  patchFileHeading,
  patchHeading,
  patchMessages,
  renderPatch,
  type PatchArgs,
  type PatchFileOutcome,
  type PatchOutcome,
} from './patch-text.ts'
import { REMOVE, replaceFile, type Current } from './replace.ts'
import { messages, renderRow } from './text.ts'
import { admit, ERROR_PREFIX, fitRows, LONE_SURROGATE, outcome, textOf, type ChangeDeps } from './write-edit.ts'

/*
 * apply_patch: the patch format Codex models write, parsed into file operations, planned on every file (each one
 * opened and checked by the workspace policy and the guard, nothing written), then written one file after another;
 * a failure part way puts back what was already written.
 */

/** One hunk of an update: an optional anchor line, the lines it expects ("-" and " ") and the lines it leaves. */
export interface Chunk {
  readonly context: string | undefined
  readonly old: readonly string[]
  readonly new: readonly string[]
  /** "*** End of File": the hunk is at the end of the file. */
  readonly eof: boolean
  /** 1-based line of the patch where the hunk starts (for texts). */
  readonly line: number
}

export type PatchOp =
  | { readonly kind: 'add'; readonly path: string; readonly lines: readonly string[] }
  | { readonly kind: 'delete'; readonly path: string }
  | { readonly kind: 'update'; readonly path: string; readonly to: string | undefined; readonly chunks: Chunk[] }

const BEGIN = '*** Begin Patch'
const END = '*** End Patch'
const ADD = '*** Add File: '
const DELETE = '*** Delete File: '
const UPDATE = '*** Update File: '
const MOVE = '*** Move to: '
const END_OF_FILE = '*** End of File'

const isFileHeader = (line: string) => {
  const trimmed = line.trim()
  return trimmed.startsWith(ADD) || trimmed.startsWith(DELETE) || trimmed.startsWith(UPDATE) || trimmed === END
}

function malformed(line: number, text: string, expected: string): FsError {
  return new FsError(patchMessages.invalid(line, text, expected), { code: FsErrorCode.FS_PATCH_INVALID })
}

/** The patch's file operations, or FS_PATCH_INVALID naming the first line that does not fit the format. */
export function parsePatch(patch: string): PatchOp[] {
  const lines = patch.split('\n').map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line))
  let first = 0
  while (first < lines.length && lines[first]!.trim() === '') first++
  let last = lines.length - 1
  while (last > first && lines[last]!.trim() === '') last--
  if (first >= lines.length || lines[first]!.trim() !== BEGIN)
    throw malformed(Math.min(first, lines.length - 1) + 1, lines[first] ?? '', `the patch must start with "${BEGIN}"`)
  if (last === first || lines[last]!.trim() !== END)
    throw malformed(last + 1, lines[last]!, `the patch must end with "${END}"`)
  const ops: PatchOp[] = []
  const pathOf = (at: number, header: string) => {
    const path = lines[at]!.trim().slice(header.length).trim()
    if (!path) throw malformed(at + 1, lines[at]!, `"${header.trim()}" must be followed by a path`)
    return path
  }
  let at = first + 1
  while (at < last) {
    const line = lines[at]!
    const trimmed = line.trim()
    if (trimmed.startsWith(ADD)) {
      const path = pathOf(at, ADD)
      const body: string[] = []
      for (at++; at < last && !isFileHeader(lines[at]!); at++) {
        if (!lines[at]!.startsWith('+'))
          throw malformed(at + 1, lines[at]!, 'each line of an added file must start with "+"')
        body.push(lines[at]!.slice(1))
      }
      ops.push({ kind: 'add', path, lines: body })
    } else if (trimmed.startsWith(DELETE)) {
      ops.push({ kind: 'delete', path: pathOf(at, DELETE) })
      at++
      if (at < last && !isFileHeader(lines[at]!))
        throw malformed(
          at + 1,
          lines[at]!,
          `"${DELETE.trim()}" takes no lines; expected the next "*** … File:" or "${END}"`,
        )
    } else if (trimmed.startsWith(UPDATE)) {
      const header = at
      const path = pathOf(at, UPDATE)
      at++
      let to: string | undefined
      if (at < last && lines[at]!.trim().startsWith(MOVE)) to = pathOf(at++, MOVE)
      const chunks: Chunk[] = []
      let chunk: { context: string | undefined; old: string[]; new: string[]; eof: boolean; line: number } | undefined
      for (; at < last && !isFileHeader(lines[at]!); at++) {
        const row = lines[at]!
        if (row.startsWith('@@')) {
          if (chunk && chunk.old.length === 0 && chunk.new.length === 0)
            throw malformed(at + 1, row, 'the hunk before this "@@" has no lines')
          const context = row.slice(2).trim()
          chunk = {
            context: context === '' || context === '@@' ? undefined : context,
            old: [],
            new: [],
            eof: false,
            line: at + 1,
          }
          chunks.push(chunk)
          continue
        }
        if (row.trim() === END_OF_FILE) {
          if (!chunk || (chunk.old.length === 0 && chunk.new.length === 0))
            throw malformed(at + 1, row, `"${END_OF_FILE}" must follow the lines of a hunk`)
          chunk.eof = true
          continue
        }
        if (chunk?.eof)
          throw malformed(at + 1, row, `nothing may follow "${END_OF_FILE}" in a hunk but "@@" or the next file`)
        const kind = row[0]
        if (kind !== ' ' && kind !== '-' && kind !== '+' && row !== '')
          throw malformed(
            at + 1,
            row,
            chunk
              ? 'each line of a hunk must start with " " (unchanged), "-" (removed) or "+" (added)'
              : 'a hunk starts with "@@" (or "@@ <a line of the file above the change>")',
          )
        if (!chunk) {
          chunk = { context: undefined, old: [], new: [], eof: false, line: at + 1 }
          chunks.push(chunk)
        }
        const text = row.slice(1)
        if (kind === '-' || kind === ' ' || row === '') chunk.old.push(text)
        if (kind === '+' || kind === ' ' || row === '') chunk.new.push(text)
      }
      if (chunk && chunk.old.length === 0 && chunk.new.length === 0)
        throw malformed(chunk.line, lines[chunk.line - 1]!, 'this hunk has no lines')
      if (chunks.length === 0 && to === undefined)
        throw malformed(
          header + 1,
          lines[header]!,
          `"${UPDATE.trim()}" needs at least one "@@" hunk (or "${MOVE.trim()}")`,
        )
      ops.push({ kind: 'update', path, to, chunks })
    } else {
      throw malformed(
        at + 1,
        line,
        `expected "${ADD.trim()} <path>", "${DELETE.trim()} <path>", "${UPDATE.trim()} <path>" or "${END}"`,
      )
    }
  }
  return ops
}

/** One line of a file and the line ending it had ('' for a last line without one). */
interface Line {
  readonly text: string
  readonly eol: Eol | ''
}

export type UpdatePlan =
  | { readonly kind: 'updated'; readonly text: string; readonly changes: readonly Change[] }
  | { readonly kind: 'no-match'; readonly hunk: number; readonly chunk: Chunk }
  | { readonly kind: 'no-context'; readonly hunk: number; readonly chunk: Chunk }

function splitLines(text: string): Line[] {
  const lines: Line[] = []
  let at = 0
  while (at < text.length) {
    const newline = text.indexOf('\n', at)
    if (newline < 0) {
      lines.push({ text: text.slice(at), eol: '' })
      break
    }
    const crlf = newline > at && text.charCodeAt(newline - 1) === 0x0d
    lines.push({ text: text.slice(at, crlf ? newline - 1 : newline), eol: crlf ? '\r\n' : '\n' })
    at = newline + 1
  }
  return lines
}

/** Matching as Codex models expect: exact, then ignoring trailing, then surrounding whitespace. */
const TIERS: ReadonlyArray<(line: string) => string> = [(l) => l, (l) => l.trimEnd(), (l) => l.trim()]

function seek(lines: readonly Line[], pattern: readonly string[], start: number, eof: boolean): number {
  if (pattern.length > lines.length) return -1
  for (const norm of TIERS) {
    const wanted = pattern.map(norm)
    const matchesAt = (i: number) => wanted.every((line, k) => norm(lines[i + k]!.text) === line)
    if (eof && lines.length - pattern.length >= start && matchesAt(lines.length - pattern.length))
      return lines.length - pattern.length
    for (let i = start; i + pattern.length <= lines.length; i++) if (matchesAt(i)) return i
  }
  return -1
}

/** Applies an update's hunks to a text (without its BOM): its line endings and final newline stay as they were. */
export function applyChunks(text: string, chunks: readonly Chunk[]): UpdatePlan {
  const lines = splitLines(text)
  const eol = dominantEol(text) ?? '\n'
  const finalNewline = text.length === 0 || text.endsWith('\n')
  const replacements: Array<{ start: number; length: number; lines: readonly string[] }> = []
  let cursor = 0
  for (const [index, chunk] of chunks.entries()) {
    if (chunk.context !== undefined) {
      const found = seek(lines, [chunk.context], cursor, false)
      if (found < 0) return { kind: 'no-context', hunk: index + 1, chunk }
      cursor = found + 1
    }
    if (chunk.old.length === 0) {
      // Only added lines: after the anchor line, else at the end of the file.
      const at = chunk.context !== undefined && !chunk.eof ? cursor : lines.length
      replacements.push({ start: at, length: 0, lines: chunk.new })
      continue
    }
    let old = chunk.old
    let added = chunk.new
    let found = seek(lines, old, cursor, chunk.eof)
    if (found < 0 && old.at(-1) === '') {
      // A trailing empty context line is often the patch's own final newline.
      old = old.slice(0, -1)
      added = added.at(-1) === '' ? added.slice(0, -1) : added
      found = old.length ? seek(lines, old, cursor, chunk.eof) : -1
    }
    if (found < 0) return { kind: 'no-match', hunk: index + 1, chunk }
    replacements.push({ start: found, length: old.length, lines: added })
    cursor = found + old.length
  }
  replacements.sort((a, b) => a.start - b.start)
  const out: Line[] = []
  const changes: Change[] = []
  let from = 0
  for (const { start, length, lines: added } of replacements) {
    out.push(...lines.slice(from, start))
    // The changed lines are what lies between the hunk's unchanged first and last lines.
    const old = lines.slice(start, start + length).map((line) => line.text)
    let head = 0
    while (head < old.length && head < added.length && old[head] === added[head]) head++
    let tail = 0
    while (tail < old.length - head && tail < added.length - head && old.at(-1 - tail) === added.at(-1 - tail)) tail++
    const first = out.length + head + 1
    changes.push({ firstLine: first, lastLine: out.length + added.length - tail })
    out.push(...old.slice(0, head).map((_, i) => lines[start + i]!))
    for (const line of added.slice(head, added.length - tail)) out.push({ text: line, eol })
    out.push(...lines.slice(start + length - tail, start + length))
    from = Math.max(from, start + length)
  }
  out.push(...lines.slice(from))
  const joined = out
    .map((line, i) => {
      if (i < out.length - 1) return line.text + (line.eol || eol)
      return line.text + (finalNewline ? line.eol || eol : '')
    })
    .join('')
  return { kind: 'updated', text: joined, changes }
}

/** What the write phase does to one path; `before` is what the plan saw there (undefined: nothing). */
interface Step {
  readonly path: string
  readonly before: Current | undefined
  readonly after: Buffer | typeof REMOVE
}

const PLANNED = Symbol('planned')

export async function runPatch(
  args: PatchArgs,
  exec: ToolExecution,
  deps: ChangeDeps,
): Promise<ToolOutput<PatchOutcome>> {
  if (args.patch.includes('\0')) throw invalidArgs('patch must not contain a NUL character')
  if (LONE_SURROGATE.test(args.patch)) throw invalidArgs(changeMessages.loneSurrogate('patch'))
  const ops = parsePatch(args.patch)
  if (ops.length === 0) throw new FsError(patchMessages.empty(), { code: FsErrorCode.FS_PATCH_INVALID })
  const cwd = exec.session?.cwd ?? process.cwd()
  const seen = deps.guard(exec.session)
  const policy = deps.policy(exec.session ?? cwd, 'apply_patch')
  const absolute = (path: string) => {
    if (path.includes('\0')) throw invalidArgs(messages.nulInPath())
    return resolve(cwd, path)
  }
  const touched = new Set<string>()
  const claim = (path: string) => {
    if (touched.has(path)) throw new FsError(patchMessages.twice(path), { code: FsErrorCode.FS_PATCH_INVALID })
    touched.add(path)
    return path
  }
  const request = (path: string, create: boolean) =>
    ({ tool: 'apply_patch', path, cwd, policy, signal: exec.signal, create, maxBytes: deps.maxBytes }) as const

  /** The file as it is now, under the policy's checks, without changing it; undefined when it does not exist. */
  const look = async (path: string, create: boolean): Promise<Current | undefined> => {
    let seen: Current | undefined
    try {
      await replaceFile(
        request(path, create),
        (current) => {
          seen = current
          throw PLANNED
        },
        () => {},
      )
    } catch (error) {
      if (error instanceof FsError && error.code === FsErrorCode.FS_NOT_FOUND)
        throw new FsError(patchMessages.notFound(path), { code: FsErrorCode.FS_NOT_FOUND })
      if (error !== PLANNED) throw error
    }
    return seen
  }

  // Plan: every file opened and checked, the guard asked, the new bytes made. Nothing is written yet.
  const steps: Step[] = []
  const files: Array<{ file: PatchFileOutcome; changes?: readonly Change[]; text?: string }> = []
  for (const op of ops) {
    const path = claim(absolute(op.path))
    if (op.kind === 'add') {
      const current = await look(path, true)
      const existing = current && textOf('apply_patch', path, current)
      if (current) await admit('apply_patch', path, seen, current, deps)
      const shaped = shapeWrite(op.lines.map((line) => `${line}\n`).join(''), existing)
      steps.push({ path, before: current, after: encode(shaped) })
      files.push({ file: { kind: 'added', path, lines: countLines(shaped.text), replaced: current !== undefined } })
      continue
    }
    const current = await look(path, false)
    if (!current) throw new FsError(patchMessages.notFound(path), { code: FsErrorCode.FS_NOT_FOUND })
    if (op.kind === 'delete') {
      await admit('apply_patch', path, seen, current, deps)
      steps.push({ path, before: current, after: REMOVE })
      files.push({ file: { kind: 'deleted', path } })
      continue
    }
    const file = textOf('apply_patch', path, current)
    await admit('apply_patch', path, seen, current, deps)
    const planned = applyChunks(file.text, op.chunks)
    if (planned.kind !== 'updated') throw unmatched(path, file.text, planned, deps)
    const bytes = encode({ bom: file.bom, text: planned.text })
    const to = op.to === undefined ? undefined : claim(absolute(op.to))
    if (to !== undefined) {
      if (await look(to, true))
        throw new FsError(patchMessages.exists(to, 'move a file to'), { code: FsErrorCode.FS_PATCH_INVALID })
      steps.push({ path: to, before: undefined, after: bytes }, { path, before: current, after: REMOVE })
    } else steps.push({ path, before: current, after: bytes })
    files.push({
      file: { kind: 'updated', path, to, hunks: [], cutAt: undefined },
      changes: planned.changes,
      text: planned.text,
    })
  }

  // Write, in order; a failure puts back what was written (each put back only if still as this call left it).
  const written: Step[] = []
  try {
    for (const step of steps) {
      await perform(step.path, step.before?.bytes, step.after)
      written.push(step)
    }
  } catch (error) {
    if (written.length === 0) throw error
    for (const step of written.reverse()) {
      await perform(step.path, step.after === REMOVE ? undefined : step.after, step.before?.bytes ?? REMOVE).catch(
        () => {},
      )
    }
    if (error instanceof FsError) throw new FsError(patchMessages.rolledBack(error.message), { code: error.code })
    throw error
  }

  async function perform(path: string, expected: Buffer | undefined, next: Buffer | typeof REMOVE): Promise<void> {
    await replaceFile(
      request(path, expected === undefined),
      (current) => {
        const same = current === undefined ? expected === undefined : expected?.equals(current.bytes) === true
        if (!same) throw new FsError(changeMessages.changedDuring('apply_patch', path), { code: FsErrorCode.FS_STALE })
        return next
      },
      (done) => {
        if (!done.removed) seen.recordBytes(done.real, done.stats, done.bytes)
      },
    )
  }

  const value: PatchOutcome = { files: shown(files, deps) }
  return { text: renderPatch(value), value }
}

/** Each file's changed rows, as many as the result budget holds (files in patch order). */
function shown(
  files: ReadonlyArray<{ file: PatchFileOutcome; changes?: readonly Change[]; text?: string }>,
  deps: ChangeDeps,
): PatchFileOutcome[] {
  let room =
    deps.caps.maxResultBytes -
    Buffer.byteLength(patchHeading(files.length)) -
    files.reduce((sum, { file }) => sum + Buffer.byteLength(patchFileHeading(file)) + 3, 0)
  return files.map(({ file, changes, text }) => {
    if (file.kind !== 'updated' || !changes || text === undefined) return file
    const edited = outcome(
      file.path,
      { count: changes.length, match: 'exact', changes, lines: textLines(text) },
      { maxLineChars: deps.caps.maxLineChars, maxResultBytes: Math.max(0, room) },
    )
    const used = edited.hunks.reduce(
      (sum, rows) => sum + rows.reduce((size, row) => size + Buffer.byteLength(renderRow(row)) + 1, 2),
      0,
    )
    room -= used
    return { ...file, hunks: edited.hunks, cutAt: edited.cutAt }
  })
}

function unmatched(path: string, text: string, planned: Exclude<UpdatePlan, { kind: 'updated' }>, deps: ChangeDeps) {
  const { chunk, hunk } = planned
  if (planned.kind === 'no-context')
    return new FsError(patchMessages.contextNotFound(path, hunk, chunk.line, chunk.context ?? ''), {
      code: FsErrorCode.FS_NO_MATCH,
    })
  const region = closestRegion(text, chunk.old.join('\n'))
  const rows = region ? rowsOf(region, deps.caps.maxLineChars) : []
  const scaffold = patchMessages.noMatch(path, hunk, chunk.line, [
    { line: Number.MAX_SAFE_INTEGER, text: '', truncated: false },
  ])
  const fitted = fitRows(rows, deps.caps.maxResultBytes - ERROR_PREFIX - Buffer.byteLength(scaffold))
  return new FsError(patchMessages.noMatch(path, hunk, chunk.line, fitted), { code: FsErrorCode.FS_NO_MATCH })
}
