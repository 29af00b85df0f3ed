import { closeSync, constants, openSync, readSync, rmdirSync, unlinkSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { makePrivateTempDir } from '@deepseek-ai/dsh-private-dir'
import { savedRow, savedRowPrefix, savedUtf8Row, savedUtf8RowBytes } from './grep-text.ts'
import { comparePaths } from './paths.ts'
import { identity, NumberColumn, PathTable } from './path-table.ts'
import type { MatchSink } from './records.ts'
import type { GrepFileValue, GrepLineValue } from './values.ts'

/*
 * What grep keeps of a search of any size (docs/decisions/2026-12-02-search-at-scale.md): the first page's matches
 * in path order (at most grepMaxMatches lines), and the complete result as saved rows, written to a temporary file
 * as they arrive, a chunk at a time, each chunk's files in path order. What stays in memory is one chunk and a few
 * numbers and the path per matching file; the chunks are merged into path order when the result is saved.
 */

/** A file's lines on the page, while the search runs: its matches and, with context, the lines around them. */
interface PageFile {
  readonly key: string
  readonly path: string
  readonly lines: GrepLineValue[]
  /** Matches among `lines` (the rest are context). */
  matches: number
}

/** Lines asked around each match (none when the call asked for no context). */
export interface Around {
  readonly before: number
  readonly after: number
}

/** The last line a row covers (a multiline match covers several). */
function lastLine(line: GrepLineValue): number {
  if (line.multiline !== true || line.preview === null) return line.line
  return line.line + line.preview.split('\n').length - 1
}

/** A match shown as a line around others: it is past the page, or before the model's offset. */
function demoted(line: GrepLineValue): GrepLineValue {
  return { ...line, context: true }
}

/**
 * A file's lines without the context that belongs to no match kept: a context line stays when it lies within
 * `before` lines above a match or `after` lines below one.
 */
function trimmed(lines: readonly GrepLineValue[], around: Around): GrepLineValue[] {
  const kept: GrepLineValue[] = []
  let lastMatchEnd = -Infinity
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as GrepLineValue
    if (line.context !== true) {
      kept.push(line)
      lastMatchEnd = lastLine(line)
      continue
    }
    if (line.line <= lastMatchEnd + around.after) {
      kept.push(line)
      continue
    }
    let next: GrepLineValue | undefined
    for (let j = i + 1; j < lines.length; j++) {
      if ((lines[j] as GrepLineValue).context !== true) {
        next = lines[j]
        break
      }
    }
    if (next !== undefined && next.line - lastLine(line) <= around.before) kept.push(line)
  }
  return kept
}

/** Inserts `line` into `lines` (ascending; lines come in order within a file, but stay in order if they ever do not). */
function insert(lines: GrepLineValue[], line: GrepLineValue): void {
  let at = lines.length
  while (at > 0 && (lines[at - 1] as GrepLineValue).line > line.line) at--
  lines.splice(at, 0, line)
}

/** Where the page's matches are kept while ripgrep runs: the first page (PageKeeper) or a page from an offset. */
interface Keeper {
  file(key: string, path: string): void
  line(line: GrepLineValue): void
  context(line: GrepLineValue): void
  values(): GrepFileValue[]
  /** Whether a match that came now might be kept: when not, its value need not be made. */
  readonly wants: boolean
}

/** The first `max` matching lines in path order, whatever order the files come in, with their context. */
class PageKeeper implements Keeper {
  /** In path order of their keys. */
  private readonly files: PageFile[] = []
  private kept = 0
  private current: PageFile | undefined

  constructor(
    private readonly max: number,
    private readonly around: Around | undefined,
  ) {}

  get wants(): boolean {
    return this.current !== undefined
  }

