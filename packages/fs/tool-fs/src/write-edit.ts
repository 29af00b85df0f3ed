import { resolve } from 'node:path'
import { Buffer } from 'node:buffer'
import { invalidArgs, type ToolExecution, type ToolOutput, type ToolSession } from '@deepseek-ai/dsh-tools'
import {
  byteLines,
  classify,
  countLines,
  decode,
  encode,
  planEdit,
  planEditBytes,
  planEdits,
  shapeWrite,
  textLines,
  type Change,
  type EditPlan,
  type LineSource,
  type MatchKind,
  type TextFile,
} from './change.ts'
import {
  changeMessages,
  editCutNote,
  editHeading,
  HUNK_SEPARATOR,
  renderEdit,
  renderWrite,
  rowsOf,
  type ChangeCaps,
  type EditArgs,
  type EditOutcome,
  type OneEdit,
  type WriteArgs,
  type WriteOutcome,
} from './change-text.ts'
import { FsError, FsErrorCode } from './errors.ts'
import type { Observations } from './seen-files.ts'
import { replaceFile, type Current } from './replace.ts'
import { messages, renderRow, type ReadRow } from './text.ts'
import type { PathPolicy } from '@deepseek-ai/dsh-workspace'

/*
 * write and edit: gather the facts (the file as it is, the guard's verdict, the plan, the replacement) into a plain
 * value; the texts come from change-text.ts.
 */

export interface ChangeDeps {
  /** The calling session's seen files (a session-less caller's own). */
  readonly guard: (session: ToolSession | undefined) => Observations
  /** False: the guard records what is written but never refuses (one-shot calls, whose caller has seen the file). */
  readonly requireRead: boolean
  readonly caps: ChangeCaps
  readonly policy: (where: ToolSession | string, tool: string) => PathPolicy | undefined
  /** tool-fs.editMaxBytes: the largest file write and edit read or write. */
  readonly maxBytes: number
}

/** Lines of context shown around each change. */
const CONTEXT = 2

function where(tool: string, args: { path: string }, exec: ToolExecution, deps: ChangeDeps) {
  if (args.path.includes('\0')) throw invalidArgs(messages.nulInPath())
  const cwd = exec.session?.cwd ?? process.cwd()
  const policy = deps.policy(exec.session ?? cwd, tool)
  return { cwd, path: resolve(cwd, args.path), seen: deps.guard(exec.session), policy }
}

/** The current file as text, or the FS_NOT_TEXT refusal. */
export function textOf(tool: string, path: string, current: Current): TextFile {
  const decoded = decode(current.bytes)
  if (decoded.kind === 'binary') throw new FsError(changeMessages.binary(tool, path), { code: FsErrorCode.FS_NOT_TEXT })
  if (decoded.kind === 'invalid')
    throw new FsError(changeMessages.invalidUtf8(tool, path, decoded.line), { code: FsErrorCode.FS_NOT_TEXT })
  return decoded.file
}

/** The guard: the session must have seen exactly these bytes. */
export async function admit(
  tool: string,
  path: string,
  seen: Observations,
  current: Current,
  deps: ChangeDeps,
): Promise<void> {
  if (!deps.requireRead) return
  const verdict = await seen.check(current.real, current.stats, current.bytes)
  if (verdict.kind === 'not-read')
    throw new FsError(changeMessages.notRead(tool, path), { code: FsErrorCode.FS_NOT_READ })
  if (verdict.kind === 'stale') {
    // What changed is shown as far as the result budget holds (an error result is never paged).
    let facts = verdict.facts
    if (facts.kind === 'region') {
      const room =
        deps.caps.maxResultBytes -
        ERROR_PREFIX -
        Buffer.byteLength(
          changeMessages.stale(tool, path, {
            ...facts,
            rows: [{ line: Number.MAX_SAFE_INTEGER, text: '', truncated: false }],
            more: true,
          }),
        )
      const rows = fitRows(facts.rows, room)
      facts = { ...facts, rows, more: facts.more || rows.length < facts.rows.length }
      // The refusal shows every line as it is now: the session has seen the new content, so its next try goes through.
      if (!facts.more) seen.recordBytes(current.real, current.stats, current.bytes)
    }
    throw new FsError(changeMessages.stale(tool, path, facts), { code: FsErrorCode.FS_STALE })
  }
}

/** "Error: " before an error's message in its result. */
export const ERROR_PREFIX = 7

/** A lone UTF-16 surrogate (JSON allows "\ud800") is no character: it cannot be written as UTF-8, nor matched. */
export const LONE_SURROGATE = /\p{Surrogate}/u

