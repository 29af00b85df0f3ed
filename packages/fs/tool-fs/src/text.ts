import type { ArgumentAliases } from '@deepseek-ai/dsh-tools'
import type { Static } from '@sinclair/typebox'
// The builders one by one, not the `Type` object: the bundle then keeps only these (docs/decisions/2026-12-01-start-up-schemas.md).
import * as Type from '@sinclair/typebox'
import { clip, escapeControl, TRUNCATED_MARK } from '@deepseek-ai/dsh-text'

/*
 * Everything the model reads from the read tool: prompt, description, schema, rows, footers, error messages.
 * Pure functions of their arguments, so every exact text is a unit test.
 */

export interface ReadCaps {
  /** Default and maximum lines per call. */
  readonly maxLines: number
  /** Most bytes of rows (each row with its newline) per call: what is left of the limit once the footer has room. */
  readonly maxBytes: number
  /** The byte limit the texts state: no result is longer (rows, blank line and footer together). */
  readonly limitBytes: number
  /** Longer lines are cut to this many characters (code points). */
  readonly maxLineChars: number
}

export const READ_PROMPT_ID = 'tool:read'
export const READ_PROMPT_ORDER = 100

export function readPrompt(caps: ReadCaps): string {
  return [
    "To look at a text file, use this server's read tool rather than shell commands such as cat, head, tail or sed.",
    `It shows up to ${caps.maxLines} lines (at most ${caps.limitBytes} bytes) per call as "N: <line>" rows, N being the line number in the file — the same numbers grep reports, so pass offset near a match to read around it.`,
    'The last line of the result says whether the file ended or which offset to continue with; a large file is read in pages, never all at once.',
    `Lines longer than ${caps.maxLineChars} characters are cut and marked "(line truncated)". A file that a result said it was saved to can be paged the same way.`,
  ].join('\n')
}

export function readDescription(caps: ReadCaps): string {
  return [
    'Read a UTF-8 text file as numbered rows "N: <line>" (1-based line numbers, matching grep).',
    `Reads up to ${caps.maxLines} lines and ${caps.limitBytes} bytes per call from offset; a footer says whether the file ended or gives the offset to continue with.`,
    `Lines over ${caps.maxLineChars} characters are cut. Directories, binary and non-UTF-8 files are refused with an error.`,
    'A PNG, JPEG, GIF or WebP file is returned as an image.',
  ].join(' ')
}

/**
 * Other clients' names for the file tools' arguments, meaning exactly ours (docs/model-surface.md#tools), so taken as ours: Claude
 * Code's and Gemini CLI's `file_path`, opencode's `filePath`, `oldString`, `newString`, `replaceAll`.
 */
export const READ_ALIASES = { file_path: 'path', filePath: 'path' } as const satisfies ArgumentAliases
export const WRITE_ALIASES = READ_ALIASES
export const EDIT_ALIASES = {
  ...READ_ALIASES,
  oldString: 'old_string',
  newString: 'new_string',
  replaceAll: 'replace_all',
} as const satisfies ArgumentAliases

export function readParameters(caps: ReadCaps) {
  return Type.Object(
    {
      path: Type.String({
        minLength: 1,
        description: 'The file to read, absolute or relative to the working directory.',
      }),
      offset: Type.Optional(Type.Integer({ minimum: 1, description: 'Line number to start at (1-based). Default 1.' })),
      limit: Type.Optional(
        Type.Integer({ minimum: 1, description: `How many lines to read. Default and maximum ${caps.maxLines}.` }),
      ),
    },
    { additionalProperties: false },
  )
}
export type ReadArgs = Static<ReturnType<typeof readParameters>>

export interface ReadRow {
  /** 1-based line number in the file. */
  readonly line: number
  /** The line without its terminator (and without a `\r` before the `\n`), already cut to the caps. */
  readonly text: string
  readonly truncated: boolean
}

/** How the page ended: the file ended (with its line count), or more lines follow (the line cap or the byte cap). */
export type ReadEnd =
  | { readonly kind: 'eof'; readonly totalLines: number }
  | { readonly kind: 'limit'; readonly totalLines?: number }
  | { readonly kind: 'bytes'; readonly totalLines?: number }

export interface ReadPage {
  readonly offset: number
  readonly rows: readonly ReadRow[]
  readonly end: ReadEnd
}

export { TRUNCATED_MARK }

/** One row as shown, without its newline. */
export function renderRow(row: ReadRow): string {
  return `${row.line}: ${row.text}${row.truncated ? TRUNCATED_MARK : ''}`
}

