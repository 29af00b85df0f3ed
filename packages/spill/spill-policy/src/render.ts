import { countLines, headAndTail } from '@deepseek-ai/dsh-text'

/*
 * The inline page of a spilled result: head + notice + tail within a byte cap. Pure: every exact text is a unit test.
 * Sizes are UTF-8 bytes; cuts fall on line boundaries when a whole line fits, and never inside a character.
 */

export interface InlineCaps {
  /** The page, notice included, is at most this many UTF-8 bytes (unless the notice alone is longer). */
  readonly maxInlineBytes: number
  /** Share of the room left after the notice that goes to the head first (0…1); the tail gets the rest. */
  readonly headRatio: number
}

export interface SpilledAt {
  readonly locator: string
  readonly retrievalHint: string
}

export interface NoticeFacts {
  /** First and last line (1-based) not shown in full; lines as `read` counts them. */
  readonly firstCut: number
  readonly lastCut: number
  readonly totalLines: number
  readonly totalBytes: number
  readonly saved: SpilledAt
}

export function renderNotice(facts: NoticeFacts): string {
  const { firstCut, lastCut, totalLines, totalBytes, saved } = facts
  const cut =
    firstCut === lastCut
      ? `line ${firstCut} of ${totalLines} is cut`
      : `lines ${firstCut}-${lastCut} of ${totalLines} are cut`
  return `[Output too long: ${cut} here. The complete output (${totalBytes} bytes) is saved at ${saved.locator}. ${saved.retrievalHint}]`
}

const NEWLINE = 0x0a

/** Replaces `text` (assumed longer than the cap) by its head, a notice naming `saved`, and its tail. */
export function renderInline(text: string, saved: SpilledAt, caps: InlineCaps): string {
  const bytes = Buffer.from(text, 'utf8')
  const total = bytes.length
  const totalLines = countLines(bytes)
  // The notice's numbers are all ≤ totalLines, so a notice with every number at totalLines is the longest it gets;
  // 2 more bytes for the newline after a cut head line and the one before the tail.
  const widest = renderNotice({ firstCut: totalLines, lastCut: totalLines + 1, totalLines, totalBytes: total, saved })
  const room = Math.min(caps.maxInlineBytes, total - 1) - Buffer.byteLength(widest) - 2
  if (room <= 0)
    return renderNotice({ firstCut: 1, lastCut: Math.max(1, totalLines), totalLines, totalBytes: total, saved })

  const headShare = Math.floor(room * caps.headRatio)
  const { headEnd, tailStart, firstCut, lastCut } = headAndTail(bytes, bytes, {
    room,
    headShare,
    totalLines,
    whole: true,
  })
  const headPartial = headEnd > 0 && bytes[headEnd - 1] !== NEWLINE

  let page = bytes.toString('utf8', 0, headEnd)
  if (headPartial) page += '\n'
  page += renderNotice({ firstCut, lastCut, totalLines, totalBytes: total, saved })
  if (tailStart < total) page += `\n${bytes.toString('utf8', tailStart, total)}`
  return page
}
