const NEWLINE = 0x0a

/**
 * Splits a byte stream into lines (without their newline) for newline-delimited JSON-RPC, holding at most `maxBytes`
 * of an unfinished line: a longer line is dropped up to its newline and reported once, with its first bytes, so a
 * peer that never sends a newline cannot grow the buffer. Used by both ends of the stdio framing (the server's
 * `LineTransport`, the remote client's process transport).
 */
export class LineSplitter {
  private parts: Buffer[] = []
  private size = 0
  /** Dropping an over-long line until its newline. */
  private dropping = false

  /** `onLine` gets each line a chunk completes, `onTooLong` the first bytes of each line over the bound, once. */
  constructor(
    private readonly maxBytes: number,
    private readonly onLine: (line: Buffer) => void,
    private readonly onTooLong: (head: Buffer) => void,
  ) {}

  /** Feeds one chunk. */
  push(chunk: Buffer): void {
    const { onLine, onTooLong } = this
    let from = 0
    for (let newline = chunk.indexOf(NEWLINE); newline !== -1; newline = chunk.indexOf(NEWLINE, from)) {
      const piece = chunk.subarray(from, newline)
      from = newline + 1
      if (this.dropping) {
        this.dropping = false
        continue
      }
      if (this.size + piece.length > this.maxBytes) {
        onTooLong(this.parts[0] ?? piece)
        this.clear()
        continue
      }
      const line = this.size === 0 ? piece : Buffer.concat([...this.parts, piece])
      this.clear()
      onLine(line)
    }
    const rest = chunk.subarray(from)
    if (this.dropping || rest.length === 0) return
    if (this.size + rest.length > this.maxBytes) {
      onTooLong(this.parts[0] ?? rest)
      this.clear()
      this.dropping = true
      return
    }
    // Copied: the chunk's memory is the stream's to reuse once this returns.
    this.parts.push(Buffer.from(rest))
    this.size += rest.length
  }

  /** Forgets the unfinished line. */
  clear(): void {
    this.parts = []
    this.size = 0
  }
}
