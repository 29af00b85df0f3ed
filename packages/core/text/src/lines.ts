import { charBoundary, cutPrefixLength } from './boundaries.ts'

/*
 * Where a head or a tail of a long text ends or starts when it must fit a byte room: on a line boundary whenever a
 * whole line fits, else (if the caller allows a piece of a line) on a character boundary. Shared by every renderer
 * that shows head + marker + tail (the spill policy, bash output).
 */

const NEWLINE = 0x0a

/** End of a head of at most `room` bytes: after the last whole line that fits; else `partial` ? a character boundary : 0. */
export function headCut(bytes: Uint8Array, room: number, partial: boolean): number {
  const limit = Math.min(room, bytes.length)
  if (limit <= 0) return 0
  const newline = bytes.lastIndexOf(NEWLINE, limit - 1)
  if (newline >= 0) return newline + 1
  return partial ? charBoundary(bytes, limit) : 0
}

/**
 * Start of a tail of at most `room` bytes: the first whole line that fits; else `partial` ? a character boundary :
 * the end. `startsLine`: byte 0 begins a line (false for a kept tail of a stream whose start was dropped).
 */
export function tailCut(bytes: Uint8Array, room: number, partial: boolean, startsLine = true): number {
  const total = bytes.length
  if (room <= 0) return total
  const earliest = total - room
  if (earliest <= 0 && startsLine) return 0
  const newline = bytes.indexOf(NEWLINE, Math.max(earliest - 1, 0))
  if (newline >= 0 && newline + 1 < total) return newline + 1
  if (!partial) return total
  const start = Math.max(earliest, 0)
  return start + cutPrefixLength(bytes, start)
}

function countNewlines(bytes: Uint8Array, start: number, end: number): number {
  let count = 0
  for (let at = bytes.indexOf(NEWLINE, start); at >= 0 && at < end; at = bytes.indexOf(NEWLINE, at + 1)) count++
  return count
}

/** Lines in `bytes[start, end)`: a last line without a newline counts. */
export function countLines(bytes: Uint8Array, start = 0, end = bytes.length): number {
  if (end <= start) return 0
  return countNewlines(bytes, start, end) + (bytes[end - 1] === NEWLINE ? 0 : 1)
}

/** Where a head + marker + tail layout cuts, and which lines the marker says were left out. */
export interface HeadAndTail {
  /** The head is `head[0, headEnd)`. */
  readonly headEnd: number
  /** The tail is `tail[tailStart, end)`. */
  readonly tailStart: number
  /** First and last line (1-based) not shown whole. */
  readonly firstCut: number
  readonly lastCut: number
}

export interface HeadAndTailOptions {
  /** Bytes for head and tail together (the marker's own room already taken off). */
  readonly room: number
  /** Bytes the head gets first; the tail gets the rest, then the head whatever the tail left. */
  readonly headShare: number
  /** Lines of the whole text, as the marker counts them. */
  readonly totalLines: number
  /** `head` and `tail` are the same bytes, the whole text (else a kept head and tail of a longer stream). */
  readonly whole: boolean
}

/**
 * The one head + marker + tail cut: the head takes its share in whole lines, the tail takes the rest, then the
 * head whatever the tail left. A part is cut inside a line only when no whole line fits and it has a share of its
 * own, so leftovers never show as stray fragments. When `whole`, head and tail never overlap.
 */
export function headAndTail(head: Uint8Array, tail: Uint8Array, options: HeadAndTailOptions): HeadAndTail {
  const { room, headShare, totalLines, whole } = options
  const tailStart = tailCut(tail, room - headCut(head, headShare, headShare > 0), room > headShare, whole)
  const tailBytes = tail.length - tailStart
  const headEnd = headCut(head, room - tailBytes, headShare > 0)
  const firstCut = countNewlines(head, 0, headEnd) + 1
  const tailLines = countLines(tail, tailStart)
  const atLineStart = (whole && tailStart === 0) || tail[tailStart - 1] === NEWLINE
  const tailWholeLines = atLineStart ? tailLines : Math.max(tailLines - 1, 0)
  return { headEnd, tailStart, firstCut, lastCut: Math.max(firstCut, totalLines - tailWholeLines) }
}
