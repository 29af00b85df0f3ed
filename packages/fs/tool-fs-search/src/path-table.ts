/*
 * Paths kept by the thousand without an object each: their bytes in blocks of a megabyte, their numbers in typed
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

/** A growing column of 32-bit unsigned integers; `data` is read in place (its first `length` values count). */
class Uint32Column {
  data = new Uint32Array(1024)
  length = 0

  push(value: number): void {
    if (this.length === this.data.length) {
      const grown = new Uint32Array(this.data.length * 2)
      grown.set(this.data)
      this.data = grown
    }
    this.data[this.length++] = value
  }
}

/** Paths are stored in blocks of this many bytes: no copy as the table grows, and at most one block unused. */
const BLOCK_BYTES = 1 << 20
const FIRST_BLOCK_BYTES = 1 << 16

/**
 * Paths as bytes, entries only ever appended. Entry `i` is `blocks[block(i)][offset(i)..offset(i) + length(i))`: a
 * path never spans two blocks (one longer than a block gets a block of its own).
 */
export class PathTable {
  private readonly blocks: Buffer[] = []
  private room = 0
  private readonly block = new Uint32Column()
  private readonly offset = new Uint32Column()
  private readonly size = new Uint32Column()
  private total = 0

  get length(): number {
    return this.size.length
  }

  /** Bytes of all paths together. */
  get bytes(): number {
    return this.total
  }

  /** Appends `source[from..to)` as a new entry; returns its index. */
  push(source: Buffer, from: number, to: number): number {
    const size = to - from
    if (size > this.room || this.blocks.length === 0) {
      // Blocks double from 64 KiB: a table of a few hundred paths allocates no megabyte.
      const bytes = Math.max(Math.min(BLOCK_BYTES, FIRST_BLOCK_BYTES << this.blocks.length), size)
      this.blocks.push(Buffer.allocUnsafe(bytes))
      this.room = bytes
    }
    const block = this.blocks[this.blocks.length - 1] as Buffer
    const at = block.length - this.room
    source.copy(block, at, from, to)
    this.room -= size
    this.total += size
    this.block.push(this.blocks.length - 1)
    this.offset.push(at)
    this.size.push(size)
    return this.size.length - 1
  }

  /** Appends a latin1 key (see pathKey: one character per byte). */
  pushKey(key: string): number {
    const bytes = Buffer.from(key, 'latin1')
    return this.push(bytes, 0, bytes.length)
  }

  /** Entry `index` as a latin1 key (see pathKey). */
  key(index: number): string {
    const start = this.offset.data[index] as number
    return (this.blocks[this.block.data[index] as number] as Buffer).toString(
      'latin1',
      start,
      start + (this.size.data[index] as number),
    )
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

  /** sortInPathOrder for many ranges over the entries there are now. */
  sorter(tie?: (a: number, b: number) => number): (order: Uint32Array, lo: number, hi: number) => void {
    const sorter = new Sorter(this.blocks, this.block.data, this.offset.data, this.size.data, tie)
    return (order, lo, hi) => sorter.sort(order, lo, hi, 0)
  }
}

/** The multikey quicksort of PathTable.sortInPathOrder, over the table's columns as they are. */
class Sorter {
  constructor(
    private readonly blocks: readonly Buffer[],
    private readonly block: Uint32Array,
    private readonly offset: Uint32Array,
    private readonly size: Uint32Array,
    private readonly tie?: (a: number, b: number) => number,
  ) {}

  /** Byte `d` of entry `index` in path order: the end of the path lowest, then `/`, then every byte. */
  private rank(index: number, d: number): number {
    if (d >= (this.size[index] as number)) return -2
    const c = (this.blocks[this.block[index] as number] as Buffer)[(this.offset[index] as number) + d] as number
    return c === 0x2f ? -1 : c
  }

  /** Path order of entries `a` and `b`, both known to share their first `d` bytes. */
  compare(a: number, b: number, d: number): number {
    for (; ; d++) {
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
          for (let j = i; j > lo && this.ordered(order[j - 1] as number, order[j] as number, d) > 0; j--)
            swap(order, j, j - 1)
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
