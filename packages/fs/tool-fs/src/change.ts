import { isUtf8 } from 'node:buffer'

/*
 * The pure engine of write and edit: text in, text out, no files. A file's text is kept as it was — its BOM, its
 * line endings, its final newline — and an edit changes only the bytes of the span it replaces.
 */

const BOM = '\uFEFF'
const BOM_BYTES = Buffer.from(BOM, 'utf8')
/** A NUL byte this early means a binary file (read's rule). */
const BINARY_SNIFF = 8192

export type Eol = '\n' | '\r\n'

/** A text file's content: its text without the BOM, and whether it had one. */
export interface TextFile {
  readonly bom: boolean
  readonly text: string
}

export type Decoded =
  | { readonly kind: 'text'; readonly file: TextFile }
  | { readonly kind: 'binary' }
  | { readonly kind: 'invalid'; readonly line: number }

export type Classified = { readonly kind: 'text'; readonly bom: boolean } | Exclude<Decoded, { kind: 'text' }>

/** Whether the bytes are UTF-8 text (read's rules: a NUL in the first 8 KiB is binary; invalid UTF-8 names its line). */
export function classify(bytes: Buffer): Classified {
  if (bytes.subarray(0, BINARY_SNIFF).includes(0)) return { kind: 'binary' }
  if (!isUtf8(bytes)) return { kind: 'invalid', line: invalidLine(bytes) }
  return { kind: 'text', bom: bytes.subarray(0, 3).equals(BOM_BYTES) }
}

/** UTF-8 text, or why not (classify's rules). */
export function decode(bytes: Buffer): Decoded {
  const classified = classify(bytes)
  if (classified.kind !== 'text') return classified
  return { kind: 'text', file: { bom: classified.bom, text: bytes.toString('utf8', classified.bom ? 3 : 0) } }
}

function invalidLine(bytes: Buffer): number {
  let line = 1
  let start = 0
  for (;;) {
    const newline = bytes.indexOf(0x0a, start)
    const end = newline < 0 ? bytes.length : newline
    if (!isUtf8(bytes.subarray(start, end))) return line
    if (newline < 0) return line
    line++
    start = newline + 1
  }
}

export function encode(file: TextFile): Buffer {
  return Buffer.from(file.bom ? BOM + file.text : file.text, 'utf8')
}

/** Lines as read counts them: a final newline adds none; an empty text has none. */
export function countLines(text: string): number {
  let count = 0
  for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) count++
  return text.length > 0 && !text.endsWith('\n') ? count + 1 : count
}

/** The line ending most of `text`'s lines use (CRLF wins a tie only if it comes first); undefined when it has none. */
export function dominantEol(text: string): Eol | undefined {
  let crlf = 0
  let lf = 0
  let first: Eol | undefined
  for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) {
    const eol: Eol = at > 0 && text.charCodeAt(at - 1) === 0x0d ? '\r\n' : '\n'
    first ??= eol
    if (eol === '\r\n') crlf++
    else lf++
  }
  if (first === undefined) return undefined
  return crlf === lf ? first : crlf > lf ? '\r\n' : '\n'
}

/** `text` with every line ending (`\r\n` or `\n`) made `eol`; a lone `\r` is kept. */
export function withEol(text: string, eol: Eol): string {
  const lf = text.replace(/\r\n/g, '\n')
  return eol === '\n' ? lf : lf.replace(/\n/g, '\r\n')
}

/**
 * What `write` puts on disk: a new file takes `content` as given; a replaced file keeps its BOM, its line endings and
 * whether it ended with a newline (the model's content rarely carries those faithfully; see the decision record).
 */
export function shapeWrite(content: string, existing: TextFile | undefined): TextFile {
  const given = content.startsWith(BOM) ? { bom: true, text: content.slice(1) } : { bom: false, text: content }
  if (!existing) return given
  const eol = dominantEol(existing.text)
  let text = eol ? withEol(given.text, eol) : given.text
  const hadFinal = existing.text.length === 0 || existing.text.endsWith('\n')
  if (existing.text.length > 0 && text.length > 0) {
    const ending = eol ?? '\n'
    if (hadFinal && !text.endsWith('\n')) text += ending
    if (!hadFinal && text.endsWith('\n')) text = text.slice(0, text.endsWith('\r\n') ? -2 : -1)
  }
  return { bom: existing.bom || given.bom, text }
}

