import type { GrepFileValue, GrepLineValue } from './grep-text.ts'
import type { SearchRoot } from './paths.ts'
import { decodeLossy, joinDisplay, pathKey, relativeBytes, relativeKey, sortInPathOrder, truncateUtf8 } from './paths.ts'

/**
 * Splits a byte stream into records that end with `separator` (a newline for `rg --json`, NUL for
 * `rg --files --null`). It holds at most one unfinished record, as bytes: the raw output is never one string. The
 * separator is one ASCII byte, so a cut there never splits a UTF-8 character; `latin1` (one character per byte)
 * keeps any name, UTF-8 or not, exact.
 */
export class RecordSplitter {
  private pending: Buffer[] = []
  private pendingBytes = 0
  private readonly separatorChar: string

  constructor(private readonly separator: 0x0a | 0x00, private readonly encoding: 'utf8' | 'latin1', private readonly onRecord: (record: string) => void) {
    this.separatorChar = String.fromCharCode(separator)
  }

  /** Bytes of the record still waiting for its separator. */
  get pendingLength(): number {
    return this.pendingBytes
  }

  push(chunk: Buffer): void {
    const last = chunk.lastIndexOf(this.separator)
    if (last === -1) {
      this.pending.push(chunk)
      this.pendingBytes += chunk.length
      return
    }
    let start = 0
    if (this.pendingBytes > 0) {
      const first = chunk.indexOf(this.separator)
      this.pending.push(chunk.subarray(0, first))
      const record = Buffer.concat(this.pending).toString(this.encoding)
      this.pending = []
      this.pendingBytes = 0
      this.onRecord(record)
      start = first + 1
    }
    if (start <= last) {
      // The complete records of this chunk, decoded at once and cut apart as a string.
      const text = chunk.toString(this.encoding, start, last)
      let from = 0
      let end: number
      while ((end = text.indexOf(this.separatorChar, from)) !== -1) {
        this.onRecord(text.slice(from, end))
        from = end + 1
      }
      this.onRecord(from === 0 ? text : text.slice(from))
    }
    if (last + 1 < chunk.length) {
      this.pending.push(chunk.subarray(last + 1))
      this.pendingBytes += chunk.length - last - 1
    }
  }

  /** The stream ended: a last record without its separator still counts. */
  end(): void {
    if (this.pendingBytes === 0) return
    const record = Buffer.concat(this.pending).toString(this.encoding)
    this.pending = []
    this.pendingBytes = 0
    this.onRecord(record)
  }
}

/** ripgrep printed something this parser cannot read; the tool reports SEARCH_FAILED. */
export class MalformedOutput extends Error {
  override name = 'MalformedOutput'
}

/** A file of grep's value, with what path order needs. */
export interface GrepFile extends GrepFileValue {
  /** The path below the root, for path order (see pathKey). */
  readonly key: string
  readonly lines: GrepLineValue[]
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

  private readonly rootKey: string

  constructor(private readonly root: SearchRoot, private readonly maxLineBytes: number) {
    this.rootKey = pathKey(root.bytes)
  }

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

  /**
   * The fast path: only the path (once per file), the line and its number are decoded, never the submatches. No
   * key can occur inside a JSON string (its quotes would be escaped there), so the first `,"lines":` and the last
   * `,"line_number":` are the fields.
   */
  private match(record: string): void {
    const pathEnd = record.indexOf(LINES, MATCH.length)
    const numberAt = record.lastIndexOf(LINE_NUMBER)
    const numberEnd = numberAt === -1 ? -1 : record.indexOf(',', numberAt + LINE_NUMBER.length)
    if (pathEnd === -1 || numberAt < pathEnd || numberEnd === -1) return this.matchValue(parse(record))
    const pathJson = record.slice(MATCH.length, pathEnd)
    let file = this.lastFile
    if (file === undefined || pathJson !== this.lastPath) {
      file = this.file(plainText(pathJson) ?? parse(pathJson) as Data)
      this.lastFile = file
      this.lastPath = pathJson
    }
    this.add(file, Number(record.slice(numberAt + LINE_NUMBER.length, numberEnd)), lineText(record.slice(pathEnd + LINES.length, numberAt)))
  }

  private matchValue(value: unknown): void {
    const data = (value as { data?: { path?: Data; lines?: Data; line_number?: unknown } } | null)?.data
    if (!data?.path || !data.lines) throw new MalformedOutput('a match record without path or lines')
    this.add(this.file(data.path), data.line_number, dataText(data.lines))
  }