  file(key: string, path: string): void {
    const last = this.files[this.files.length - 1]
    // A full page whose last file sorts before this one: none of its lines can be on the page.
    if (this.kept >= this.max && last !== undefined && comparePaths(key, last.key) > 0) {
      this.current = undefined
      return
    }
    let lo = 0
    let hi = this.files.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (comparePaths((this.files[mid] as PageFile).key, key) < 0) lo = mid + 1
      else hi = mid
    }
    const found = this.files[lo]
    if (found?.key === key) {
      this.current = found
      return
    }
    this.current = { key, path, lines: [], matches: 0 }
    this.files.splice(lo, 0, this.current)
  }

  line(line: GrepLineValue): void {
    const file = this.current
    if (file === undefined) return
    insert(file.lines, line)
    file.matches++
    if (++this.kept <= this.max) return
    // One match too many: the last match of the last file goes (with context asked, it stays as a line around the
    // matches before it, as far as they reach).
    const last = this.files[this.files.length - 1] as PageFile
    if (this.around === undefined) {
      // Without context every line is a match: the last one simply goes.
      last.lines.pop()
      last.matches--
      this.kept--
      if (last.matches === 0) {
        this.files.pop()
        if (last === this.current) this.current = undefined
      }
      return
    }
    let at = last.lines.length - 1
    while (at >= 0 && (last.lines[at] as GrepLineValue).context === true) at--
    last.lines[at] = demoted(last.lines[at] as GrepLineValue)
    last.matches--
    this.kept--
    if (last.matches === 0) {
      this.files.pop()
      if (last === this.current) this.current = undefined
      return
    }
    const reach = this.around?.after ?? 0
    let end = last.lines.length
    while (end > 0 && (last.lines[end - 1] as GrepLineValue).context === true) end--
    const limit = lastLine(last.lines[end - 1] as GrepLineValue) + reach
    while (last.lines.length > end && (last.lines[last.lines.length - 1] as GrepLineValue).line > limit)
      last.lines.pop()
  }

  context(line: GrepLineValue): void {
    if (this.current !== undefined) insert(this.current.lines, line)
  }

  values(): GrepFileValue[] {
    const { around } = this
    return this.files
      .filter((file) => file.matches > 0)
      .map(({ path, lines }) => ({ path, lines: around === undefined ? lines : trimmed(lines, around) }))
  }
}

/**
 * The matching lines `offset` to `offset + max` (with their context), from a ripgrep that prints files in path order
 * (`--sort=path`): a file never comes back once another began, so what lies before the page is dropped as it goes.
 */
class WindowKeeper implements Keeper {
  private readonly files: GrepFileValue[] = []
  private current: PageFile | undefined
  private seen = 0
  /** Every match counts towards the offset, and one before it may be a line around the page. */
  readonly wants = true

  constructor(
    private readonly offset: number,
    private readonly max: number,
    private readonly around: Around | undefined,
  ) {}

  file(key: string, path: string): void {
    this.finish()
    this.current = { key, path, lines: [], matches: 0 }
  }

  line(line: GrepLineValue): void {
    const file = this.current
    if (file === undefined) return
    const index = this.seen++
    if (index < this.offset || index >= this.offset + this.max) this.context(demoted(line))
    else {
      file.lines.push(line)
      file.matches++
    }
  }

  context(line: GrepLineValue): void {
    const file = this.current
    if (file === undefined || this.around === undefined) return
    if (file.matches === 0) {
      // Nothing kept in this file yet: only the last `before` lines can still be shown, above the next match.
      while (file.lines.length > 0 && line.line - (file.lines[0] as GrepLineValue).line >= this.around.before + 1)
        file.lines.shift()
      if (this.around.before > 0) file.lines.push(line)
      return
    }
    if (this.seen <= this.offset + this.max || line.line <= this.lastMatchLine(file) + this.around.after)
      file.lines.push(line)
  }

  private lastMatchLine(file: PageFile): number {
    for (let i = file.lines.length - 1; i >= 0; i--)
      if ((file.lines[i] as GrepLineValue).context !== true) return lastLine(file.lines[i] as GrepLineValue)
    return -Infinity
  }

  private finish(): void {
    const file = this.current
    this.current = undefined
    if (file === undefined || file.matches === 0) return
    this.files.push({
      path: file.path,
      lines: this.around === undefined ? file.lines : trimmed(file.lines, this.around),
    })
  }

  values(): GrepFileValue[] {
    this.finish()
    return this.files
  }
}

/** The size a chunk starts at: a small result never holds (or allocates) the whole `chunkBytes`. */
const FIRST_CHUNK_BYTES = 64 * 1024