/** How old_string was found: as given, with its line endings adapted, or without read's `N: ` row prefixes. */
export type MatchKind = 'exact' | 'line-endings' | 'row-prefixes'

export interface EditRequest {
  readonly oldString: string
  readonly newString: string
  readonly replaceAll: boolean
}

/** One replacement in the new text: where its line range starts and ends (1-based, the new file's numbers). */
export interface Change {
  readonly firstLine: number
  readonly lastLine: number
}

export type EditPlan =
  | {
      readonly kind: 'edited'
      readonly text: string
      readonly count: number
      readonly match: MatchKind
      readonly changes: readonly Change[]
      /** Per change: the last line it replaced in the text before the edit, and how many lines it added there. */
      readonly shifts: readonly Shift[]
    }
  | { readonly kind: 'not-found'; readonly closest: Region | undefined }
  | { readonly kind: 'ambiguous'; readonly lines: readonly number[]; readonly count: number }

/** Lines of the file shown to the model: the first line's number and the lines (without terminators). */
export interface Region {
  readonly firstLine: number
  readonly lines: readonly string[]
}

/** Most line numbers an ambiguity lists. */
const MAX_LISTED_LINES = 20
/** Most lines of a closest region. */
const MAX_REGION_LINES = 30

/** Applies one edit to a text (without its BOM). The caller has refused old_string === new_string and an empty one. */
export function planEdit(text: string, request: EditRequest): EditPlan {
  const attempts: Array<{ match: MatchKind; old: string; new: string }> = [
    { match: 'exact', old: request.oldString, new: request.newString },
  ]
  const stripped = stripRowPrefixes(request.oldString)
  if (stripped !== undefined) {
    attempts.push({
      match: 'row-prefixes',
      old: stripped,
      new: stripRowPrefixes(request.newString) ?? request.newString,
    })
  }
  for (const attempt of attempts) {
    let spans = findExact(text, attempt.old)
    if (spans.length === 0 && /[\r\n]/.test(attempt.old)) {
      spans = findAnyEol(text, attempt.old)
      if (spans.length && attempt.match === 'exact') attempt.match = 'line-endings'
    }
    if (spans.length === 0) continue
    if (spans.length > 1 && !request.replaceAll) {
      return {
        kind: 'ambiguous',
        count: spans.length,
        lines: lineNumbersAt(
          text,
          spans.slice(0, MAX_LISTED_LINES).map((s) => s.start),
        ),
      }
    }
    return replaceSpans(text, spans, attempt.new, attempt.match)
  }
  return { kind: 'not-found', closest: closestRegion(text, request.oldString) }
}

interface Span {
  readonly start: number
  readonly end: number
}

function findExact(text: string, needle: string): Span[] {
  const spans: Span[] = []
  for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + needle.length))
    spans.push({ start: at, end: at + needle.length })
  return spans
}

/**
 * Matches of `needle` where each of its line endings may be `\n` or `\r\n` in the file: found in the text with
 * every `\r\n` made `\n`, then mapped back (a match that starts or ends at such a line ending takes its `\r`).
 * No regular expression: a pattern as long as a large old_string would pass V8's limit.
 */
function findAnyEol(text: string, needle: string): Span[] {
  const plain = needle.replace(/\r\n/g, '\n')
  if (plain.length === 0) return []
  const removed: number[] = [] // indices, in the normalised text, of the \n whose \r was dropped
  const parts: string[] = []
  let from = 0
  for (let at = text.indexOf('\r\n'); at >= 0; at = text.indexOf('\r\n', at + 2)) {
    parts.push(text.slice(from, at))
    removed.push(at - removed.length)
    from = at + 1
  }
  parts.push(text.slice(from))
  const normal = parts.join('')
  const before = (index: number) => {
    // how many dropped \r lie before `index` of the normalised text
    let low = 0
    let high = removed.length
    while (low < high) {
      const mid = (low + high) >>> 1
      if (removed[mid]! < index) low = mid + 1
      else high = mid
    }
    return low
  }
  const spans: Span[] = []
  for (let at = normal.indexOf(plain); at >= 0; at = normal.indexOf(plain, at + plain.length)) {
    spans.push({ start: at + before(at), end: at + plain.length + before(at + plain.length) })
  }
  return spans
}

