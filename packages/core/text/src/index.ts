/*
 * Text helpers every tool shares, once (docs/architecture.md#house-rules): cutting on a character boundary, escaping control
 * characters, the `(line truncated)` mark, decoding bytes that may not be UTF-8, naming a system error. Pure functions,
 * no dependencies beyond Node's own.
 * Sizes are UTF-8 bytes unless a name says characters (code points).
 */

import { homedir } from 'node:os'
import { join } from 'node:path'
import { getSystemErrorMap } from 'node:util'
import { charBoundary } from './boundaries.ts'

/** Most UTF-8 bytes of any one model argument that an error or a note repeats: enough to recognise it, never a flood. */
export const QUOTE_MAX_BYTES = 300

/** Follows a line that was cut short, so the reader knows the rest exists. */
export const TRUNCATED_MARK = ' (line truncated)'

/** `text`, with the truncated mark when it was cut. */
export function marked(cut: Cut): string {
  return cut.truncated ? cut.text + TRUNCATED_MARK : cut.text
}

/** A possibly shortened text, and whether it was shortened. */
export interface Cut {
  readonly text: string
  readonly truncated: boolean
}

/** `text` cut to at most `maxBytes` UTF-8 bytes, never inside a character (nor between a surrogate pair's halves). */
export function cutUtf8(text: string, maxBytes: number): Cut {
  const max = Math.max(0, Math.floor(maxBytes))
  // A UTF-16 code unit is at most 3 UTF-8 bytes: most texts are decided without encoding anything.
  if (text.length * 3 <= max) return { text, truncated: false }
  if (text.length <= max && Buffer.byteLength(text, 'utf8') <= max) return { text, truncated: false }
  // Past here the text is longer than `max` bytes. Every code unit is at least one byte, so the first `max` bytes
  // lie within the first `max` units: a long (minified) line is never encoded whole. A high surrogate ending that
  // slice starts a 4-byte character that cannot fit, so it goes too (alone it would encode as U+FFFD).
  let head = text.length > max ? text.slice(0, max) : text
  if (isHighSurrogate(head.charCodeAt(head.length - 1))) head = head.slice(0, -1)
  const bytes = Buffer.from(head, 'utf8')
  return { text: bytes.toString('utf8', 0, charBoundary(bytes, max)), truncated: true }
}

/** `bytes[start, end)` decoded lossily, cut to at most `maxBytes` of it on a character boundary; only that part is decoded. */
export function cutUtf8Bytes(bytes: Uint8Array, maxBytes: number, start = 0, end = bytes.length): Cut {
  const buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (end - start <= maxBytes) return { text: buffer.toString('utf8', start, end), truncated: false }
  const cut = charBoundary(buffer, start + Math.max(0, Math.floor(maxBytes)), start)
  return { text: buffer.toString('utf8', start, cut), truncated: true }
}

/** The first `max` characters (code points) of `text`: never half a surrogate pair. */
export function cutChars(text: string, max: number): Cut {
  if (text.length <= max) return { text, truncated: false }
  let index = 0
  for (let count = 0; count < max && index < text.length; count++) {
    index += isHighSurrogate(text.charCodeAt(index)) && isLowSurrogate(text.charCodeAt(index + 1)) ? 2 : 1
  }
  return index >= text.length ? { text, truncated: false } : { text: text.slice(0, index), truncated: true }
}

/**
 * `text` within `maxBytes` UTF-8 bytes: whole when it fits, else cut on a character boundary and ended with `…`
 * (the ellipsis counted). For quoting a model's argument in an error without repeating all of it.
 */
export function clip(text: string, maxBytes: number): string {
  const cut = cutUtf8(text, maxBytes)
  if (!cut.truncated) return text
  return `${cutUtf8(text, Math.max(0, maxBytes - ELLIPSIS_BYTES)).text}${ELLIPSIS}`
}

const ELLIPSIS = '…'
const ELLIPSIS_BYTES = 3

function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff
}

function isLowSurrogate(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff
}