/**
 * The complete result as saved rows. Rows are gathered as UTF-8 in one chunk buffer (at most `chunkBytes`; it starts
 * small and grows fourfold as it fills); a full chunk is written to an unlinked temporary file with its files in path
 * order, and each run of a file's rows has an entry in the index (its path, first line, offset and bytes). At the end
 * the entries are sorted into path order: each written chunk's entries then come in the order they were written, so
 * every chunk is read forward, once; the last chunk is read where it is, so a result of one chunk never touches a
 * file.
 */
class SavedRows {
  private readonly keys = new PathTable()
  private readonly firstLines = new NumberColumn()
  /** Of each entry: where its rows start (in the chunk while it is gathered, then in the temporary file), how long. */
  private readonly offsets = new NumberColumn()
  private readonly sizes = new NumberColumn()
  /** Index entries of the chunks written so far: chunk `c` holds entries `chunkEnds[c - 1]..chunkEnds[c]`. */
  private readonly chunkEnds: number[] = []
  /** Where in the temporary file each chunk starts. */
  private readonly chunkStarts: number[] = []
  private chunk: Buffer | undefined
  /** Where a chunk's runs are put in path order before they are written: allocated once, like the chunk. */
  private ordered: Buffer | undefined
  private used = 0
  /** The first entry of the chunk being gathered. */
  private chunkFirst = 0
  /** The entry of the run being gathered (-1 before its first row). */
  private run = -1
  /** The file whose rows come now: its key and the start of its rows, as text and as UTF-8. */
  private key = ''
  private prefix = ''
  private prefixBytes: Buffer = Buffer.alloc(0)
  private fd: number | undefined
  /** UTF-8 bytes written to the temporary file. */
  written = 0
  /** Why the rows could not be kept (the temporary file failed); then nothing more is gathered. */
  failure: string | undefined

  constructor(private readonly chunkBytes: number) {}

  file(key: string, path: string): void {
    this.key = key
    this.prefix = savedRowPrefix(path)
    this.prefixBytes = Buffer.from(this.prefix, 'utf8')
    this.run = -1
  }

  line(line: GrepLineValue): void {
    if (this.failure !== undefined) return
    const row = savedRow(this.prefix, line)
    // At most 3 UTF-8 bytes per UTF-16 unit.
    const chunk = this.room(3 * row.length, line.line)
    if (chunk === undefined) return
    this.wrote(chunk.write(row, this.used, 'utf8'))
  }

  /**
   * A whole matching line, `bytes[start..end)`, that is UTF-8 with nothing to escape (savedUtf8Row): its row is
   * copied from the bytes, no string made.
   */
  utf8Line(line: number, bytes: Buffer, start: number, end: number): void {
    if (this.failure !== undefined) return
    const chunk = this.room(savedUtf8RowBytes(this.prefixBytes, end - start), line)
    if (chunk === undefined) return
    const to = savedUtf8Row(chunk, this.used, this.prefixBytes, line, bytes, start, end)
    if (to === -1) this.line({ line, preview: bytes.toString('utf8', start, end), truncated: false })
    else this.wrote(to - this.used)
  }

  /**
   * The chunk, with room for a row of at most `bytes` at `used`: it grows up to `chunkBytes`, else is written and
   * begun again (bigger when one row needs it). Begins a run when none is: after a file is named, or when a chunk
   * was written in the middle of a file. Undefined when writing failed.
   */
  private room(bytes: number, firstLine: number): Buffer | undefined {
    let chunk = this.chunk
    if (chunk === undefined || this.used + bytes > chunk.length) {
      if (this.used + bytes <= this.chunkBytes || this.used === 0) {
        const size = Math.max(
          this.used + bytes,
          Math.min(this.chunkBytes, Math.max(FIRST_CHUNK_BYTES, 4 * (chunk?.length ?? 0))),
        )
        const grown = Buffer.allocUnsafe(size)
        chunk?.copy(grown, 0, 0, this.used)
        chunk = grown
      } else {
        this.flush()
        if (this.failure !== undefined) return undefined
        if ((chunk as Buffer).length < bytes) chunk = Buffer.allocUnsafe(bytes)
      }
      this.chunk = chunk
    }
    if (this.run === -1) {
      this.run = this.keys.pushKey(this.key)
      this.firstLines.push(firstLine)
      this.offsets.push(this.used)
      this.sizes.push(0)
    }
    return chunk
  }