  /** `text`: the line without its terminator; null: not UTF-8. */
  private add(file: GrepFile, line: unknown, text: string | null): void {
    if (typeof line !== 'number' || !Number.isSafeInteger(line) || line < 1) throw new MalformedOutput('a match record without a line number')
    if (text === null) {
      file.lines.push({ line, preview: null, truncated: false })
    } else {
      const cut = truncateUtf8(text, this.maxLineBytes)
      // A kept preview must not pin the chunk of raw output it was cut from: copy it out (a cut one is fresh).
      file.lines.push({ line, preview: cut.truncated ? cut.text : detach(cut.text), truncated: cut.truncated })
    }
    this.total++
  }

  private file(path: Data | null): GrepFile {
    const id = typeof path?.text === 'string' ? path.text : typeof path?.bytes === 'string' ? `\0${path.bytes}` : undefined
    if (id === undefined) throw new MalformedOutput('a path that is neither text nor bytes')
    let file = this.byPath.get(id)
    if (!file) {
      file = typeof path?.text === 'string' && ASCII.test(path.text) ? this.asciiFile(path.text) : this.bytesFile(path)
      this.byPath.set(id, file)
    }
    return file
  }

  /** The common case: an ASCII path is its own bytes, its own key and its own display. */
  private asciiFile(text: string): GrepFile {
    const rel = relativeKey(this.rootKey, text)
    if (rel === undefined) throw new MalformedOutput(`a path outside the search root: ${text}`)
    return { path: joinDisplay(this.root.display, rel), key: rel, lines: [] }
  }

  private bytesFile(path: Data | null): GrepFile {
    const printed = typeof path?.text === 'string' ? Buffer.from(path.text, 'utf8') : Buffer.from(path?.bytes as string, 'base64')
    const rel = relativeBytes(this.root, printed)
    if (!rel) throw new MalformedOutput(`a path outside the search root: ${decodeLossy(printed)}`)
    return { path: joinDisplay(this.root.display, decodeLossy(rel)), key: pathKey(rel), lines: [] }
  }
}

const TEXT_OPEN = '{"text":"'
const TEXT_CLOSE = '"}'

/**
 * The line of a match's `lines` JSON, without its terminator (`\n`, or the `\r\n` of a CRLF line). A line with no
 * escape but its terminator is read straight from the JSON (it is its own decoding); anything else is parsed.
 */
function lineText(json: string): string | null {
  if (json.startsWith(TEXT_OPEN) && json.endsWith(TEXT_CLOSE)) {
    let end = json.length - TEXT_CLOSE.length
    if (json.endsWith('\\r\\n"}')) end -= 4
    else if (json.endsWith('\\n"}')) end -= 2
    const body = json.slice(TEXT_OPEN.length, end)
    if (!body.includes('\\')) return body
    // Escapes inside: decode just the string literal, terminator and all.
    return dataText({ text: parseString(json.slice(TEXT_OPEN.length - 1, -1)) })
  }
  return dataText(parse(json) as Data | null)
}

/** `{"text":"…"}` without escapes, as `{ text }`; undefined for anything else. */
function plainText(json: string): Data | undefined {
  if (!json.startsWith(TEXT_OPEN) || !json.endsWith(TEXT_CLOSE)) return undefined
  const body = json.slice(TEXT_OPEN.length, -TEXT_CLOSE.length)
  // Kept as the file's path: copied out of the chunk of raw output it was sliced from.
  return body.includes('\\') ? undefined : { text: detach(body) }
}

function parseString(literal: string): string {
  const value = parse(literal)
  if (typeof value !== 'string') throw new MalformedOutput('a line that is not a JSON string')
  return value
}

function dataText(lines: Data | null): string | null {
  if (typeof lines?.text !== 'string') {
    if (typeof lines?.bytes !== 'string') throw new MalformedOutput('a line that is neither text nor bytes')
    return null
  }
  const text = lines.text
  return text.endsWith('\n') ? text.slice(0, text.endsWith('\r\n') ? -2 : -1) : text
}

const ASCII = /^[\x00-\x7f]*$/

/** A copy of `text` that shares no memory with the string it was sliced from. */
function detach(text: string): string {
  return ` ${text}`.slice(1)
}

function parse(record: string): unknown {
  try {
    return JSON.parse(record)
  } catch {
    throw new MalformedOutput(`a record that is not JSON: ${JSON.stringify(record.slice(0, 80))}`)
  }
}