/** UTF-8 with every invalid sequence shown as U+FFFD: bytes that are not UTF-8 are shown, never a failure. */
export function decodeLossy(bytes: Uint8Array, start = 0, end = bytes.length): string {
  const buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  return buffer.toString('utf8', start, end)
}

// C0 controls, DEL, C1 controls (U+009B is a one-character CSI on some terminals) and the Unicode line separators.
const CONTROL = /[\x00-\x1f\x7f-\x9f\u2028\u2029]/g
const CONTROL_BUT_TAB = /[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]/g
const ANY_CONTROL = /[\x00-\x1f\x7f-\x9f\u2028\u2029]/
const ANY_CONTROL_BUT_TAB = /[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]/

function escapeOne(char: string): string {
  switch (char) {
    case '\n':
      return '\\n'
    case '\r':
      return '\\r'
    case '\t':
      return '\\t'
  }
  const code = char.charCodeAt(0)
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`
}

export interface EscapeOptions {
  /** Leave tabs as they are (previews of code keep their indentation); otherwise a tab shows as `\t`. */
  readonly keepTab: boolean
}

/**
 * One line, no terminal escapes: control characters become `\n`, `\r`, `\t`, `\x1b`, `\u2028` and the like, so a
 * text shown to the model (or a terminal) is always one line and can never move the cursor or change colours.
 */
export function escapeControl(text: string, options: EscapeOptions): string {
  // The common case, a text with nothing to escape, costs one scan and no allocation — tab-indented code too, when
  // tabs are kept.
  if (!(options.keepTab ? ANY_CONTROL_BUT_TAB : ANY_CONTROL).test(text)) return text
  return text.replace(options.keepTab ? CONTROL_BUT_TAB : CONTROL, escapeOne)
}

export { charBoundary, completeLength, cutPrefixLength } from './boundaries.ts'
export { countLines, type HeadAndTail, type HeadAndTailOptions, headAndTail, headCut, tailCut } from './lines.ts'

/**
 * For a path that was not found: when the model wrote it with a leading `~` (which only a shell expands), what to
 * pass instead (at most QUOTE_MAX_BYTES of it); otherwise ''. Appended to the not-found reason.
 */
export function tildeHint(given: string): string {
  if (given !== '~' && !given.startsWith('~/')) return ''
  const home = homedir()
  return ` (a leading "~" is not expanded; the home directory is ${home}: pass ${clip(join(home, given.slice(1)), QUOTE_MAX_BYTES)})`
}

/**
 * `EACCES (permission denied)`: a system error as its code and meaning, without the path Node repeats in its message
 * (the caller names the path once, in its own words). Anything else is its message, clipped to QUOTE_MAX_BYTES.
 */
export function systemErrorReason(error: unknown): string {
  const errno = (error as NodeJS.ErrnoException | undefined)?.errno
  const known = typeof errno === 'number' ? getSystemErrorMap().get(errno) : undefined
  if (known) return `${known[0]} (${known[1]})`
  return clip(error instanceof Error ? error.message : String(error), QUOTE_MAX_BYTES)
}

/** What `fileKind` reads: a `Stats` or `Dirent` from node:fs. */
export interface KindOf {
  isFile(): boolean
  isDirectory(): boolean
  isSymbolicLink(): boolean
  isFIFO(): boolean
  isSocket(): boolean
  isCharacterDevice(): boolean
  isBlockDevice(): boolean
}

/** The kind of a file in words, for an error that says why a path was refused: `a FIFO`, `a character device`. */
export function fileKind(stats: KindOf): string {
  if (stats.isFile()) return 'a regular file'
  if (stats.isDirectory()) return 'a directory'
  if (stats.isSymbolicLink()) return 'a symbolic link'
  if (stats.isFIFO()) return 'a FIFO'
  if (stats.isSocket()) return 'a socket'
  if (stats.isCharacterDevice()) return 'a character device'
  if (stats.isBlockDevice()) return 'a block device'
  return 'a file of no known kind'
}
