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
import type { GrepLineValue, GrepValue, Page } from './values.ts'

export const GREP_PROMPT_ID = 'tool:grep'
export const GREP_PROMPT_ORDER = 104

export const GREP_PROMPT = [
  "To search file contents, use this server's grep tool rather than shell commands such as grep or rg.",
  'Its "Line N:" numbers are line numbers in the file: read a matched file (offset near N) to see the surrounding code.',
].join('\n')

export function grepDescription(caps: { maxMatches: number; maxLineBytes: number; maxResultBytes: number }): string {
  return [
    'Search file contents with a regular expression (ripgrep\'s Rust regex syntax, e.g. "fn\\s+main" or "TODO|FIXME"; escape literal metacharacters such as "\\(" or "\\."). Matches are found within single lines.',
    'path is a directory to walk or a single file (default: the working directory). During a walk these are skipped: files and directories ignored by .gitignore, .ignore or .rgignore files (in the searched directories and their parents) or by git\'s exclude files (.git/info/exclude, the global core.excludesFile), the same inside and outside a git repository; hidden files and directories (names starting with "."), and binary files. A file named in path is always searched.',
    'include limits the walk to files matching ONE glob, e.g. "*.py" or "*.{ts,tsx}".',
    `Prints "Found N matches" (N counts matching lines), then per file, in path order, its path and "Line <n>: <text>" rows. At most ${caps.maxMatches} lines and ${caps.maxResultBytes} bytes are shown; when there are more, the result says where the complete result was saved, one match per line as "<path>:<line>: <text>". Lines longer than ${caps.maxLineBytes} bytes are cut and marked "(line truncated)".`,
  ].join(' ')
}

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
  },
  { additionalProperties: false },
)
export type GrepArgs = Static<typeof GrepParameters>

const CASE_HINT = 'there is no case-insensitive flag: start the pattern with (?i) instead, e.g. "(?i)todo"'

/** Other clients' grep arguments (Claude Code's -i, output_mode, head_limit, glob; gemini-cli's case_insensitive). */
export const GREP_ALIASES = {
  '-i': { hint: CASE_HINT },
  case_insensitive: { hint: CASE_HINT },
  glob: 'include',
  output_mode: {
    hint: 'grep always prints each matching line under its file ("Line N: text"); for the names of the files alone, use the paths it prints, or glob',
  },
  head_limit: {
    hint: 'there is no result limit to pass: the first page is shown and the complete result is saved, to page through with read',
  },
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

export function foundHeader(shown: number, total: number): string {
  if (shown < total) return `Found ${shown} of ${total} matches`
  return total === 1 ? 'Found 1 match' : `Found ${total} matches`
}

function previewText(line: GrepLineValue): string {
  return line.preview === null
    ? NOT_UTF8
    : escapeControl(line.preview, { keepTab: true }) + (line.truncated ? TRUNCATED_MARK : '')
}

export function lineRow(line: GrepLineValue): string {
  return `Line ${line.line}: ${previewText(line)}`
}

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

function notes(value: GrepValue): string[] {
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

/** The whole result as its page shows it, when every match fits the page (count and bytes); else undefined. */
export function wholeGrep(value: GrepValue, caps: GrepCaps): string | undefined {
  if (value.total === 0) return withinBudget([NO_MATCHES, ...notes(value)].join('\n\n'), caps.maxBytes)
  if (value.total > caps.maxMatches) return undefined
  const whole = [
    foundHeader(value.total, value.total),
    ...value.files.map((file) => `${showPath(file.path)}\n${file.lines.map(lineRow).join('\n')}`),
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
  const spill = value.spill ?? { unsaved: 'it was not offered to a store' }
  // Header and footer at their widest (the shown count has no more digits than the total).
  const footer = (shown: number) => capFooter('grep', shown, value.total, 'matches', spill)
  let room =
    caps.maxBytes -
    utf8Bytes(`Found ${value.total} of ${value.total} matches`) -
    trailerBytes([footer(value.total), ...after])
  const groups: string[] = []
  let shown = 0
  for (const file of value.files) {
    if (shown >= caps.maxMatches) break
    const head = showPath(file.path)
    let cost = 2 + utf8Bytes(head)
    const rows: string[] = []
    for (const line of file.lines) {
      if (shown >= caps.maxMatches) break
      let row = lineRow(line)
      if (cost + 1 + utf8Bytes(row) > room) {
        // Only the very first match is cut to fit, so that a page shows at least one; later ones wait for the file.
        const cut = shown === 0 ? fitRow(line, room - cost - 1) : undefined
        if (cut === undefined) break
        row = cut
      }
      rows.push(row)
      cost += 1 + utf8Bytes(row)
      shown++
    }
    if (rows.length === 0) break
    groups.push(`${head}\n${rows.join('\n')}`)
    room -= cost
    if (rows.length < file.lines.length) break
  }
  const text = [foundHeader(shown, value.total), ...groups, footer(shown), ...after].join('\n\n')
  return { text: withinBudget(text, caps.maxBytes), complete: false }
}

/** A row cut so that it takes at most `room` bytes, marked; undefined when not even the mark fits. */
function fitRow(line: GrepLineValue, room: number): string | undefined {
  const prefix = `Line ${line.line}: `
  const left = room - utf8Bytes(prefix) - utf8Bytes(TRUNCATED_MARK)
  if (left < 0 || line.preview === null) return undefined
  return prefix + cutUtf8(escapeControl(line.preview, { keepTab: true }), left).text + TRUNCATED_MARK
}

/** The first line of a saved result: what was searched, how many lines matched, how the rows read. */
export function savedHeader(value: GrepValue): string {
  const { pattern, path, include } = value.query
  const where = `${include === undefined ? '' : ` include "${quoteArg(include)}"`} in ${quoteArg(showPath(path))}`
  const incomplete =
    value.stoppedAfterMs !== undefined || value.warning !== undefined
      ? " (incomplete: see the notes of the call's result)"
      : ''
  const lines = value.total === 1 ? '1 matching line' : `${value.total} matching lines`
  return `[grep "${quoteArg(pattern)}"${where}: ${lines}${incomplete}, one per line as <path>:<line>: <text>]`
}

/** The start of a saved row for a file: its shown path and a colon. */
export function savedRowPrefix(path: string): string {
  return `${showPath(path)}:`
}

/**
 * One row of the complete result as saved, with its newline: `<path>:<line>: <preview>` — after the header, files in
 * path order, so any page of it, read with offset and limit, or any grep of it, explains itself.
 */
export function savedRow(prefix: string, line: GrepLineValue): string {
  return `${prefix}${line.line}: ${previewText(line)}\n`
}