export async function runWrite(
  args: WriteArgs,
  exec: ToolExecution,
  deps: ChangeDeps,
): Promise<ToolOutput<WriteOutcome>> {
  if (LONE_SURROGATE.test(args.content)) throw invalidArgs(changeMessages.loneSurrogate('content'))
  const { cwd, path, seen, policy } = where('write', args, exec, deps)
  let lines = 0
  const replaced = await replaceFile(
    { tool: 'write', path, cwd, policy, signal: exec.signal, create: true, maxBytes: deps.maxBytes },
    async (current) => {
      const existing = current && textOf('write', path, current)
      if (current) await admit('write', path, seen, current, deps)
      const shaped = shapeWrite(args.content, existing)
      lines = countLines(shaped.text)
      return encode(shaped)
    },
    (done) => seen.recordBytes(done.real, done.stats, done.bytes),
  )
  const value: WriteOutcome = { path, created: replaced.created, lines }
  return { text: renderWrite(value), value }
}

/** An argument problem of one replacement, or undefined. */
function editProblem(edit: OneEdit): string | undefined {
  if (edit.old_string.length === 0) return changeMessages.emptyOld()
  if (edit.old_string === edit.new_string) return changeMessages.same()
  for (const name of ['old_string', 'new_string'] as const)
    if (LONE_SURROGATE.test(edit[name])) return changeMessages.loneSurrogate(name)
  return undefined
}

export async function runEdit(args: EditArgs, exec: ToolExecution, deps: ChangeDeps): Promise<ToolOutput<EditOutcome>> {
  if (args.edits !== undefined) {
    if (args.old_string !== undefined || args.new_string !== undefined || args.replace_all !== undefined)
      throw invalidArgs(changeMessages.oneOrList())
    return runEdits(args.path, args.edits, exec, deps)
  }
  if (args.old_string === undefined) throw invalidArgs(changeMessages.missingOld())
  if (args.new_string === undefined) throw invalidArgs('invalid arguments: missing required property "new_string"')
  const one = { old_string: args.old_string, new_string: args.new_string }
  const problem = editProblem(one)
  if (problem) throw invalidArgs(problem)
  const { cwd, path, seen, policy } = where('edit', args, exec, deps)
  let plan: EditedPlan | undefined
  await replaceFile(
    { tool: 'edit', path, cwd, policy, signal: exec.signal, create: false, maxBytes: deps.maxBytes },
    async (current) => {
      if (!current) throw new FsError(changeMessages.notFound(path), { code: FsErrorCode.FS_NOT_FOUND })
      const classified = classify(current.bytes)
      if (classified.kind === 'binary')
        throw new FsError(changeMessages.binary('edit', path), { code: FsErrorCode.FS_NOT_TEXT })
      if (classified.kind === 'invalid')
        throw new FsError(changeMessages.invalidUtf8('edit', path, classified.line), { code: FsErrorCode.FS_NOT_TEXT })
      await admit('edit', path, seen, current, deps)
      const request = { oldString: one.old_string, newString: one.new_string, replaceAll: args.replace_all ?? false }
      // The common case on the bytes, without decoding a large file; the rest on its text.
      const start = classified.bom ? 3 : 0
      const fast = planEditBytes(current.bytes, start, request)
      if (fast?.kind === 'ambiguous')
        throw new FsError(changeMessages.manyMatches(path, fast.count, fast.lines), {
          code: FsErrorCode.FS_MANY_MATCHES,
        })
      if (fast) {
        plan = { count: fast.count, match: 'exact', changes: fast.changes, lines: byteLines(fast.bytes, start) }
        return fast.bytes
      }
      const file = textOf('edit', path, current)
      const planned = planEdit(file.text, request)
      if (planned.kind !== 'edited') throw missed(path, planned, deps.caps)
      plan = { count: planned.count, match: planned.match, changes: planned.changes, lines: textLines(planned.text) }
      return encode({ bom: file.bom, text: planned.text })
    },
    (done) => seen.recordBytes(done.real, done.stats, done.bytes),
  )
  const value = outcome(path, plan!, deps.caps)
  return { text: renderEdit(value), value }
}

/** The refusal of an edit that found old_string nowhere, or more than once; `wrap` puts it in context. */
function missed(
  path: string,
  planned: Exclude<EditPlan, { kind: 'edited' }>,
  caps: ChangeCaps,
  wrap: (message: string) => string = (message) => message,
): FsError {
  if (planned.kind === 'ambiguous')
    return new FsError(wrap(changeMessages.manyMatches(path, planned.count, planned.lines)), {
      code: FsErrorCode.FS_MANY_MATCHES,
    })
  const rows = planned.closest ? rowsOf(planned.closest, caps.maxLineChars) : []
  const scaffold = wrap(changeMessages.noMatch(path, [{ line: Number.MAX_SAFE_INTEGER, text: '', truncated: false }]))
  const shown = fitRows(rows, caps.maxResultBytes - ERROR_PREFIX - Buffer.byteLength(scaffold))
  return new FsError(wrap(changeMessages.noMatch(path, shown)), { code: FsErrorCode.FS_NO_MATCH })
}