const ROW_PREFIX = /^\d+: ?/
/** `text` with read's `N: ` row prefix removed from every line, or undefined unless every line has one. */
export function stripRowPrefixes(text: string): string | undefined {
  const lines = text.split('\n')
  // A trailing newline leaves an empty last piece that has no prefix to strip.
  const last = lines.at(-1) === '' && lines.length > 1 ? lines.pop() : undefined
  if (!lines.every((line) => /^\d+:( |\r?$)/.test(line))) return undefined
  const stripped = lines.map((line) => line.replace(ROW_PREFIX, ''))
  if (last !== undefined) stripped.push(last)
  return stripped.join('\n')
}

/** The replacement for a span: its line endings follow the span's own, else the file's, else `\n`. */
function adapt(replacement: string, span: string, fileEol: () => Eol | undefined): string {
  if (!/[\r\n]/.test(replacement)) return replacement
  const eol = dominantEol(span) ?? fileEol() ?? '\n'
  return withEol(replacement, eol)
}

function replaceSpans(text: string, spans: readonly Span[], replacement: string, match: MatchKind): EditPlan {
  let fileEol: Eol | undefined | null = null
  const eolOfFile = () => (fileEol === null ? (fileEol = dominantEol(text)) : fileEol)
  const pieces: string[] = []
  const placed: Span[] = []
  let from = 0
  let length = 0
  for (const span of spans) {
    pieces.push(text.slice(from, span.start))
    length += span.start - from
    const inserted = adapt(replacement, text.slice(span.start, span.end), eolOfFile)
    pieces.push(inserted)
    placed.push({ start: length, end: length + inserted.length })
    length += inserted.length
    from = span.end
  }
  pieces.push(text.slice(from))
  const result = pieces.join('')
  const changes: Change[] = []
  const starts = lineNumbersAt(
    result,
    placed.flatMap((span) => [span.start, Math.max(span.start, span.end - 1)]),
  )
  for (let i = 0; i < placed.length; i++) changes.push({ firstLine: starts[2 * i]!, lastLine: starts[2 * i + 1]! })
  const lasts = lineNumbersAt(
    text,
    spans.map((span) => span.end - 1),
  )
  const shifts = spans.map((span, i) => ({
    after: lasts[i]!,
    delta: newlines(result, placed[i]!.start, placed[i]!.end) - newlines(text, span.start, span.end),
  }))
  return { kind: 'edited', text: result, count: spans.length, match, changes, shifts }
}

export interface Shift {
  readonly after: number
  readonly delta: number
}

function newlines(text: string, from: number, to: number): number {
  let count = 0
  for (let at = text.indexOf('\n', from); at >= 0 && at < to; at = text.indexOf('\n', at + 1)) count++
  return count
}

/** Several edits of one text, applied in order: the final text and every change in its line numbers, or why not. */
export type EditsPlan =
  | {
      readonly kind: 'edited'
      readonly text: string
      readonly count: number
      readonly match: MatchKind
      readonly changes: readonly Change[]
    }
  | { readonly kind: 'failed'; readonly index: number; readonly plan: Exclude<EditPlan, { kind: 'edited' }> }

export function planEdits(text: string, requests: readonly EditRequest[]): EditsPlan {
  let current = text
  let count = 0
  let match: MatchKind = 'exact'
  let changes: Change[] = []
  for (const [index, request] of requests.entries()) {
    const plan = planEdit(current, request)
    if (plan.kind !== 'edited') return { kind: 'failed', index, plan }
    // Earlier changes move with the lines this edit added or removed before them.
    const moved = changes.map((change) => ({
      firstLine: change.firstLine + shiftBefore(plan, change.firstLine),
      lastLine: change.lastLine + shiftBefore(plan, change.lastLine),
    }))
    changes = [...moved, ...plan.changes].sort((a, b) => a.firstLine - b.firstLine)
    current = plan.text
    count += plan.count
    if (plan.match === 'row-prefixes') match = 'row-prefixes'
  }
  return { kind: 'edited', text: current, count, match, changes }
}