  /** `size` bytes were added to the run at `used`. */
  private wrote(size: number): void {
    this.used += size
    this.sizes.set(this.run, this.sizes.at(this.run) + size)
  }

  /** Bytes the saved result holds so far: written, and gathered in the chunk. */
  get bytes(): number {
    return this.written + this.used
  }

  private flush(): void {
    const chunk = this.chunk
    if (chunk === undefined || this.used === 0 || this.failure !== undefined) return
    const first = this.chunkFirst
    const count = this.keys.length - first
    const order = this.sortChunk(first, count)
    // The chunk's runs in path order, into a buffer of their own, each entry's offset now its place in the file.
    if (this.ordered === undefined || this.ordered.length < this.used) this.ordered = Buffer.allocUnsafe(chunk.length)
    const data = this.ordered.subarray(0, this.used)
    let at = 0
    for (const entry of order) {
      const start = this.offsets.at(entry)
      const size = this.sizes.at(entry)
      chunk.copy(data, at, start, start + size)
      this.offsets.set(entry, this.written + at)
      at += size
    }
    try {
      this.fd ??= openTemporary()
      for (let done = 0; done < data.length; )
        done += writeSync(this.fd, data, done, data.length - done, this.written + done)
    } catch (error) {
      this.failure = (error as Error)?.message ?? String(error)
      this.close()
      return
    }
    this.chunkStarts.push(this.written)
    this.chunkEnds.push(first + count)
    this.written += data.length
    // The file being gathered goes on in the next chunk, as a new run.
    this.chunkFirst = first + count
    this.used = 0
    this.run = -1
  }

  /** Entries `first..first + count` in path order, a file's runs by first line, then as they came. */
  private sortChunk(first: number, count: number): Uint32Array {
    const order = identity(count, first)
    this.keys.sortInPathOrder(order, 0, count, (a, b) => this.firstLines.at(a) - this.firstLines.at(b) || a - b)
    return order
  }

  /**
   * The saved text after its header, in parts of about `partBytes`: every row in path order. Reads the temporary
   * file once, each written chunk forward, and the last chunk where it lies. Each part is the same buffer, filled
   * again once the next part is asked for (the spill seam allows that): memory stays one part, whatever the size.
   */
  *parts(partBytes = 1 << 20): Generator<Buffer> {
    if (this.failure !== undefined) throw new Error(this.failure)
    const total = this.keys.length
    const order = identity(total)
    // Entries come in the order they arrived, and so do their rows: a file's runs with the same first line (from a
    // second run of ripgrep) keep that order.
    this.keys.sortInPathOrder(order, 0, total, (a, b) => this.firstLines.at(a) - this.firstLines.at(b) || a - b)
    const readers = this.chunkStarts.map(
      (start) => new ForwardReader(this.fd as number, start, Math.min(partBytes, 1 << 16)),
    )
    const chunkOf = (entry: number): number => {
      let lo = 0
      let hi = this.chunkEnds.length - 1
      while (lo < hi) {
        const mid = (lo + hi) >> 1
        if ((this.chunkEnds[mid] as number) > entry) hi = mid
        else lo = mid + 1
      }
      return lo
    }
    const part = Buffer.allocUnsafe(Math.min(partBytes, this.bytes))
    const last = this.chunk as Buffer
    let used = 0
    for (const entry of order) {
      let size = this.sizes.at(entry)
      const inMemory = entry >= this.chunkFirst
      let from = this.offsets.at(entry)
      const reader = inMemory ? undefined : (readers[chunkOf(entry)] as ForwardReader)
      while (size > 0) {
        if (used === part.length) {
          yield part
          used = 0
        }
        const n = Math.min(size, part.length - used)
        if (reader === undefined) last.copy(part, used, from, from + n)
        else reader.read(part, used, n)
        from += n
        used += n
        size -= n
      }
    }
    if (used > 0) yield part.subarray(0, used)
  }

