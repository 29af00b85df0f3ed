import { type Static, Type } from '@sinclair/typebox'
import { capFooter, partialNote, showPath, type SpillOutcome } from './common-text.ts'
import { escapeControl } from './paths.ts'

export const GREP_PROMPT_ID = 'tool:grep'
export const GREP_PROMPT_ORDER = 104

export const GREP_PROMPT = [
  'To search file contents, use this server\'s grep tool rather than shell commands such as grep or rg.',
  'Its "Line N:" numbers are line numbers in the file: read a matched file (offset near N) to see the surrounding code.',
].join('\n')

export function grepDescription(maxMatches: number, maxLineBytes: number): string {
  return [
    'Search file contents with a regular expression (ripgrep\'s Rust regex syntax, e.g. "fn\\s+main" or "TODO|FIXME"; escape literal metacharacters such as "\\(" or "\\."). Matches are found within single lines.',
    'path is a directory to walk or a single file (default: the working directory). During a walk, files ignored by .gitignore or .ignore, hidden files and directories, and binary files are skipped; a file named in path is always searched.',
    'include limits the walk to files matching ONE glob, e.g. "*.py" or "*.{ts,tsx}".',
    `Prints "Found N matches" (N counts matching lines), then per file, in path order, its path and "Line <n>: <text>" rows. At most ${maxMatches} lines are shown; when there are more, the result says where the complete result was saved. Lines longer than ${maxLineBytes} bytes are cut and marked "(line truncated)".`,
  ].join(' ')
}

export const GrepParameters = Type.Object({
  pattern: Type.String({ minLength: 1, description: 'Regular expression to search for (Rust regex syntax), e.g. "class\\s+\\w+Error".' }),
  path: Type.Optional(Type.String({ minLength: 1, description: 'File or directory to search, absolute or relative to the working directory. Default: the working directory.' })),
  include: Type.Optional(Type.String({ minLength: 1, description: 'Only search files matching this one glob, e.g. "*.ts" or "*.{ts,tsx}". Not a comma list, not a "!" negation.' })),
}, { additionalProperties: false })
export type GrepArgs = Static<typeof GrepParameters>

export interface GrepLineValue {
  readonly line: number
  /** Without the line terminator, already cut to the byte cap; null when the line is not UTF-8. */
  readonly preview: string | null
  readonly truncated: boolean
}

export interface GrepFileValue {
  /** As shown (relative to the cwd or absolute), not yet escaped. */
  readonly path: string
  /** Ascending. */
  readonly lines: readonly GrepLineValue[]
}

/** What a grep call found, before it becomes text. */
export interface GrepValue {
  /** In path order. */
  readonly files: readonly GrepFileValue[]
  /** Matching lines in all files. */
  readonly total: number
  /** ripgrep's stderr when it exited 2 but found matches (some paths could not be read). */
  readonly warning?: string
  /** Set when `total` is over the page. */
  readonly spill?: SpillOutcome
}

export const NO_MATCHES = 'No matches found'
export const LINE_TRUNCATED = ' (line truncated)'
export const NOT_UTF8 = '(line is not valid UTF-8)'

export function foundHeader(shown: number, total: number): string {
  if (shown < total) return `Found ${shown} of ${total} matches`
  return total === 1 ? 'Found 1 match' : `Found ${total} matches`
}

export function lineRow(line: GrepLineValue): string {
  const text = line.preview === null ? NOT_UTF8 : escapeControl(line.preview, { keepTab: true }) + (line.truncated ? LINE_TRUNCATED : '')
  return `Line ${line.line}: ${text}`
}

/** The model-facing text: the header, at most `maxMatches` lines grouped by file, then the footer and notes. */
export function renderGrep(value: GrepValue, caps: { maxMatches: number }): string {
  if (value.total === 0) return value.warning === undefined ? NO_MATCHES : `${NO_MATCHES}\n\n${partialNote(value.warning)}`
  const shown = Math.min(value.total, caps.maxMatches)
  const blocks = [foundHeader(shown, value.total)]
  let left = shown
  for (const file of value.files) {
    if (left === 0) break
    const lines = file.lines.slice(0, left)
    left -= lines.length
    blocks.push(`${showPath(file.path)}\n${lines.map(lineRow).join('\n')}`)
  }
  if (shown < value.total) blocks.push(capFooter('grep', shown, value.total, 'matches', value.spill ?? { unsaved: 'it was not offered to a store' }))
  if (value.warning !== undefined) blocks.push(partialNote(value.warning))
  return blocks.join('\n\n')
}