/** edit with `edits`: every replacement planned on the text in order, then one write; any failure writes nothing. */
async function runEdits(
  given: string,
  edits: readonly OneEdit[],
  exec: ToolExecution,
  deps: ChangeDeps,
): Promise<ToolOutput<EditOutcome>> {
  for (const [index, edit] of edits.entries()) {
    const problem = editProblem(edit)
    if (problem) throw invalidArgs(changeMessages.inList(index, edits.length, problem))
  }
  const { cwd, path, seen, policy } = where('edit', { path: given }, exec, deps)
  let plan: EditedPlan | undefined
  await replaceFile(
    { tool: 'edit', path, cwd, policy, signal: exec.signal, create: false, maxBytes: deps.maxBytes },
    async (current) => {
      if (!current) throw new FsError(changeMessages.notFound(path), { code: FsErrorCode.FS_NOT_FOUND })
      const file = textOf('edit', path, current)
      await admit('edit', path, seen, current, deps)
      const requests = edits.map((edit) => ({
        oldString: edit.old_string,
        newString: edit.new_string,
        replaceAll: edit.replace_all ?? false,
      }))
      const planned = planEdits(file.text, requests)
      if (planned.kind === 'failed')
        throw missed(path, planned.plan, deps.caps, (message) =>
          changeMessages.inList(planned.index, edits.length, message),
        )
      plan = { ...planned, lines: textLines(planned.text) }
      return encode({ bom: file.bom, text: planned.text })
    },
    (done) => seen.recordBytes(done.real, done.stats, done.bytes),
  )
  const value = outcome(path, plan!, deps.caps, edits.length)
  return { text: renderEdit(value), value }
}

/** Rows while they fit in `maxBytes` (an error shows a region, never a huge one). */
export function fitRows(rows: readonly ReadRow[], maxBytes: number): ReadRow[] {
  const kept: ReadRow[] = []
  let bytes = 0
  for (const row of rows) {
    bytes += Buffer.byteLength(renderRow(row)) + 1
    if (bytes > maxBytes) break
    kept.push(row)
  }
  return kept
}

/** What an edit did, with the new file's lines to show the changes from. */
export interface EditedPlan {
  readonly count: number
  readonly match: MatchKind
  readonly changes: readonly Change[]
  readonly lines: LineSource
}

/** The changed regions with context, merged where they touch, as many rows as the result budget holds. */
export function outcome(path: string, plan: EditedPlan, caps: ChangeCaps, edits?: number): EditOutcome {
  const ranges = merge(plan.changes, plan.lines.total)
  const head = { path, ...(edits === undefined ? {} : { edits }), count: plan.count, match: plan.match }
  // Room for the rows: the budget less the heading, the blank line and the widest cut note.
  let room =
    caps.maxResultBytes -
    Buffer.byteLength(editHeading(head)) -
    2 -
    Buffer.byteLength(editCutNote(Number.MAX_SAFE_INTEGER)) -
    1
  const hunks: ReadRow[][] = []
  let cutAt: number | undefined
  const cursor = plan.lines.cursor()
  for (const [first, last] of ranges) {
    const separator = hunks.length ? Buffer.byteLength(HUNK_SEPARATOR) + 1 : 0
    const rows: ReadRow[] = []
    for (let line = first; line <= last; line++) {
      const [row] = rowsOf({ firstLine: line, lines: [cursor(line)] }, caps.maxLineChars)
      const size = Buffer.byteLength(renderRow(row!)) + 1 + (rows.length === 0 ? separator : 0)
      if (size > room) {
        cutAt = line
        break
      }
      room -= size
      rows.push(row!)
    }
    if (rows.length) hunks.push(rows)
    if (cutAt !== undefined) break
  }
  return { ...head, hunks, cutAt }
}

function merge(changes: readonly Change[], total: number): Array<[number, number]> {
  const ranges: Array<[number, number]> = []
  for (const change of changes) {
    const first = Math.max(1, Math.min(change.firstLine, total) - CONTEXT)
    const last = Math.min(total, Math.max(change.lastLine, change.firstLine) + CONTEXT)
    if (first > last) continue
    const previous = ranges.at(-1)
    if (previous && first <= previous[1] + 1) previous[1] = Math.max(previous[1], last)
    else ranges.push([first, last])
  }
  return ranges
}