  close(): void {
    if (this.fd === undefined) return
    try {
      closeSync(this.fd)
    } catch {
      // Gone either way.
    }
    this.fd = undefined
  }
}

/** A new file for reading and writing: never an existing one, never through a symlink. */
const TEMPORARY_FLAGS = constants.O_RDWR | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW

/** A temporary file only this process can reach: created 0600 in a fresh 0700 directory, then unlinked at once. */
function openTemporary(): number {
  using dir = makePrivateTempDir(tmpdir(), 'dsh-grep-')
  try {
    const fd = openSync(dir.at('rows'), TEMPORARY_FLAGS, 0o600)
    unlinkSync(dir.at('rows'))
    return fd
  } finally {
    rmdirSync(dir.path)
  }
}

/** Reads a region of a file forward, through a buffer. */
class ForwardReader {
  private readonly buffer: Buffer
  private start = 0
  private length = 0

  constructor(
    private readonly fd: number,
    private position: number,
    size: number,
  ) {
    this.buffer = Buffer.allocUnsafe(size)
  }

  /** The next `n` bytes of the region into `target[at..at + n)`. */
  read(target: Buffer, at: number, n: number): void {
    while (n > 0) {
      if (this.length === 0) {
        this.start = 0
        this.length = readSync(this.fd, this.buffer, 0, this.buffer.length, this.position)
        if (this.length === 0) throw new Error('the temporary file of the saved rows ended early')
        this.position += this.length
      }
      const take = Math.min(n, this.length)
      this.buffer.copy(target, at, this.start, this.start + take)
      this.start += take
      this.length -= take
      at += take
      n -= take
    }
  }
}

/**
 * Where grep's records go: counted, the first page kept in path order, and — when the result can be saved — every
 * row gathered for the saved result.
 */
export class GrepResults implements MatchSink {
  private readonly page: Keeper
  private readonly rows: SavedRows | undefined
  total = 0

  /**
   * `chunkBytes` undefined: the complete result cannot be saved anyway (no store, no session, a page of the model's
   * own), so no rows are kept. `window`: the page from an offset, read from a ripgrep that sorts by path.
   */
  constructor(
    maxMatches: number,
    chunkBytes: number | undefined,
    options: { readonly around?: Around; readonly window?: { readonly offset: number } } = {},
  ) {
    this.page =
      options.window !== undefined && options.window.offset > 0
        ? new WindowKeeper(options.window.offset, maxMatches, options.around)
        : new PageKeeper(maxMatches, options.around)
    this.rows = chunkBytes === undefined ? undefined : new SavedRows(chunkBytes)
  }

  file(key: string, path: string): void {
    this.page.file(key, path)
    this.rows?.file(key, path)
  }

  line(line: GrepLineValue): void {
    this.total++
    this.page.line(line)
    this.rows?.line(line)
  }

  /** A whole matching line, uncut, whose UTF-8 is `bytes[start..end)` (lent for the call). */
  utf8Line(line: number, bytes: Buffer, start: number, end: number): void {
    this.total++
    if (this.page.wants) this.page.line({ line, preview: bytes.toString('utf8', start, end), truncated: false })
    this.rows?.utf8Line(line, bytes, start, end)
  }

  context(line: GrepLineValue): void {
    this.page.context(line)
    this.rows?.line(line)
  }

  /** Bytes of the saved result so far (0 when nothing is kept). */
  get savedBytes(): number {
    return this.rows?.bytes ?? 0
  }

  /** The first page's files, in path order, lines ascending. */
  files(): GrepFileValue[] {
    return this.page.values()
  }

  /** Why the rows could not be kept, if they could not. */
  get failure(): string | undefined {
    return this.rows?.failure
  }

  /** The saved text: the header line, then every row in path order. */
  *saved(header: string): Generator<Buffer> {
    if (this.rows === undefined) throw new Error('the rows were not kept')
    yield Buffer.from(`${header}\n`, 'utf8')
    yield* this.rows.parts()
  }

  [Symbol.dispose](): void {
    this.rows?.close()
  }
}
