import type { Static } from '@sinclair/typebox'
import type { ArgumentAliases } from '@deepseek-ai/dsh-tools'
// The builders one by one, not the `Type` object: the bundle then keeps only these (docs/decisions/2026-12-01-start-up-schemas.md).
import * as Type from '@sinclair/typebox'
import { cutUtf8, escapeControl, TRUNCATED_MARK } from '@deepseek-ai/dsh-text'
import {
  capFooter,
  partialNote,
  quoteArg,
  showPath,
  stoppedNote,
  trailerBytes,
  utf8Bytes,
  withinBudget,
} from './common-text.ts'
import type {
  GrepCountValue,
  GrepFilesValue,
  GrepLineValue,
  GrepNotes,
  GrepQuery,
  GrepResultValue,
  GrepValue,
  GrepWindow,
  Page,
} from './values.ts'

export const GREP_PROMPT_ID = 'tool:grep'
export const GREP_PROMPT_ORDER = 104

export const GREP_PROMPT = [
  "To search file contents, use this server's grep tool rather than shell commands such as grep or rg.",
  'Its "Line N:" numbers are line numbers in the file: read a matched file (offset near N) to see the surrounding code.',
  'To learn only which files match, or how often, pass output_mode "files_with_matches" or "count" rather than listing every line.',
].join('\n')

export function grepDescription(caps: { maxMatches: number; maxLineBytes: number; maxResultBytes: number }): string {
  return [
    'Search file contents with a regular expression (ripgrep\'s Rust regex syntax, e.g. "fn\\s+main" or "TODO|FIXME"; escape literal metacharacters such as "\\(" or "\\."). Matches are found within single lines unless multiline is true.',
    'path is a directory to walk or a single file (default: the working directory). During a walk these are skipped: files and directories ignored by .gitignore, .ignore or .rgignore files (in the searched directories and their parents) or by git\'s exclude files (.git/info/exclude, the global core.excludesFile), the same inside and outside a git repository; hidden files and directories (names starting with "."), and binary files. A file named in path is always searched.',
    'include limits the walk to files matching ONE glob, e.g. "*.py" or "*.{ts,tsx}"; type to one of ripgrep\'s file types, e.g. "ts", "py", "rust".',
    `output_mode "content" (the default) prints "Found N matches" (N counts matching lines), then per file, in path order, its path and "Line <n>: <text>" rows; with context, before or after, every row reads "<n>: <text>" as read shows it, the lines around each match included, and groups that do not touch are separated by "--". "files_with_matches" prints the matching files, most recently modified first; "count" prints "<path>: <matching lines>" per file, in path order, after the totals.`,
    `At most ${caps.maxMatches} lines (or files) and ${caps.maxResultBytes} bytes are shown; when there are more, the result says where the complete result was saved, one match per line as "<path>:<line>: <text>", or pass head_limit and offset to page through it. Lines longer than ${caps.maxLineBytes} bytes are cut and marked "(line truncated)".`,
  ].join(' ')
}

const contextLines = (description: string) =>
  Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_CONTEXT, description }))

/** Most lines of context asked around a match: a page shows at most 30 000 bytes anyway. */
export const MAX_CONTEXT = 100

export const OUTPUT_MODES = ['content', 'files_with_matches', 'count'] as const
export type OutputMode = (typeof OUTPUT_MODES)[number]

export const GrepParameters = Type.Object(
  {
    pattern: Type.String({
      minLength: 1,
      description: 'Regular expression to search for (Rust regex syntax), e.g. "class\\s+\\w+Error".',
    }),
    path: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          'File or directory to search, absolute or relative to the working directory. Default: the working directory.',
      }),
    ),
    include: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          'Only search files matching this one glob, e.g. "*.ts" or "*.{ts,tsx}". Not a comma list, not a "!" negation.',
      }),
    ),
    type: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'Only search files of this ripgrep file type, e.g. "ts", "py", "rust", "go", "md".',
      }),
    ),
    output_mode: Type.Optional(
      Type.Unsafe<OutputMode>({
        type: 'string',
        enum: [...OUTPUT_MODES],
        description:
          '"content" (default): the matching lines; "files_with_matches": only the matching files, newest first; "count": matching lines per file.',
      }),
    ),
    context: contextLines('Lines to show before and after each match (content mode), as read shows them.'),
    before: contextLines('Lines to show before each match (content mode); overrides context for that side.'),
    after: contextLines('Lines to show after each match (content mode); overrides context for that side.'),
    case_insensitive: Type.Optional(Type.Boolean({ description: 'Match regardless of case.' })),
    multiline: Type.Optional(
      Type.Boolean({ description: 'Let a match span lines: "." then also matches a newline, and so does "\\n".' }),
    ),
    head_limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        description: 'Show at most this many matches (files, in the other modes), from offset on; nothing is saved.',
      }),
    ),
    offset: Type.Optional(
      Type.Integer({
        minimum: 0,
        description: 'Skip this many matches (files, in the other modes) first, to page through a result. Default 0.',
      }),
    ),
  },
  { additionalProperties: false },
)
export type GrepArgs = Static<typeof GrepParameters>

