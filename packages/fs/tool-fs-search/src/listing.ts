import { isAscii } from 'node:buffer'
import { statSync } from 'node:fs'
import { NumberColumn, PathTable } from './path-table.ts'
import { decodeKey, joinDisplay, pathKey, type SearchRoot } from './paths.ts'
import { MalformedOutput, RecordSplitter } from './records.ts'
import type { OpenedRoot } from './search.ts'

/*
 * A list of files as ripgrep prints them NUL-separated (glob's `--files`, grep's `--files-with-matches`), each
 * stat'ed as it arrives and ordered newest first at the end.
 */

/** The files ripgrep lists below an opened root, with their modification times. */
export class PathListing {
  private readonly listing = new Listing()
  /** The reader of the first run; a retry's runs each get their own (newSplitter). */
  readonly splitter: RecordSplitter
  private readonly record: (bytes: Buffer, start: number, end: number) => void
  /** Until a chunk holds a byte over 0x7f, every name is ASCII and needs no conversion (the common case). */
  private ascii: boolean

  /** `rootItself`: the root may be listed itself (grep of a single file); glob lists only what lies below it. */
  constructor(
    opened: OpenedRoot,
    private readonly root: SearchRoot,
    options: { readonly rootItself: boolean },
  ) {
    // ripgrep lists `./rel` below the opened directory; each is stat'ed through its /proc path (the directory listed).
    const searched = opened.searched.bytes
    const prefix = searched.length + 1
    const rootKey = pathKey(searched)
    const statBase = Buffer.from(opened.statBase)
    this.ascii = isAscii(root.bytes)
    this.record = (bytes, start, end) => {
      const itself = options.rootItself && end - start === searched.length
      if (
        (!itself && end - start < prefix) ||
        bytes.toString('latin1', start, start + rootKey.length) !== rootKey ||
        (!itself && prefix > rootKey.length && bytes[start + rootKey.length] !== 0x2f)
      ) {
        throw new MalformedOutput(`a path outside the search root: ${decodeKey(bytes.toString('latin1', start, end))}`)
      }
      // Without confinement, a file whose real path the policy refuses is left out (search.ts, the real-path filter).
      if (opened.filter && !opened.filter.allows(itself ? '' : bytes.toString('latin1', start + prefix, end))) return
      const below = start + searched.length
      this.listing.add(
        bytes,
        itself ? end : start + prefix,
        end,
        modificationTime(
          this.ascii
            ? opened.statBase + bytes.toString('latin1', below, end)
            : Buffer.concat([statBase, bytes.subarray(below, end)]),
        ),
      )
    }
    this.splitter = this.newSplitter()
  }

  /** A reader of one more run of ripgrep into the same listing. */
  newSplitter(): RecordSplitter {
    return new RecordSplitter(0x00, this.record)
  }

  push(chunk: Buffer, splitter: RecordSplitter = this.splitter): void {
    if (this.ascii && !isAscii(chunk)) this.ascii = false
    splitter.push(chunk)
  }

  get pendingLength(): number {
    return this.splitter.pendingLength
  }

  /** Files listed. */
  get length(): number {
    return this.listing.length
  }

  /** Bytes of their paths below the root. */
  get bytes(): number {
    return this.listing.bytes
  }

  /** Entry `index` as shown: joined to the root's display (lossy UTF-8 unless every name was ASCII). */
  shown(index: number): string {
    return joinDisplay(this.root.display, this.listing.display(index, this.ascii))
  }

  newestFirst(): Uint32Array {
    return this.listing.newestFirst()
  }
}

/** The listed files: their paths below the root (one buffer) and modification times (a typed column). */
class Listing {
  private readonly paths = new PathTable()
  private readonly times = new NumberColumn()

  get length(): number {
    return this.paths.length
  }

  get bytes(): number {
    return this.paths.bytes
  }

  add(bytes: Buffer, start: number, end: number, mtime: number): void {
    this.paths.push(bytes, start, end)
    this.times.push(mtime)
  }

  /** Entry `index` as shown below the root (lossy UTF-8 unless every name was ASCII). */
  display(index: number, ascii: boolean): string {
    const key = this.paths.key(index)
    return ascii ? key : decodeKey(key)
  }

  /**
   * The entries newest first; equal times in path order; files that could not be stat'ed last. The distinct times
   * are sorted natively (a Float64Array), each entry finds its time's rank by binary search, a counting pass places
   * the entries, and only groups of equal times go through the path sort.
   */
  newestFirst(): Uint32Array {
    const n = this.times.length
    const times = this.times.values()
    const distinct = uniqueSorted(times.slice().sort())
    // Rank 0 is the newest time; Infinity (no time) sorts last ascending and stays last.
    const finite =
      distinct.length > 0 && distinct[distinct.length - 1] === Infinity ? distinct.length - 1 : distinct.length
    const rankOf = (time: number): number => {
      if (time === Infinity) return finite
      let lo = 0
      let hi = finite - 1
      while (lo < hi) {
        const mid = (lo + hi) >> 1
        if ((distinct[mid] as number) < time) lo = mid + 1
        else hi = mid
      }
      return finite - 1 - lo
    }
    const ranks = new Uint32Array(n)
    const starts = new Uint32Array(distinct.length + 1)
    for (let i = 0; i < n; i++) {
      const rank = rankOf(times[i] as number)
      ranks[i] = rank
      starts[rank + 1] = (starts[rank + 1] as number) + 1
    }
    for (let r = 0; r < distinct.length; r++) starts[r + 1] = (starts[r + 1] as number) + (starts[r] as number)
    const order = new Uint32Array(n)
    const next = starts.slice(0, distinct.length)
    for (let i = 0; i < n; i++) order[(next[ranks[i] as number] as number)++] = i
    const inPathOrder = this.paths.sorter()
    for (let r = 0; r < distinct.length; r++) {
      const lo = starts[r] as number
      const hi = starts[r + 1] as number
      if (hi - lo > 1) inPathOrder(order, lo, hi)
    }
    return order
  }
}

/** The distinct values of an ascending array. */
function uniqueSorted(sorted: Float64Array): Float64Array {
  let kept = 0
  for (let i = 0; i < sorted.length; i++)
    if (i === 0 || sorted[i] !== sorted[kept - 1]) sorted[kept++] = sorted[i] as number
  return sorted.subarray(0, kept)
}

/**
 * ripgrep's own `--sort=modified` walks on one thread and cannot break ties, so the tool lists in parallel and
 * stats every file itself, as ripgrep prints it (docs/decisions/2026-11-30-glob-ordering.md): a synchronous stat
 * is several times cheaper than a promise per file, and a chunk of names takes a few milliseconds. A file gone
 * since the listing has no time and sorts last, as in ripgrep. Times are compared as a double of milliseconds
 * (about a quarter of a microsecond apart at today's dates): closer ones count as ties, never as inverted.
 */
function modificationTime(path: string | Buffer): number {
  try {
    return statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? Infinity
  } catch {
    return Infinity
  }
}
