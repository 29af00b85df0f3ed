/*
 * Paths kept by the thousand without an object each: their bytes in one growing buffer, their numbers in typed
 * columns. A search of half a million files then holds its paths and a few numbers per file, nothing more
 * (docs/decisions/2026-12-02-search-at-scale.md).
 */

/** A growing column of doubles (a time, an offset, a line number: exact up to 2^53). */
export class NumberColumn {
  private data = new Float64Array(1024)
  length = 0

  push(value: number): void {
    if (this.length === this.data.length) {
      const grown = new Float64Array(this.data.length * 2)
      grown.set(this.data)
      this.data = grown
    }
    this.data[this.length++] = value
  }

  at(index: number): number {
    return this.data[index] as number
  }

  set(index: number, value: number): void {
    this.data[index] = value
  }

  /** A copy of the first `length` values. */
  values(): Float64Array {
    return this.data.slice(0, this.length)
  }
}

/** Paths as bytes, entry `i` at `bytes[start(i)..start(i + 1))`; entries are only ever appended. */
export class PathTable {
  private buffer = Buffer.allocUnsafe(64 * 1024)
  private used = 0
  private starts = new NumberColumn()

  get length(): number {
    return this.starts.length
  }

  /** Bytes of all paths together. */
  get bytes(): number {
    return this.used
  }

  /** Appends `source[from..to)` as a new entry; returns its index. */
  push(source: Buffer, from: number, to: number): number {
    const size = to - from
    if (this.used + size > this.buffer.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.used + size))
      this.buffer.copy(grown, 0, 0, this.used)
      this.buffer = grown
    }
    source.copy(this.buffer, this.used, from, to)
    this.starts.push(this.used)
    this.used += size
    return this.starts.length - 1
  }

  /** Appends a latin1 key (see pathKey: one character per byte). */
  pushKey(key: string): number {
    const bytes = Buffer.from(key, 'latin1')
    return this.push(bytes, 0, bytes.length)
  }

  private start(index: number): number {
    return this.starts.at(index)
  }

  private end(index: number): number {
    return index + 1 < this.starts.length ? this.starts.at(index + 1) : this.used
  }

  /** Entry `index` as a latin1 key (see pathKey). */
  key(index: number): string {
    return this.buffer.toString('latin1', this.start(index), this.end(index))
  }

  /**
   * Sorts `order[lo..hi)` (entry indices) into path order: component by component, each component bytewise — the
   * order of `rg --sort=path`. A multikey (three-way radix) quicksort on the bytes: a long shared prefix such as
   * `node_modules/@scope/package/` is read once per partition, not once per comparison. Equal paths keep no
   * particular order; `tie` (when given) orders them.
   */
  sortInPathOrder(order: Uint32Array, lo = 0, hi = order.length, tie?: (a: number, b: number) => number): void {
    if (hi - lo >= 2) this.sorter(tie)(order, lo, hi)
  }

  /** sortInPathOrder for many ranges over the entries there are now: the bounds are read once. */
  sorter(tie?: (a: number, b: number) => number): (order: Uint32Array, lo: number, hi: number) => void {
    // Entry i's bytes are buffer[bounds[i]..bounds[i + 1]): one typed array read per bound, no call.
    const bounds = new Float64Array(this.starts.length + 1)
    bounds.set(this.starts.values())
    bounds[this.starts.length] = this.used
    const sorter = new Sorter(this.buffer, bounds, tie)
    return (order, lo, hi) => sorter.sort(order, lo, hi, 0)
  }
}

/** The multikey quicksort of PathTable.sortInPathOrder, over a snapshot of its bounds. */
class Sorter {
  constructor(
    private readonly buffer: Buffer,
    private readonly bounds: Float64Array,
    private readonly tie?: (a: number, b: number) => number,
  ) {}

  /** Byte `d` of entry `index` in path order: the end of the path lowest, then `/`, then every byte. */
  private rank(index: number, d: number): number {
    const at = (this.bounds[index] as number) + d
    if (at >= (this.bounds[index + 1] as number)) return -2
    const c = this.buffer[at] as number
    return c === 0x2f ? -1 : c
  }

  /** Path order of entries `a` and `b`, both known to share their first `d` bytes. */
  compare(a: number, b: number, d: number): number {
    for (;; d++) {
      const x = this.rank(a, d)
      const y = this.rank(b, d)
      if (x !== y) return x - y
      if (x === -2) return 0
    }
  }

  sort(order: Uint32Array, lo: number, hi: number, d: number): void {
    const { tie } = this
    while (hi - lo > 1) {
      if (hi - lo <= SMALL) {
        for (let i = lo + 1; i < hi; i++) {
          for (let j = i; j > lo && this.ordered(order[j - 1] as number, order[j] as number, d) > 0; j--) swap(order, j, j - 1)
        }
        return
      }
      const pivot = this.rank(order[(lo + hi) >> 1] as number, d)
      let lt = lo
      let gt = hi - 1
      let i = lo
      while (i <= gt) {
        const c = this.rank(order[i] as number, d)
        if (c < pivot) swap(order, lt++, i++)
        else if (c > pivot) swap(order, i, gt--)
        else i++
      }
      this.sort(order, lo, lt, d)
      this.sort(order, gt + 1, hi, d)
      if (pivot === -2) {
        // The middle part holds equal paths.
        if (tie !== undefined && gt + 1 - lt > 1) insertionSort(order, lt, gt + 1, tie)
        return
      }
      lo = lt
      hi = gt + 1
      d++
    }
  }

  private ordered(a: number, b: number, d: number): number {
    const byPath = this.compare(a, b, d)
    return byPath !== 0 || this.tie === undefined ? byPath : this.tie(a, b)
  }
}

/** Ranges this small are insertion-sorted. */
const SMALL = 12

function swap(order: Uint32Array, i: number, j: number): void {
  const t = order[i] as number
  order[i] = order[j] as number
  order[j] = t
}

function insertionSort(order: Uint32Array, lo: number, hi: number, compare: (a: number, b: number) => number): void {
  for (let i = lo + 1; i < hi; i++) {
    for (let j = i; j > lo && compare(order[j - 1] as number, order[j] as number) > 0; j--) swap(order, j, j - 1)
  }
}

/** 0, 1, …, n − 1. */
export function identity(n: number, from = 0): Uint32Array {
  const order = new Uint32Array(n)
  for (let i = 0; i < n; i++) order[i] = from + i
  return order
}