/** Lines an edit added (or removed, negative) above `line` of the text before it. */
function shiftBefore(plan: Extract<EditPlan, { kind: 'edited' }>, line: number): number {
  let shift = 0
  for (const { after, delta } of plan.shifts) if (after < line) shift += delta
  return Math.max(shift, 1 - line)
}

/** The 1-based line of each position (positions ascending). */
export function lineNumbersAt(text: string, positions: readonly number[]): number[] {
  const lines: number[] = []
  let line = 1
  let at = 0
  for (const position of positions) {
    for (let newline = text.indexOf('\n', at); newline >= 0 && newline < position; newline = text.indexOf('\n', at)) {
      line++
      at = newline + 1
    }
    lines.push(line)
  }
  return lines
}

/** Lines `first`…`last` of `text` (1-based, clamped to the file), without terminators or a `\r` before `\n`. */
export function linesOf(text: string, first: number, last: number): Region {
  const lines: string[] = []
  let line = 1
  let at = 0
  while (line < first) {
    const newline = text.indexOf('\n', at)
    if (newline < 0) return { firstLine: first, lines }
    at = newline + 1
    line++
  }
  while (line <= last && at < text.length) {
    const newline = text.indexOf('\n', at)
    const end = newline < 0 ? text.length : newline
    lines.push(text.slice(at, end > at && text.charCodeAt(end - 1) === 0x0d && newline >= 0 ? end - 1 : end))
    if (newline < 0) break
    at = newline + 1
    line++
  }
  return { firstLine: first, lines }
}

/**
 * The region of the file most like old_string: the window of as many lines as it has whose lines best line up with
 * its lines (a line equal to the one at the same place, trimmed, counts 2) and share most of its words. One pass over
 * the file; undefined when no line shares anything with it.
 */
export function closestRegion(text: string, oldString: string): Region | undefined {
  const wanted = (stripRowPrefixes(oldString) ?? oldString).replace(/\r\n/g, '\n').split('\n')
  if (wanted.length > 1 && wanted.at(-1) === '') wanted.pop()
  const height = Math.max(1, Math.min(wanted.length, MAX_REGION_LINES))
  // Trimmed line → the places it has in old_string (within the window height).
  const places = new Map<string, number[]>()
  wanted.slice(0, height).forEach((line, i) => {
    const key = line.trim()
    if (key) places.set(key, [...(places.get(key) ?? []), i])
  })
  const words = new Set(wanted.flatMap((line) => line.match(WORD) ?? []))
  if (words.size === 0 && places.size === 0) return undefined
  const lineScores: number[] = []
  const aligned = new Map<number, number>() // window start → aligned equal lines
  let index = 0
  for (let at = 0; at < text.length; index++) {
    const newline = text.indexOf('\n', at)
    const end = newline < 0 ? text.length : newline
    const line = text.slice(at, end)
    for (const i of places.get(line.trim()) ?? [])
      if (index - i >= 0) aligned.set(index - i, (aligned.get(index - i) ?? 0) + 2)
    const seen = new Set<string>()
    for (const word of line.match(WORD) ?? []) if (words.has(word)) seen.add(word)
    lineScores.push(words.size ? seen.size / words.size : 0)
    if (newline < 0) break
    at = newline + 1
  }
  let best = -1
  let bestScore = 0
  let window = 0
  for (let i = 0; i < lineScores.length; i++) {
    window += lineScores[i]!
    if (i >= height) window -= lineScores[i - height]!
    const start = Math.max(0, i - height + 1)
    const score = window + (aligned.get(start) ?? 0)
    if (score > bestScore + 1e-9) {
      bestScore = score
      best = start
    }
  }
  if (best < 0) return undefined
  return linesOf(text, best + 1, best + height)
}

const WORD = /[\p{L}\p{N}_]+/gu

/** An exact edit done on the bytes: the new bytes (BOM included), or the count and lines of several matches. */
export type ByteEditPlan =
  | { readonly kind: 'edited'; readonly bytes: Buffer; readonly count: number; readonly changes: readonly Change[] }
  | { readonly kind: 'ambiguous'; readonly lines: readonly number[]; readonly count: number }