/**
 * Other clients' grep arguments: Claude Code's -i, -A, -B, -C, -n and glob, gemini-cli's case_insensitive (now ours).
 * A name is the argument it means; -n has no argument of ours to be (rows are always numbered).
 */
export const GREP_ALIASES = {
  '-i': 'case_insensitive',
  '-A': 'after',
  '-B': 'before',
  '-C': 'context',
  '-n': { ignore: true },
  glob: 'include',
} as const satisfies ArgumentAliases

export interface GrepCaps {
  readonly maxMatches: number
  /** No text of the result exceeds this many UTF-8 bytes. */
  readonly maxBytes: number
}

export const NO_MATCHES = 'No matches found'
export const NOT_UTF8 = '(line is not valid UTF-8)'

/**
 * The ignore files ripgrep could not use, whose rules the search was run again without (see skippedIgnoreFiles):
 * one sentence each, saying what the file is and which rules were left out.
 */
export function skippedIgnoreNote(notes: readonly string[]): string {
  const one = notes.length === 1
  return `[${notes.map((note) => quoteArg(note)).join('; ')}. Files those rules would hide were searched; fix or remove ${one ? 'that file' : 'those files'} to have ${one ? 'its' : 'their'} rules apply.]`
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`

export function foundHeader(shown: number, total: number): string {
  if (shown < total) return `Found ${shown} of ${total} matches`
  return total === 1 ? 'Found 1 match' : `Found ${total} matches`
}

export function filesHeader(shown: number, total: number): string {
  if (shown < total) return `Found ${shown} of ${total} files`
  return `Found ${plural(total, 'file', 'files')}`
}

export function countHeader(matches: number, files: number): string {
  return `Found ${plural(matches, 'match', 'matches')} in ${plural(files, 'file', 'files')}`
}

/**
 * The texts of a line's rows: one, or one per line of a multiline match (a `\r` before each break left out), each
 * escaped; the last marked when the preview was cut.
 */
function rowTexts(line: GrepLineValue): string[] {
  if (line.preview === null) return [NOT_UTF8]
  const parts =
    line.multiline === true ? line.preview.split('\n').map((part) => part.replace(/\r$/, '')) : [line.preview]
  const texts = parts.map((part) => escapeControl(part, { keepTab: true }))
  if (line.truncated) texts[texts.length - 1] += TRUNCATED_MARK
  return texts
}

/** A matching line as the default layout shows it: `Line <n>: <text>` (a row per line of a multiline match). */
export function lineRow(line: GrepLineValue): string {
  return rowTexts(line)
    .map((text, i) => `Line ${line.line + i}: ${text}`)
    .join('\n')
}

/** A line as read shows it, `<n>: <text>`: the layout with context, where a match and the lines around it alike. */
export function readRow(line: GrepLineValue): string {
  return rowTexts(line)
    .map((text, i) => `${line.line + i}: ${text}`)
    .join('\n')
}

/** The separator between groups of rows that do not touch (with context). */
export const GROUP_SEPARATOR = '--'

// Characters that make a regex differ from the same text searched literally ("." matches itself too).
const SPECIAL = /[()[\]{}+*?|^$]/
const ESCAPABLE = /[()[\]{}+*?|^$.]/g

/**
 * For a pattern that found nothing: when it holds regex metacharacters and no escape at all (so it reads as text
 * meant literally, such as `isEspree(parser)`), one line saying so and the escaped form. Otherwise undefined. The
 * tool shows it only when a literal search of the same text does match (GrepValue.literalMatches).
 */
export function literalHint(pattern: string): string | undefined {
  if (pattern.includes('\\') || !SPECIAL.test(pattern)) return undefined
  const special = [...new Set(pattern.match(ESCAPABLE))]
  const what =
    special.length === 1
      ? `${special[0]} is a special character, not literal text. To match it literally, escape it`
      : `${special.join(' ')} are special characters, not literal text. To match them literally, escape each`
  return `[The pattern is a regular expression, in which ${what} with a backslash: ${quoteArg(pattern.replace(ESCAPABLE, '\\$&'))}]`
}

function notes(value: GrepNotes & { readonly total: number }): string[] {
  const out: string[] = []
  if (value.total === 0 && value.literalMatches === true) {
    const hint = literalHint(value.query.pattern)
    if (hint !== undefined) out.push(hint)
  }
  if (value.skippedIgnoreFiles !== undefined) out.push(skippedIgnoreNote(value.skippedIgnoreFiles))
  if (value.stoppedAfterMs !== undefined) out.push(stoppedNote('grep', value.stoppedAfterMs))
  if (value.warning !== undefined) out.push(partialNote(value.warning))
  return out
}

/**
 * The footer of a page the model asked for (offset, head_limit): which entries it shows and the offset of the next
 * page, if any. Nothing is saved for such a call.
 */
export function windowFooter(noun: 'matches' | 'files', offset: number, shown: number, total: number): string {
  if (shown === 0) return `[offset ${offset} is past the end: there are ${total} ${noun}; pass a smaller offset.]`
  const next = offset + shown < total ? ` To see more, pass offset=${offset + shown}.` : ''
  return `[Showing ${noun} ${offset + 1}–${offset + shown} of ${total}.${next}]`
}

/** windowFooter at its widest for a total: what a page reserves for it. */
function widestWindowFooter(noun: 'matches' | 'files', total: number): string {
  return `[Showing ${noun} ${total}–${total} of ${total}. To see more, pass offset=${total}.]`
}

/** Whether a window leaves out some of `total` entries (a first page that holds them all is the whole result). */
function cuts(window: GrepWindow | undefined, total: number): boolean {
  return window !== undefined && (window.offset > 0 || window.limit < total)
}

/** Any mode's whole result, or its page. */
export function renderGrep(value: GrepResultValue, caps: GrepCaps): Page {
  if (value.mode === 'files_with_matches') return pageFiles(value, caps)
  if (value.mode === 'count') return pageCounts(value, caps)
  return pageGrep(value, caps)
}

/** Any mode's whole result when it fits the page (count and bytes) and no window cuts it; else undefined. */
export function wholeResult(value: GrepResultValue, caps: GrepCaps): string | undefined {
  if (value.mode === 'files_with_matches')
    return wholeList(value, value.paths.map(showPath), filesHeader(value.total, value.total), caps)
  if (value.mode === 'count')
    return wholeList(value, value.counts.map(countRow), countHeader(value.matches, value.total), caps)
  return wholeGrep(value, caps)
}

/** A file's rows in the content layout: `Line <n>:` rows, or read rows with `--` between groups that do not touch. */
function fileRows(
  value: GrepValue,
  lines: readonly GrepLineValue[],
): { text: string; match: boolean; line?: GrepLineValue }[] {
  const rows: { text: string; match: boolean; line?: GrepLineValue }[] = []
  let end = -1
  for (const line of lines) {
    const text = value.around === undefined ? lineRow(line) : readRow(line)
    if (value.around !== undefined && end !== -1 && line.line > end + 1)
      rows.push({ text: GROUP_SEPARATOR, match: false })
    rows.push({ text, match: line.context !== true, line })
    end = line.line + (line.multiline === true && line.preview !== null ? line.preview.split('\n').length - 1 : 0)
  }
  return rows
}

/** The whole result as its page shows it, when every match fits the page (count and bytes); else undefined. */
export function wholeGrep(value: GrepValue, caps: GrepCaps): string | undefined {
  if (value.total === 0) return withinBudget([NO_MATCHES, ...notes(value)].join('\n\n'), caps.maxBytes)
  if (value.total > caps.maxMatches || cuts(value.window, value.total)) return undefined
  const whole = [
    foundHeader(value.total, value.total),
    ...value.files.map(
      (file) =>
        `${showPath(file.path)}\n${fileRows(value, file.lines)
          .map((row) => row.text)
          .join('\n')}`,
    ),
    ...notes(value),
  ].join('\n\n')
  return utf8Bytes(whole) <= caps.maxBytes ? whole : undefined
}

/**
 * The inline page: the header, then matches grouped by file until `maxMatches` rows or `maxBytes` of text (fewer
 * rows when lines are long), the footer, the notes. `complete` when every match is shown.
 */
export function pageGrep(value: GrepValue, caps: GrepCaps): Page {
  const whole = wholeGrep(value, caps)
  if (whole !== undefined) return { text: whole, complete: true }
  const after = notes(value)
  const { window } = value
  const spill = value.spill ?? { unsaved: 'it was not offered to a store' }
  const header = (shown: number) =>
    window === undefined ? foundHeader(shown, value.total) : foundHeader(value.total, value.total)
  const footer = (shown: number) =>
    window === undefined
      ? capFooter('grep', shown, value.total, 'matches', spill)
      : windowFooter('matches', window.offset, shown, value.total)
  const widest = window === undefined ? footer(value.total) : widestWindowFooter('matches', value.total)
  // Header and footer at their widest (the shown count has no more digits than the total).
  let room =
    caps.maxBytes - utf8Bytes(`Found ${value.total} of ${value.total} matches`) - trailerBytes([widest, ...after])
  const max = Math.min(caps.maxMatches, window?.limit ?? caps.maxMatches)
  const groups: string[] = []
  let shown = 0
  for (const file of value.files) {
    if (shown >= max) break
    const head = showPath(file.path)
    let cost = 2 + utf8Bytes(head)
    const rows: string[] = []
    let full = false
    for (const row of fileRows(value, file.lines)) {
      if (row.match && shown >= max) break
      let text = row.text
      if (cost + 1 + utf8Bytes(text) > room) {
        // Only the very first match is cut to fit, so that a page shows at least one; later ones wait for the file.
        const cut =
          shown === 0 && row.match && row.line !== undefined
            ? fitRow(row.line, value.around !== undefined, room - cost - 1)
            : undefined
        full = true
        if (cut === undefined) break
        text = cut
      }
      if (text === GROUP_SEPARATOR && rows.length === 0) continue
      rows.push(text)
      cost += 1 + utf8Bytes(text)
      if (row.match) shown++
      if (full) break
    }
    while (rows.length > 0 && rows[rows.length - 1] === GROUP_SEPARATOR) rows.pop()
    if (rows.length === 0) break
    groups.push(`${head}\n${rows.join('\n')}`)
    room -= cost
    if (full) break
  }
  const text = [header(shown), ...groups, footer(shown), ...after].join('\n\n')
  return { text: withinBudget(text, caps.maxBytes), complete: false }
}

/**
 * A match's (first) row cut so that it takes at most `room` bytes, marked; undefined when not even its number and
 * the mark fit, or the line is not UTF-8.
 */
function fitRow(line: GrepLineValue, readLayout: boolean, room: number): string | undefined {
  const prefix = readLayout ? `${line.line}: ` : `Line ${line.line}: `
  const left = room - utf8Bytes(prefix) - utf8Bytes(TRUNCATED_MARK)
  if (left < 0 || line.preview === null) return undefined
  const first = line.multiline === true ? (line.preview.split('\n')[0] as string).replace(/\r$/, '') : line.preview
  return prefix + cutUtf8(escapeControl(first, { keepTab: true }), left).text + TRUNCATED_MARK
}

function countRow(entry: { readonly path: string; readonly count: number }): string {
  return `${showPath(entry.path)}: ${entry.count}`
}

/** A list mode's whole result (header, rows, notes), when it fits and no window cuts it; else undefined. */
function wholeList(
  value: (GrepFilesValue | GrepCountValue) & { readonly total: number },
  rows: readonly string[],
  header: string,
  caps: GrepCaps,
): string | undefined {
  if (value.total === 0) return withinBudget([NO_MATCHES, ...notes(value)].join('\n\n'), caps.maxBytes)
  if (value.total > caps.maxMatches || rows.length < value.total || cuts(value.window, value.total)) return undefined
  const whole = [header, rows.join('\n'), ...notes(value)].join('\n\n')
  return utf8Bytes(whole) <= caps.maxBytes ? whole : undefined
}

function pageFiles(value: GrepFilesValue, caps: GrepCaps): Page {
  const rows = value.paths.map(showPath)
  const whole = wholeList(value, rows, filesHeader(value.total, value.total), caps)
  if (whole !== undefined) return { text: whole, complete: true }
  return pageList(
    value,
    rows,
    (shown) => (value.window === undefined ? filesHeader(shown, value.total) : filesHeader(value.total, value.total)),
    caps,
  )
}

function pageCounts(value: GrepCountValue, caps: GrepCaps): Page {
  const rows = value.counts.map(countRow)
  const header = countHeader(value.matches, value.total)
  const whole = wholeList(value, rows, header, caps)
  if (whole !== undefined) return { text: whole, complete: true }
  return pageList(value, rows, () => header, caps)
}

/** The page of a list mode: rows (one per file) until `maxMatches` or `maxBytes`, the footer, the notes. */
function pageList(
  value: GrepFilesValue | GrepCountValue,
  rows: readonly string[],
  header: (shown: number) => string,
  caps: GrepCaps,
): Page {
  const after = notes(value)
  const { window } = value
  const spill = value.spill ?? { unsaved: 'it was not offered to a store' }
  const footer = (shown: number) =>
    window === undefined
      ? capFooter('grep', shown, value.total, 'files', spill)
      : windowFooter('files', window.offset, shown, value.total)
  const widest = window === undefined ? footer(value.total) : widestWindowFooter('files', value.total)
  let room = caps.maxBytes - utf8Bytes(header(value.total)) - 2 - trailerBytes([widest, ...after])
  const max = Math.min(caps.maxMatches, window?.limit ?? caps.maxMatches)
  const shown: string[] = []
  for (const row of rows) {
    if (shown.length >= max) break
    const cost = utf8Bytes(row) + (shown.length === 0 ? 0 : 1)
    if (cost > room) break
    shown.push(row)
    room -= cost
  }
  const blocks = [
    header(shown.length),
    ...(shown.length === 0 ? [] : [shown.join('\n')]),
    footer(shown.length),
    ...after,
  ]
  return { text: withinBudget(blocks.join('\n\n'), caps.maxBytes), complete: false }
}

function where(query: GrepQuery): string {
  const { path, include, type } = query
  return `${include === undefined ? '' : ` include "${quoteArg(include)}"`}${type === undefined ? '' : ` type ${quoteArg(type)}`} in ${quoteArg(showPath(path))}`
}

function incomplete(value: GrepNotes): string {
  return value.stoppedAfterMs !== undefined || value.warning !== undefined
    ? " (incomplete: see the notes of the call's result)"
    : ''
}

/** The first line of a saved result: what was searched, how many lines matched, how the rows read. */
export function savedHeader(value: GrepValue): string {
  const lines = value.total === 1 ? '1 matching line' : `${value.total} matching lines`
  const around =
    value.around === undefined
      ? ''
      : `, with ${value.around.before} lines before and ${value.around.after} after each match`
  return `[grep "${quoteArg(value.query.pattern)}"${where(value.query)}: ${lines}${incomplete(value)}, one per line as <path>:<line>: <text>${around}]`
}

/** The first line of a saved files_with_matches result. */
export function savedFilesHeader(value: GrepFilesValue): string {
  return `[grep "${quoteArg(value.query.pattern)}"${where(value.query)}: ${plural(value.total, 'file', 'files')} with matches${incomplete(value)}, one per line, most recently modified first]`
}

/** The first line of a saved count result. */
export function savedCountHeader(value: GrepCountValue): string {
  return `[grep "${quoteArg(value.query.pattern)}"${where(value.query)}: ${plural(value.matches, 'matching line', 'matching lines')} in ${plural(value.total, 'file', 'files')}${incomplete(value)}, one file per line as <path>: <matching lines>]`
}

/** One row of a saved files_with_matches result, with its newline. */
export function savedFileRow(path: string): string {
  return `${showPath(path)}\n`
}

/** One row of a saved count result, with its newline. */
export function savedCountRow(entry: { readonly path: string; readonly count: number }): string {
  return `${countRow(entry)}\n`
}

/** The start of a saved row for a file: its shown path and a colon. */
export function savedRowPrefix(path: string): string {
  return `${showPath(path)}:`
}

/**
 * One row of the complete result as saved, with its newline: `<path>:<line>: <preview>` — after the header, files in
 * path order, so any page of it, read with offset and limit, or any grep of it, explains itself. A multiline match
 * is a row per line; a line around a match (context) reads the same.
 */
export function savedRow(prefix: string, line: GrepLineValue): string {
  let out = ''
  const texts = rowTexts(line)
  for (let i = 0; i < texts.length; i++) out += `${prefix}${line.line + i}: ${texts[i]}\n`
  return out
}

/** The most bytes savedUtf8Row writes for a line of `length` bytes, after `prefix`. */
export function savedUtf8RowBytes(prefix: Buffer, length: number): number {
  // The line number (at most 16 digits: a safe integer), `: `, the newline.
  return prefix.length + 16 + 2 + length + 1
}

/**
 * savedRow of a whole line (not cut) from its UTF-8, `bytes[start..end)`, written into `target` at `at` (room for
 * savedUtf8RowBytes); returns where the row ends. The same bytes as savedRow, no string made: -1 (what it copied
 * counts for nothing) when escapeControl would change the text (then savedRow is the way).
 */
export function savedUtf8Row(
  target: Buffer,
  at: number,
  prefix: Buffer,
  line: number,
  bytes: Buffer,
  start: number,
  end: number,
): number {
  let digits = 1
  for (let rest = line; rest >= 10; rest = Math.floor(rest / 10)) digits++
  // The text first, checked as it is copied: on the first byte it cannot take, nothing is counted as written.
  const text = at + prefix.length + digits + 2
  const end2 = copyUnescapedUtf8(bytes, start, end, target, text)
  if (end2 === -1) return -1
  prefix.copy(target, at)
  for (let rest = line, i = text - 3; i >= text - 2 - digits; i--, rest = Math.floor(rest / 10))
    target[i] = 0x30 + (rest % 10)
  target[text - 2] = 0x3a
  target[text - 1] = 0x20
  target[end2] = 0x0a
  return end2 + 1
}

/**
 * Copies `bytes[start..end)` to `target` at `to` if it is valid UTF-8 that escapeControl (tabs kept) leaves as it
 * is: no C0 control but tab, no DEL, no C1 control (C2 80–9F), no U+2028 or U+2029 (E2 80 A8–A9); returns where the
 * copy ends, or -1 (and what was copied means nothing) for anything else — invalid UTF-8 too, which a string would
 * hold as U+FFFD — which takes the way through a string. One pass: a native copy would need a view per row.
 */
function copyUnescapedUtf8(bytes: Buffer, start: number, end: number, target: Buffer, to: number): number {
  for (let i = start; i < end; i++) {
    const byte = bytes[i] as number
    if (byte >= 0x20 && byte < 0x7f) {
      target[to++] = byte
      continue
    }
    if (byte < 0x80) {
      if (byte !== 0x09) return -1
      target[to++] = byte
      continue
    }
    // A lead byte, the range its second byte must lie in, and how many bytes the character has.
    let low = 0x80
    let high = 0xbf
    let size: number
    if (byte >= 0xc2 && byte <= 0xdf) {
      size = 2
      if (byte === 0xc2) low = 0xa0
    } else if (byte >= 0xe0 && byte <= 0xef) {
      size = 3
      if (byte === 0xe0) low = 0xa0
      else if (byte === 0xed) high = 0x9f
      else if (byte === 0xe2 && bytes[i + 1] === 0x80 && ((bytes[i + 2] as number) & 0xfe) === 0xa8) return -1
    } else if (byte >= 0xf0 && byte <= 0xf4) {
      size = 4
      if (byte === 0xf0) low = 0x90
      else if (byte === 0xf4) high = 0x8f
    } else return -1
    if (i + size > end) return -1
    const second = bytes[i + 1] as number
    if (second < low || second > high) return -1
    for (let k = 2; k < size; k++) if (((bytes[i + k] as number) & 0xc0) !== 0x80) return -1
    for (let k = 0; k < size; k++) target[to++] = bytes[i + k] as number
    i += size - 1
  }
  return to
}

/** A `type` ripgrep does not know: some that it does, and the include glob that does the same. */
export function unknownTypeMessage(type: string, known: readonly string[]): string {
  const wanted = type.toLowerCase()
  const close = known.filter((name) => name.startsWith(wanted.slice(0, 2)) || wanted.startsWith(name))
  const common = ['ts', 'js', 'py', 'rust', 'go', 'java', 'c', 'cpp', 'md', 'json'].filter(
    (name) => known.length === 0 || known.includes(name),
  )
  const some = [...new Set([...close, ...common])].slice(0, 12)
  return `type "${quoteArg(type)}" is not one of ripgrep's file types; some that are: ${some.join(', ')}. Or pass include with a glob instead, e.g. "*.ts"`
}
