import { StringDecoder } from 'node:string_decoder'
import type { SearchRoot } from './paths.ts'
import { decodeLossy, joinDisplay, pathKey, relativeBytes, sortInPathOrder, truncateUtf8 } from './paths.ts'

/**
 * Splits a byte stream into records that end with `separator` (a newline for `rg --json`, NUL for
 * `rg --files --null`). It holds at most one unfinished record: the raw output is never one string. `utf8` for
 * JSON (a character cut between chunks is completed by the next one), `latin1` for names (one character per byte,
 * so any name, UTF-8 or not, survives exactly).
 */
export class RecordSplitter {
  private readonly decoder: StringDecoder
  private pending = ''

  constructor(private readonly separator: '\n' | '\0', encoding: 'utf8' | 'latin1', private readonly onRecord: (record: string) => void) {
    this.decoder = new StringDecoder(encoding)
  }

  /** Characters of the record still waiting for its separator. */
  get pendingLength(): number {
    return this.pending.length
  }

  push(chunk: Buffer): void {
    const text = this.decoder.write(chunk)
    let end = text.indexOf(this.separator)
    if (end === -1) {
      this.pending += text
      return
    }
    const first = this.pending + text.slice(0, end)
    this.pending = ''
    this.onRecord(first)
    let start = end + 1
    while ((end = text.indexOf(this.separator, start)) !== -1) {
      this.onRecord(text.slice(start, end))
      start = end + 1
    }
    this.pending = text.slice(start)
  }

  /** The stream ended: a last record without its separator still counts. */
  end(): void {
    const rest = this.pending + this.decoder.end()
    this.pending = ''
    if (rest !== '') this.onRecord(rest)
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
  /** The path below the root, for path order (see pathKey). */
  readonly key: string
  readonly lines: GrepLine[]
}

/** ripgrep's JSON form of a path or a line: `text` when it is UTF-8, else base64 `bytes`. */
interface Data {
  text?: unknown
  bytes?: unknown
}

// rg prints "type" first in begin/match/context/end records, and a match's fields in this order; a record that does
// not look like that is parsed in full and checked.
const MATCH = '{"type":"match","data":{"path":'
const LINES = ',"lines":'
const LINE_NUMBER = ',"line_number":'
const SKIPPED = ['{"type":"begin"', '{"type":"end"', '{"type":"context"']
const KNOWN_TYPES = new Set(['begin', 'end', 'context', 'summary'])

/** Keeps the matching lines of an `rg --json` stream, grouped by file; `total` counts matching lines. */
export class GrepCollector {
  private readonly byPath = new Map<string, GrepFile>()
  /** The raw path JSON of the last match, and its file: a file's matches come one after another. */
  private lastPath = ''
  private lastFile: GrepFile | undefined
  total = 0

  constructor(private readonly root: SearchRoot, private readonly maxLineBytes: number) {}

  /** One line of `rg --json` output, without its newline. */
  readonly record = (record: string): void => {
    if (record.startsWith(MATCH)) return this.match(record)
    if (SKIPPED.some((prefix) => record.startsWith(prefix))) return
    const value = parse(record)
    const type = (value as { type?: unknown } | null)?.type
    if (type === 'match') return this.matchValue(value)
    if (typeof type !== 'string' || !KNOWN_TYPES.has(type)) throw new MalformedOutput(`unexpected record ${JSON.stringify(record.slice(0, 80))}`)
  }

  /** Files in path order, lines ascending: the same on every run whatever order ripgrep's threads finished in. */
  files(): GrepFile[] {
    const files = [...this.byPath.values()]
    sortInPathOrder(files, (file) => file.key)
    for (const file of files) file.lines.sort((a, b) => a.line - b.line)
    return files
  }

  /** The fast path: only the path (once per file), the line and its number are decoded; submatches never are. */
  private match(record: string): void {
    const pathEnd = record.indexOf(LINES, MATCH.length)
    const linesEnd = pathEnd === -1 ? -1 : record.indexOf(LINE_NUMBER, pathEnd)
    const numberStart = linesEnd + LINE_NUMBER.length
    const numberEnd = linesEnd === -1 ? -1 : record.indexOf(',', numberStart)
    if (numberEnd === -1) return this.matchValue(parse(record))
    const line = Number(record.slice(numberStart, numberEnd))
    const pathJson = record.slice(MATCH.length, pathEnd)
    let file = this.lastFile
    if (file === undefined || pathJson !== this.lastPath) {
      file = this.file(parse(pathJson) as Data)
      this.lastFile = file
      this.lastPath = pathJson
    }
    this.add(file, line, parse(record.slice(pathEnd + LINES.length, linesEnd)) as Data)
  }

  private matchValue(value: unknown): void {
    const data = (value as { data?: { path?: Data; lines?: Data; line_number?: unknown } } | null)?.data
    if (!data?.path || !data.lines) throw new MalformedOutput('a match record without path or lines')
    this.add(this.file(data.path), data.line_number, data.lines)
  }

  private add(file: GrepFile, line: unknown, lines: Data | null): void {
    if (typeof line !== 'number' || !Number.isSafeInteger(line) || line < 1) throw new MalformedOutput('a match record without a line number')
    file.lines.push({ line, ...this.preview(lines) })
    this.total++
  }

  private file(path: Data | null): GrepFile {
    const id = typeof path?.text === 'string' ? path.text : typeof path?.bytes === 'string' ? `\0${path.bytes}` : undefined
    if (id === undefined) throw new MalformedOutput('a path that is neither text nor bytes')
    let file = this.byPath.get(id)
    if (!file) {
      const printed = typeof path?.text === 'string' ? Buffer.from(path.text, 'utf8') : Buffer.from(path?.bytes as string, 'base64')
      const rel = relativeBytes(this.root, printed)
      if (!rel) throw new MalformedOutput(`a path outside the search root: ${decodeLossy(printed)}`)
      file = { path: joinDisplay(this.root.display, decodeLossy(rel)), key: pathKey(rel), lines: [] }
      this.byPath.set(id, file)
    }
    return file
  }

  private preview(lines: Data | null): { preview: string | null; truncated: boolean } {
    if (typeof lines?.text !== 'string') {
      if (typeof lines?.bytes !== 'string') throw new MalformedOutput('a line that is neither text nor bytes')
      return { preview: null, truncated: false }
    }
    let text = lines.text
    if (text.endsWith('\n')) text = text.slice(0, text.endsWith('\r\n') ? -2 : -1)
    const cut = truncateUtf8(text, this.maxLineBytes)
    return { preview: cut.text, truncated: cut.truncated }
  }
}

function parse(record: string): unknown {
  try {
    return JSON.parse(record)
  } catch {
    throw new MalformedOutput(`a record that is not JSON: ${JSON.stringify(record.slice(0, 80))}`)
  }
}