/**
 * planEdit's first case without decoding the file: old_string found as given, in the bytes after `start` (the BOM),
 * and a new_string without line breaks (nothing to adapt). Undefined when that does not apply (no exact match, or a
 * line break in new_string): planEdit then decides on the text. UTF-8 is self-synchronising, so the byte matches are
 * the text's matches, and the result is the bytes planEdit's text would encode to.
 */
export function planEditBytes(bytes: Buffer, start: number, request: EditRequest): ByteEditPlan | undefined {
  if (/[\r\n]/.test(request.newString)) return undefined
  const needle = Buffer.from(request.oldString, 'utf8')
  const found: number[] = []
  for (let at = bytes.indexOf(needle, start); at >= 0; at = bytes.indexOf(needle, at + needle.length)) found.push(at)
  if (found.length === 0) return undefined
  if (found.length > 1 && !request.replaceAll) {
    return {
      kind: 'ambiguous',
      count: found.length,
      lines: byteLineNumbersAt(bytes, start, found.slice(0, MAX_LISTED_LINES)),
    }
  }
  const replacement = Buffer.from(request.newString, 'utf8')
  const pieces: Buffer[] = []
  const placed: number[] = []
  let from = 0
  let length = 0
  for (const at of found) {
    pieces.push(bytes.subarray(from, at), replacement)
    length += at - from
    placed.push(length)
    length += replacement.length
    from = at + needle.length
  }
  pieces.push(bytes.subarray(from))
  const result = Buffer.concat(pieces, length + bytes.length - from)
  // new_string has no line break: each change is on one line of the new file.
  const lines = byteLineNumbersAt(result, start, placed)
  return {
    kind: 'edited',
    bytes: result,
    count: found.length,
    changes: lines.map((line) => ({ firstLine: line, lastLine: line })),
  }
}

/** The 1-based line of each byte position (ascending), counting from `start`. */
function byteLineNumbersAt(bytes: Buffer, start: number, positions: readonly number[]): number[] {
  const lines: number[] = []
  let line = 1
  let at = start
  for (const position of positions) {
    for (let newline = bytes.indexOf(0x0a, at); newline >= 0 && newline < position; newline = bytes.indexOf(0x0a, at)) {
      line++
      at = newline + 1
    }
    lines.push(line)
  }
  return lines
}

/** Lines of a text or of its bytes, as the edit result shows them: how many, and line n (ascending n only). */
export interface LineSource {
  readonly total: number
  cursor(): (line: number) => string
}

export function textLines(text: string): LineSource {
  return {
    total: countLines(text),
    cursor: () =>
      forward(
        text.length,
        (at) => text.indexOf('\n', at),
        (from, to) => text.slice(from, to),
      ),
  }
}

/** The lines of UTF-8 bytes after `start` (the BOM), decoding only the lines asked for. */
export function byteLines(bytes: Buffer, start: number): LineSource {
  let count = 0
  for (let at = bytes.indexOf(0x0a, start); at >= 0; at = bytes.indexOf(0x0a, at + 1)) count++
  const total = bytes.length > start && bytes[bytes.length - 1] !== 0x0a ? count + 1 : count
  return {
    total,
    cursor: () =>
      forward(
        bytes.length,
        (at) => bytes.indexOf(0x0a, Math.max(at, start)),
        (from, to) => bytes.toString('utf8', Math.max(from, start), to),
      ),
  }
}

/** One forward pass over lines (`\r` before `\n` dropped), whatever the number of lines asked for. */
function forward(
  length: number,
  newlineFrom: (at: number) => number,
  slice: (from: number, to: number) => string,
): (line: number) => string {
  let line = 1
  let at = 0
  return (wanted) => {
    while (line < wanted) {
      const newline = newlineFrom(at)
      if (newline < 0) return ''
      at = newline + 1
      line++
    }
    const newline = newlineFrom(at)
    if (newline < 0) return slice(at, length)
    const text = slice(at, newline)
    return text.endsWith('\r') ? text.slice(0, -1) : text
  }
}
