import { countLines, headAndTail } from '@deepseek-ai/dsh-text'

/*
 * Output streams within a byte budget: a long stream shows its head and its tail, cut at line boundaries, with one
 * marker line between them that says what was left out and where the full output is. Pure: every exact text is a
 * unit test. Sizes are UTF-8 bytes.
 */

/** One stream as the renderer sees it. */
export interface StreamSource<N extends string = string> {
  /** Which stream (`stdout`, `stderr`): how a caller learns which were cut. */
  readonly name: N
  /** The whole stream when `complete`; else its kept first part (may be empty, may end mid-line). */
  readonly head: string
  /** The whole stream when `complete`; else its kept last part (starts mid-line, as far as anyone knows). */
  readonly tail: string
  readonly complete: boolean
  /** Bytes of the whole stream (for a complete stream, the text's own size is used). */
  readonly totalBytes: number
  /** Lines of the whole stream; for a complete stream they are counted from the text. */
  readonly totalLines: number | undefined
  /** The file holding the whole stream, if one exists. */
  readonly spillPath: string | undefined
  /**
   * True when the marker can name line numbers of the full output (a command's whole stream); false for a piece of
   * a stream (a `bash_output` increment), whose marker counts the lines instead.
   */
  readonly numbered: boolean
}

/** What a marker says was left out. */
export interface CutFacts {
  /** First and last line not shown whole (1-based; in the full output when `numbered`). */
  readonly firstLine: number
  readonly lastLine: number
  readonly totalLines: number | undefined
  readonly bytes: number
  readonly totalBytes: number
  readonly spillPath: string | undefined
  readonly numbered: boolean
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`

/** The one line between head and tail. */
export function cutMarker(cut: CutFacts): string {
  const { firstLine, lastLine, totalLines, bytes } = cut
  let what: string
  if (totalLines === undefined) what = `${plural(bytes, 'byte')}`
  else if (!cut.numbered) what = `${plural(lastLine - firstLine + 1, 'line')} (${plural(bytes, 'byte')})`
  else
    what = `${firstLine === lastLine ? `line ${firstLine}` : `lines ${firstLine}-${lastLine}`} of ${totalLines} (${plural(bytes, 'byte')})`
  const where =
    cut.spillPath !== undefined
      ? `full output: ${cut.spillPath}`
      : `the full output (${plural(cut.totalBytes, 'byte')}) was not kept: redirect it to a file to keep it`
  return `[output cut: ${what} left out; ${where}]`
}

/** Bytes the stream takes when shown whole (its final newline is dropped: the next line break comes from the join). */
export function wholeSize(source: StreamSource): number {
  if (!source.complete) return Number.POSITIVE_INFINITY
  const size = Buffer.byteLength(source.head)
  return source.head.endsWith('\n') ? size - 1 : size
}

function dropFinalNewline(text: string): string {
  return text.endsWith('\n') ? text.slice(0, -1) : text
}

/**
 * The stream's lines (joined with newlines, without its final newline) in at most `room` bytes: the whole stream
 * when it fits, else head + marker + tail. Half the room goes to the head first, the tail gets the rest, then the
 * head whatever the tail left (whole lines). A part is cut inside a line only when no whole line of it fits. If
 * even the marker does not fit, the marker alone is returned: where the output is must survive.
 */
export function fitStream(source: StreamSource, room: number): { lines: string[]; cut: boolean } {
  if (wholeSize(source) <= room) return { lines: [dropFinalNewline(source.head)], cut: false }
  const head = Buffer.from(source.head, 'utf8')
  const tail = source.complete ? head : Buffer.from(source.tail, 'utf8')
  const totalBytes = source.complete ? head.length : source.totalBytes
  const totalLines = source.complete ? countLines(head) : source.totalLines
  const facts = { totalLines, totalBytes, spillPath: source.spillPath, numbered: source.numbered }
  // Every number in the marker is at most its widest value: reserve that, and the two line breaks around it.
  const n = totalLines ?? 0
  const widest = Math.max(
    Buffer.byteLength(cutMarker({ ...facts, firstLine: n, lastLine: n + 1, bytes: totalBytes })),
    Buffer.byteLength(cutMarker({ ...facts, firstLine: 1, lastLine: n, bytes: totalBytes })),
  )
  const space = room - widest - 2
  if (space <= 0) {
    return {
      lines: [cutMarker({ ...facts, firstLine: 1, lastLine: Math.max(totalLines ?? 1, 1), bytes: totalBytes })],
      cut: true,
    }
  }
  // A complete stream's head and tail are views of the same bytes: together they stay under its size, never overlap.
  const { headEnd, tailStart, firstCut, lastCut } = headAndTail(head, tail, {
    room: space,
    headShare: Math.floor(space / 2),
    totalLines: totalLines ?? 0,
    whole: source.complete,
  })
  const tailBytes = tail.length - tailStart
  const bytes = Math.max(totalBytes - headEnd - tailBytes, 0)

  const lines: string[] = []
  if (headEnd > 0) lines.push(dropFinalNewline(head.toString('utf8', 0, headEnd)))
  lines.push(cutMarker({ ...facts, firstLine: firstCut, lastLine: lastCut, bytes }))
  if (tailBytes > 0) lines.push(dropFinalNewline(tail.toString('utf8', tailStart)))
  return { lines, cut: true }
}

/** A part of a result: a fixed line (a header, a marker) or a stream that shares the room left by the fixed parts. */
export type Part<N extends string = string> = string | StreamSource<N>

/**
 * Joins the parts with newlines in at most `budget` bytes: fixed parts as they are, streams within the room left by
 * them. A stream that needs less than an even share gives the rest to the others. Returns which streams were cut.
 */
export function layout<N extends string>(parts: readonly Part<N>[], budget: number): { text: string; cut: N[] } {
  const streams = parts.filter((part): part is StreamSource<N> => typeof part !== 'string')
  const fixed = parts.reduce((sum, part) => sum + (typeof part === 'string' ? Buffer.byteLength(part) : 0), 0)
  let room = budget - fixed - Math.max(parts.length - 1, 0)
  const shares = new Map<StreamSource<N>, number>()
  // Water-filling: the smallest need first; each takes what it needs or an even share of what is left.
  const byNeed = [...streams].sort((a, b) => wholeSize(a) - wholeSize(b))
  byNeed.forEach((stream, index) => {
    const share = Math.min(wholeSize(stream), Math.floor(room / (byNeed.length - index)))
    shares.set(stream, share)
    room -= share
  })
  const cut: N[] = []
  const lines: string[] = []
  for (const part of parts) {
    if (typeof part === 'string') {
      lines.push(part)
      continue
    }
    const fitted = fitStream(part, shares.get(part) ?? 0)
    if (fitted.cut) cut.push(part.name)
    lines.push(...fitted.lines)
  }
  return { text: lines.join('\n'), cut }
}
