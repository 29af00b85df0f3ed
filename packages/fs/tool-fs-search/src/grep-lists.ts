import { NumberColumn, PathTable, identity } from './path-table.ts'
import { decodeKey, joinDisplay, pathKey, type SearchRoot } from './paths.ts'
import { MalformedOutput } from './records.ts'
import type { OpenedRoot } from './search.ts'

/**
 * output_mode "count": ripgrep's `--count --with-filename --null` lines, `<path>NUL<count>\n`, kept as each file's
 * path below the root (one buffer) and its count (a typed column), ordered by path at the end.
 */
export class CountList {
  private readonly paths = new PathTable()
  private readonly counts = new NumberColumn()
  private rest: Buffer = Buffer.alloc(0)
  private readonly searched: Buffer
  /** Matching lines in all files. */
  matches = 0

  private readonly filter: OpenedRoot['filter']

  constructor(
    opened: OpenedRoot,
    private readonly root: SearchRoot,
  ) {
    this.searched = opened.searched.bytes
    this.filter = opened.filter
  }

  /** Bytes of the record still waiting for its end. */
  get pendingLength(): number {
    return this.rest.length
  }

  get length(): number {
    return this.paths.length
  }

  /** Bytes of the paths below the root. */
  get bytes(): number {
    return this.paths.bytes
  }

  push(chunk: Buffer): void {
    // A path may hold a newline but never a NUL, and a count is digits: the NUL ends the path, the next newline the line.
    const bytes = this.rest.length === 0 ? chunk : Buffer.concat([this.rest, chunk])
    let at = 0
    for (;;) {
      const nul = bytes.indexOf(0, at)
      if (nul === -1) break
      const newline = bytes.indexOf(0x0a, nul + 1)
      if (newline === -1) break
      this.add(bytes, at, nul, newline)
      at = newline + 1
    }
    this.rest = Buffer.from(bytes.subarray(at))
  }

  /** The output ended: nothing may be left unfinished. */
  end(): void {
    if (this.rest.length > 0)
      throw new MalformedOutput(
        `an unfinished count line: ${JSON.stringify(decodeKey(pathKey(this.rest)).slice(0, 80))}`,
      )
  }

  private add(bytes: Buffer, start: number, nul: number, newline: number): void {
    const text = bytes.toString('latin1', nul + 1, newline)
    if (!/^[0-9]+$/.test(text))
      throw new MalformedOutput(`a count that is not a number: ${JSON.stringify(text.slice(0, 80))}`)
    const searched = this.searched
    const root = bytes.compare(searched, 0, searched.length, start, Math.min(nul, start + searched.length)) === 0
    const itself = root && nul - start === searched.length
    if (!root || (!itself && bytes[start + searched.length] !== 0x2f))
      throw new MalformedOutput(`a path outside the search root: ${decodeKey(bytes.toString('latin1', start, nul))}`)
    const from = itself ? nul : start + searched.length + 1
    // Without confinement, a file whose real path the policy refuses is left out (real-path-filter.ts).
    if (this.filter && !this.filter.allows(bytes.toString('latin1', from, nul))) return
    this.paths.push(bytes, from, nul)
    const count = Number(text)
    this.counts.push(count)
    this.matches += count
  }

  /** The files in path order. */
  inPathOrder(): Uint32Array {
    const order = identity(this.paths.length)
    this.paths.sortInPathOrder(order)
    return order
  }

  entry(index: number): { readonly path: string; readonly count: number } {
    return { path: joinDisplay(this.root.display, decodeKey(this.paths.key(index))), count: this.counts.at(index) }
  }
}