/** What comes after the rows: the file ended, or where to continue. */
export function renderFooter(page: ReadPage, caps: ReadCaps): string {
  const { end, rows } = page
  if (end.kind === 'eof') {
    return end.totalLines === 0
      ? '[empty file]'
      : `[end of file: ${end.totalLines} ${end.totalLines === 1 ? 'line' : 'lines'}]`
  }
  const next = (rows.at(-1)?.line ?? page.offset - 1) + 1
  const total =
    end.totalLines === undefined ? '' : `; the file has ${end.totalLines} ${end.totalLines === 1 ? 'line' : 'lines'}`
  return end.kind === 'bytes'
    ? `[more lines follow; this read stopped at its ${caps.limitBytes}-byte limit: continue with offset=${next}${total}]`
    : `[more lines follow: continue with offset=${next}${total}]`
}

/**
 * The caps for a result limit: the rows get what is left once the widest footer (the byte-cap one, at the largest
 * offset a call can reach) and the blank line before it have room, so rows + footer never pass `limitBytes`.
 */
export function capsWithin(limits: {
  maxLines: number
  maxBytes: number
  maxLineChars: number
  maxResultBytes: number
}): ReadCaps {
  const limitBytes = Math.min(limits.maxBytes, limits.maxResultBytes)
  const widest = renderFooter(
    { offset: Number.MAX_SAFE_INTEGER, rows: [], end: { kind: 'bytes' } },
    { maxLines: limits.maxLines, maxBytes: limitBytes, limitBytes, maxLineChars: limits.maxLineChars },
  )
  const rows = Math.min(limits.maxBytes, limits.maxResultBytes - Buffer.byteLength(widest) - 2)
  return { maxLines: limits.maxLines, maxBytes: rows, limitBytes, maxLineChars: limits.maxLineChars }
}

/** The whole result: the rows, a blank line, the footer (just the footer when there are no rows). */
export function render(page: ReadPage, caps: ReadCaps): string {
  const rows = page.rows.map(renderRow).join('\n')
  const whole = (footer: string) => (page.rows.length ? `${rows}\n\n${footer}` : footer)
  const text = whole(renderFooter(page, caps))
  // The line count is told when it fits within the limit; the rows were cut for the footer without it.
  if (page.end.kind === 'eof' || page.end.totalLines === undefined || Buffer.byteLength(text) <= caps.limitBytes)
    return text
  return whole(renderFooter({ ...page, end: { kind: page.end.kind } }, caps))
}

/** Longest piece of a path an error quotes: a huge `path` argument is named once, in part, never whole. */
export const MAX_QUOTED_PATH_BYTES = 300

/** A path as an error names it: one line (control characters escaped), at most MAX_QUOTED_PATH_BYTES. */
export function quotePath(path: string): string {
  return clip(escapeControl(path, { keepTab: false }), MAX_QUOTED_PATH_BYTES)
}

export const messages = {
  notFound: (path: string) => `file not found: ${quotePath(path)}`,
  image: (path: string, mimeType: string, bytes: number) => `Image ${quotePath(path)} (${mimeType}, ${bytes} bytes)`,
  imageTooLarge: (path: string, kind: string, bytes: number, maxBytes: number) =>
    `${quotePath(path)} is a ${kind} image of ${bytes} bytes, more than read's limit of ${maxBytes} bytes for images; make a smaller copy (for instance with bash: convert <file> -resize 50% /tmp/smaller.png) and read that`,
  didYouMean: (paths: readonly string[]) => {
    const quoted = paths.map(quotePath)
    const last = quoted.pop()!
    return `; did you mean ${quoted.length ? `${quoted.join(', ')} or ${last}` : last}?`
  },
  offsetPastEnd: (path: string, offset: number, totalLines: number) =>
    `offset ${offset} is past the end of ${quotePath(path)}: ${totalLines === 0 ? 'the file is empty' : `the file has ${totalLines} ${totalLines === 1 ? 'line' : 'lines'}`}`,
  directory: (path: string) => `${quotePath(path)} is a directory, not a file; use glob to list the files in it`,
  notRegular: (path: string, kind: string) =>
    `${quotePath(path)} is not a regular file (it is ${kind}); read only reads regular files`,
  binary: (path: string) =>
    `${quotePath(path)} looks binary (a NUL byte in its first 8 KiB); read only shows text files`,
  invalidUtf8: (path: string, line: number) =>
    `${quotePath(path)} is not valid UTF-8 text (line ${line}); read only shows UTF-8 text files`,
  readFailed: (path: string, reason: string) => `cannot read ${quotePath(path)}: ${reason}`,
  nulInPath: () => 'path must not contain a NUL character',
} as const
