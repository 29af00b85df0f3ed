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
