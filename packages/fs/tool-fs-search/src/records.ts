import type { SearchRoot } from './paths.ts'
import { decodeLossy, joinDisplay, pathKey, relativeBytes, truncateUtf8 } from './paths.ts'

/**
 * Splits a byte stream into records that end with `separator` (a newline for `rg --json`, NUL for
 * `rg --files --null`). It holds at most one unfinished record: the raw output is never one string.
 */
export class RecordSplitter {
  private pending: Buffer[] = []
  private pendingLength = 0

  constructor(private readonly separator: number, private readonly onRecord: (record: Buffer) => void) {}

  /** Bytes of the record still waiting for its separator. */
  get pendingBytes(): number {
    return this.pendingLength
  }

  push(chunk: Buffer): void {
    let start = 0
    let end = chunk.indexOf(this.separator, start)
    while (end !== -1) {
      let record = chunk.subarray(start, end)
      if (this.pendingLength > 0) {
        this.pending.push(record)
        record = Buffer.concat(this.pending, this.pendingLength + record.length)
        this.pending = []
        this.pendingLength = 0
      }
      this.onRecord(record)
      start = end + 1
      end = chunk.indexOf(this.separator, start)
    }
    if (start < chunk.length) {
      this.pending.push(chunk.subarray(start))
      this.pendingLength += chunk.length - start
    }
  }

  /** The stream ended: a last record without its separator still counts. */
  end(): void {
    if (this.pendingLength === 0) return
    const record = Buffer.concat(this.pending, this.pendingLength)
    this.pending = []
    this.pendingLength = 0
    this.onRecord(record)
  }
}

/** ripgrep printed something this parser cannot read; the tool reports SEARCH_FAILED. */
export class MalformedOutput extends Error {
  override name = 'MalformedOutput'
}

export interface GrepLine {
  readonly line: number
  /** The line without its terminator (and without the `\r` of CRLF), cut to the byte cap; null when not UTF-8. */
  readonly preview: string | null
  readonly truncated: boolean
}

export interface GrepFile {
  /** As shown (relative to the cwd, or absolute outside it), not yet escaped. */
  readonly path: string
  /** Path order key (see pathKey). */
  readonly key: string
  readonly lines: GrepLine[]
}

/** ripgrep's JSON form of a path or a line: `text` when it is UTF-8, else base64 `bytes`. */
interface Data {
  text?: unknown
  bytes?: unknown
}

// rg prints "type" first in begin/match/context/end records; anything else is parsed in full and checked.
const MATCH = Buffer.from('{"type":"match"')
const SKIPPED = ['{"type":"begin"', '{"type":"end"', '{"type":"context"'].map((p) => Buffer.from(p))
const KNOWN_TYPES = new Set(['begin', 'end', 'context', 'summary'])

function startsWith(record: Buffer, prefix: Buffer): boolean {
  return record.length >= prefix.length && record.compare(prefix, 0, prefix.length, 0, prefix.length) === 0
}

/** Keeps the matching lines of an `rg --json` stream, grouped by file; `total` counts matching lines. */
export class GrepCollector {
  private readonly byPath = new Map<string, GrepFile>()
  total = 0
  /** Records read, of any type. */
  records = 0

  constructor(private readonly root: SearchRoot, private readonly maxLineBytes: number) {}

  /** One line of `rg --json` output, without its newline. */
  readonly record = (record: Buffer): void => {
    this.records++
    if (startsWith(record, MATCH)) return this.match(parse(record))
    if (SKIPPED.some((prefix) => startsWith(record, prefix))) return
    const value = parse(record)
    const type = (value as { type?: unknown } | null)?.type
    if (type === 'match') return this.match(value)
    if (typeof type !== 'string' || !KNOWN_TYPES.has(type)) throw new MalformedOutput(`unexpected record ${JSON.stringify(record.subarray(0, 80).toString('utf8'))}`)
  }

  /** Files in path order, lines ascending: the same on every run whatever order ripgrep's threads finished in. */
  files(): GrepFile[] {
    const files = [...this.byPath.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    for (const file of files) file.lines.sort((a, b) => a.line - b.line)
    return files
  }

  private match(value: unknown): void {
    const data = (value as { data?: { path?: Data; lines?: Data; line_number?: unknown } } | null)?.data
    const line = data?.line_number
    if (!data || typeof line !== 'number' || !data.path || !data.lines) throw new MalformedOutput('a match record without path, lines or line_number')
    const file = this.file(data.path)
    file.lines.push({ line, ...this.preview(data.lines) })
    this.total++
  }

  private file(path: Data): GrepFile {
    const id = typeof path.text === 'string' ? path.text : typeof path.bytes === 'string' ? `\0${path.bytes}` : undefined
    if (id === undefined) throw new MalformedOutput('a path that is neither text nor bytes')
    let file = this.byPath.get(id)
    if (!file) {
      const printed = typeof path.text === 'string' ? Buffer.from(path.text, 'utf8') : Buffer.from(path.bytes as string, 'base64')
      const rel = relativeBytes(this.root, printed)
      if (!rel) throw new MalformedOutput(`a path outside the search root: ${decodeLossy(printed)}`)
      file = { path: joinDisplay(this.root.display, decodeLossy(rel)), key: pathKey(rel), lines: [] }
      this.byPath.set(id, file)
    }
    return file
  }

  private preview(lines: Data): { preview: string | null; truncated: boolean } {
    if (typeof lines.text !== 'string') {
      if (typeof lines.bytes !== 'string') throw new MalformedOutput('a line that is neither text nor bytes')
      return { preview: null, truncated: false }
    }
    let text = lines.text
    if (text.endsWith('\n')) text = text.slice(0, text.endsWith('\r\n') ? -2 : -1)
    const cut = truncateUtf8(text, this.maxLineBytes)
    return { preview: cut.text, truncated: cut.truncated }
  }
}

function parse(record: Buffer): unknown {
  try {
    return JSON.parse(record.toString('utf8'))
  } catch {
    throw new MalformedOutput(`a record that is not JSON: ${JSON.stringify(record.subarray(0, 80).toString('utf8'))}`)
  }
}
