/** What a buffer holds before its first bytes (most children write little or nothing): one, never written to. */
const EMPTY = Buffer.alloc(0)

/**
 * The last `capacity` bytes of a stream, in a ring that grows (by doubling) up to `capacity` and never beyond:
 * memory is bounded by the cap whatever passes through, and old bytes are simply overwritten.
 */
export class TailBuffer {
  private ring: Buffer
  /** Ring index of the oldest held byte. */
  private head = 0
  private held = 0
  /** Bytes pushed since the start of the stream. */
  total = 0

  constructor(readonly capacity: number) {
    // Allocated on the first bytes.
    this.ring = EMPTY
  }

  /** Absolute stream offset of the oldest held byte. */
  get start(): number {
    return this.total - this.held
  }

  push(chunk: Uint8Array): void {
    this.total += chunk.length
    const cap = this.capacity
    if (cap === 0 || chunk.length === 0) return
    if (chunk.length >= cap) {
      if (this.ring.length < cap) this.ring = Buffer.allocUnsafe(cap)
      this.ring.set(chunk.subarray(chunk.length - cap))
      this.head = 0
      this.held = cap
      return
    }
    if (this.held + chunk.length > this.ring.length && this.ring.length < cap) {
      const grown = Buffer.allocUnsafe(Math.min(cap, Math.max(this.held + chunk.length, this.ring.length * 2, 4096)))
      this.copyOut(grown, 0, this.held)
      this.ring = grown
      this.head = 0
    }
    const size = this.ring.length
    const write = (this.head + this.held) % size
    const first = Math.min(chunk.length, size - write)
    this.ring.set(chunk.subarray(0, first), write)
    if (first < chunk.length) this.ring.set(chunk.subarray(first), 0)
    const held = this.held + chunk.length
    if (held > size) {
      this.head = (this.head + held - size) % size
      this.held = size
    } else {
      this.held = held
    }
  }

  /** A copy of the held bytes from absolute offset `from` (clamped into the tail) to the end. */
  bytesFrom(from: number): Buffer {
    const skip = Math.min(Math.max(from - this.start, 0), this.held)
    const out = Buffer.allocUnsafe(this.held - skip)
    this.copyOut(out, skip, this.held - skip)
    return out
  }

  /** Copies `length` held bytes starting `skip` bytes after the oldest one into `target`. */
  private copyOut(target: Buffer, skip: number, length: number): void {
    if (length === 0) return
    const size = this.ring.length
    const from = (this.head + skip) % size
    const first = Math.min(length, size - from)
    this.ring.copy(target, 0, from, from + first)
    if (first < length) this.ring.copy(target, first, 0, length - first)
  }
}

/** The first `capacity` bytes of a stream; allocated on the first bytes, never grown past the cap. */
export class HeadBuffer {
  private bytes: Buffer = EMPTY
  /** Bytes held (the first `length` bytes of the stream). */
  length = 0

  constructor(readonly capacity: number) {}

  get full(): boolean {
    return this.length >= this.capacity
  }

  push(chunk: Uint8Array): void {
    const take = Math.min(chunk.length, this.capacity - this.length)
    if (take <= 0) return
    if (this.bytes.length < this.length + take) {
      const grown = Buffer.allocUnsafe(
        Math.min(this.capacity, Math.max(this.length + take, this.bytes.length * 2, 4096)),
      )
      this.bytes.copy(grown, 0, 0, this.length)
      this.bytes = grown
    }
    this.bytes.set(chunk.subarray(0, take), this.length)
    this.length += take
  }

  /** The held bytes from `from` on (a view: callers copy what they keep). */
  bytesFrom(from: number): Buffer {
    return this.bytes.subarray(Math.min(Math.max(from, 0), this.length), this.length)
  }
}

const NEWLINE = 0x0a
/** Below this many bytes per newline, a word-at-a-time scan beats one native indexOf call per line. */
const DENSE_GAP = 24
const PROBE = 64

/**
 * Newline bytes in `bytes`. Sparse text (code, logs) goes through native indexOf; once newlines come closer than
 * DENSE_GAP bytes apart (`seq`, `yes`), the rest of the chunk is scanned four bytes at a time, about four times
 * faster there (bench/output-budget.bench.mjs).
 */
export function countNewlines(bytes: Uint8Array): number {
  let count = 0
  let at = bytes.indexOf(NEWLINE)
  for (; at >= 0 && count < PROBE; at = bytes.indexOf(NEWLINE, at + 1)) count++
  if (at < 0) return count
  if (at / count >= DENSE_GAP) {
    for (; at >= 0; at = bytes.indexOf(NEWLINE, at + 1)) count++
    return count
  }
  return count + countDense(bytes, at)
}

/** Newlines in `bytes[from…]`, a 32-bit word at a time (the zero-byte trick on `word ^ 0x0a0a0a0a`). */
function countDense(bytes: Uint8Array, from: number): number {
  let count = 0
  let i = from
  // Up to the first 4-byte-aligned address, then whole words, then the rest.
  while (i < bytes.length && (bytes.byteOffset + i) % 4 !== 0) if (bytes[i++] === NEWLINE) count++
  const words = (bytes.length - i) >>> 2
  if (words > 0) {
    const view = new Uint32Array(bytes.buffer, bytes.byteOffset + i, words)
    for (let w = 0; w < words; w++) {
      const x = view[w]! ^ 0x0a0a0a0a
      // A byte of x is zero exactly where the high bit of `zero` is set.
      const zero = ~(((x & 0x7f7f7f7f) + 0x7f7f7f7f) | x | 0x7f7f7f7f) >>> 0
      count += Math.imul(zero >>> 7, 0x01010101) >>> 24
    }
    i += words * 4
  }
  while (i < bytes.length) if (bytes[i++] === NEWLINE) count++
  return count
}
