import { charBoundary, cutUtf8, decodeLossy } from '@deepseek-ai/dsh-text'
import type { SearchRoot } from './paths.ts'
import { joinDisplay, pathKey, relativeBytes, relativeKey } from './paths.ts'
import type { GrepLineValue } from './values.ts'

/** Receives one record: `bytes[start..end)`, without its separator. The bytes are only valid during the call. */
export type RecordHandler = (bytes: Buffer, start: number, end: number) => void

/**
 * Splits a byte stream into records that end with `separator` (a newline for `rg --json`, NUL for
 * `rg --files --null`). It holds at most one unfinished record: the raw output is never kept whole, and a record
 * inside a chunk is handed over in place, without a copy.
 */
export class RecordSplitter {
  private pending: Buffer[] = []
  private pendingBytes = 0

  constructor(
    private readonly separator: 0x0a | 0x00,
    private readonly onRecord: RecordHandler,
  ) {}

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
      this.flush()
      start = first + 1
    }
    while (start <= last) {
      const end = chunk.indexOf(this.separator, start)
      this.onRecord(chunk, start, end)
      start = end + 1
    }
    if (last + 1 < chunk.length) {
      this.pending.push(chunk.subarray(last + 1))
      this.pendingBytes += chunk.length - last - 1
    }
  }

  /** The stream ended: a last record without its separator still counts. */
  end(): void {
    if (this.pendingBytes > 0) this.flush()
  }

  private flush(): void {
    const record = Buffer.concat(this.pending)
    this.pending = []
    this.pendingBytes = 0
    this.onRecord(record, 0, record.length)
  }
}

/** ripgrep printed something this parser cannot read; the tool reports SEARCH_FAILED. */
export class MalformedOutput extends Error {
  override name = 'MalformedOutput'
}

/**
 * Where the collector hands each match, in ripgrep's order: a file's matches one after another, files in whatever
 * order ripgrep's threads finished them.
 */
export interface MatchSink {
  /** The matches that follow are of this file: its path below the root (a latin1 key, see pathKey) and as shown. */
  file(key: string, path: string): void
  line(line: GrepLineValue): void
  /**
   * A matching line shown whole, as `line` with `{ line, preview, truncated: false }` would be, whose preview is the
   * UTF-8 `bytes[start..end)` (lent for the call only): the sink makes the string only if it keeps one.
   */
  utf8Line?(line: number, bytes: Buffer, start: number, end: number): void
  /** A line around a match (asked for with context, before, after); without this method such lines are skipped. */
  context?(line: GrepLineValue): void
}

/** ripgrep's JSON form of a path or a line: `text` when it is UTF-8, else base64 `bytes`. */
interface Data {
  text?: unknown
  bytes?: unknown
}

// rg prints "type" first in begin/match/context/end records, and a match's fields in this order; a record that does
// not look like that is parsed in full and checked.
const TYPE = Buffer.from('{"type":"')
const MATCH = Buffer.from('{"type":"match","data":{"path":')
const LINES = Buffer.from(',"lines":')
const LINE_NUMBER = Buffer.from(',"line_number":')
const TEXT_OPEN = Buffer.from('{"text":"')
const BYTES_OPEN = Buffer.from('{"bytes":"')
const BEGIN = Buffer.from('begin"')
const END = Buffer.from('end"')
const CONTEXT = Buffer.from('context"')
const SUBMATCHES = Buffer.from(',"submatches":[{"match":')
const START = Buffer.from(',"start":')
const END_AT = Buffer.from(',"end":')
const KNOWN_TYPES = new Set(['begin', 'end', 'context', 'summary'])
const BACKSLASH = 0x5c
const QUOTE = 0x22
const BRACE_CLOSE = 0x7d
const LETTER_N = 0x6e
const LETTER_R = 0x72
const LETTER_U = 0x75

/** Whether `bytes[at..]` starts with `prefix` (a JS loop: cheaper than a native call for a few bytes). */
function bytesAt(bytes: Buffer, at: number, end: number, prefix: Buffer): boolean {
  if (end - at < prefix.length) return false
  for (let i = 0; i < prefix.length; i++) if (bytes[at + i] !== prefix[i]) return false
  return true
}

/** Where the body of `{"text":"…"}` in `bytes[start..end)` starts (it ends at `end - 2`), or -1 for another shape. */
function textBody(bytes: Buffer, start: number, end: number): number {
  return end - start >= TEXT_OPEN.length + 2 &&
    bytesAt(bytes, start, end, TEXT_OPEN) &&
    bytes[end - 2] === 0x22 &&
    bytes[end - 1] === 0x7d
    ? start + TEXT_OPEN.length
    : -1
}

/**
 * Reads the matching lines of an `rg --json` stream and hands them to a sink, file by file; `total` counts matching
 * lines. It works on the bytes: only a new path, a line number and the shown part of each line are decoded — never a
 * begin or end record, or the rest of a long line; of the submatches only the first one's offsets, and only for a
 * line too long to show whole.
 */
export class GrepCollector {
  /** The raw path JSON of the last match: a file's matches come one after another. */
  private lastPath: Buffer | undefined
  /** The key of the file the sink was last told of. */
  private lastKey: string | undefined
  private readonly rootKey: string
  /** Where an escaped line is decoded (unescaped): grown to the longest needed, kept for the collector's life. */
  private scratch = Buffer.allocUnsafe(0)
  total = 0

  /** `multiline`: the search lets a match span lines (its record then holds them all). */
  constructor(
    private readonly root: SearchRoot,
    private readonly maxLineBytes: number,
    private readonly sink: MatchSink,
    private readonly multiline = false,
  ) {
    this.rootKey = pathKey(root.bytes)
  }

  /** One line of `rg --json` output, without its newline. */
  readonly record: RecordHandler = (bytes, start, end) => {
    if (bytesAt(bytes, start, end, TYPE)) {
      const at = start + TYPE.length
      switch (bytes[at]) {
        case 0x6d:
          if (bytesAt(bytes, start, end, MATCH)) return this.match(bytes, start, end)
          break
        case 0x62:
          if (bytesAt(bytes, at, end, BEGIN)) return
          break
        case 0x65:
          if (bytesAt(bytes, at, end, END)) return
          break
        case 0x63:
          if (bytesAt(bytes, at, end, CONTEXT)) {
            if (this.sink.context !== undefined) this.contextValue(parse(bytes.toString('utf8', start, end)))
            return
          }
          break
      }
    }
    const text = bytes.toString('utf8', start, end)
    const value = parse(text)
    const type = (value as { type?: unknown } | null)?.type
    if (type === 'match') return this.matchValue(value)
    if (typeof type !== 'string' || !KNOWN_TYPES.has(type))
      throw new MalformedOutput(`unexpected record ${JSON.stringify(text.slice(0, 80))}`)
  }

  /**
   * The fast path. No key can occur inside a JSON string (its quotes would be escaped there), so the first
   * `,"lines":` after the path and the first `,"line_number":` after that are the fields. Most records need
   * neither searched: a file's matches come one after another, so the path is first compared with the last one; and
   * the first backslash of a line is usually its terminator (`\n"}` or `\r\n"}`), right before `,"line_number":`.
   */
  private match(bytes: Buffer, start: number, end: number): void {
    const pathStart = start + MATCH.length
    const same = this.samePath(bytes, pathStart, end)
    const pathEnd = same ? pathStart + (this.lastPath as Buffer).length : bytes.indexOf(LINES, pathStart)
    if (pathEnd === -1 || pathEnd >= end) return this.matchValue(parse(bytes.toString('utf8', start, end)))
    const linesStart = pathEnd + LINES.length
    let numberAt = -1
    let bodyEnd = -1
    let escape = -1
    if (bytesAt(bytes, linesStart, end, TEXT_OPEN)) {
      escape = bytes.indexOf(BACKSLASH, linesStart + TEXT_OPEN.length)
      // The first backslash cannot be escaped itself, and what follows the lines object is `,"line_number":`.
      if (
        escape !== -1 &&
        bytes[escape + 1] === LETTER_N &&
        bytes[escape + 2] === QUOTE &&
        bytes[escape + 3] === BRACE_CLOSE &&
        bytesAt(bytes, escape + 4, end, LINE_NUMBER)
      ) {
        numberAt = escape + 4
        bodyEnd = escape
      } else if (
        escape !== -1 &&
        bytes[escape + 1] === LETTER_R &&
        bytes[escape + 2] === BACKSLASH &&
        bytes[escape + 3] === LETTER_N &&
        bytes[escape + 4] === QUOTE &&
        bytes[escape + 5] === BRACE_CLOSE &&
        bytesAt(bytes, escape + 6, end, LINE_NUMBER)
      ) {
        numberAt = escape + 6
        bodyEnd = escape
      }
    }
    // Else the first `,"line_number":` after the lines object's start: no string holds one unescaped.
    if (numberAt === -1) numberAt = bytes.indexOf(LINE_NUMBER, linesStart)
    if (numberAt >= end) numberAt = -1
    let digit = numberAt + LINE_NUMBER.length
    let line = 0
    for (let c = bytes[digit] ?? 0; c >= 0x30 && c <= 0x39 && digit < end; c = bytes[++digit] ?? 0)
      line = line * 10 + c - 0x30
    if (numberAt < linesStart || digit === numberAt + LINE_NUMBER.length || bytes[digit] !== 0x2c) {
      return this.matchValue(parse(bytes.toString('utf8', start, end)))
    }
    if (!same) this.newFile(bytes, pathStart, pathEnd)
    const body = linesStart + TEXT_OPEN.length
    // A line whose only escape is its terminator: the JSON bytes are the line's own UTF-8, and only the shown part
    // is decoded — by the sink, when it keeps the line, if it takes the bytes.
    if (bodyEnd !== -1 && bodyEnd - body <= this.maxLineBytes && this.sink.utf8Line !== undefined) {
      this.total++
      return this.sink.utf8Line(line, bytes, body, bodyEnd)
    }
    const preview =
      bodyEnd !== -1
        ? this.plain(line, bytes, body, bodyEnd, digit, end)
        : this.line(line, bytes, linesStart, numberAt, escape, digit, end)
    if (preview !== undefined) this.keep(preview)
  }

  /** The file of the path JSON in `bytes[start..end)`, which differs from the last match's: it becomes the last. */
  private newFile(bytes: Buffer, start: number, end: number): void {
    // A copy (the record's bytes are only lent): one native copy, cheaper than Buffer.from of a subarray.
    const path = Buffer.allocUnsafe(end - start)
    bytes.copy(path, 0, start, end)
    const body = textBody(path, 0, path.length)
    const plain = body !== -1 && path.indexOf(BACKSLASH, body) === -1
    this.file(
      plain ? { text: path.toString('utf8', body, path.length - 2) } : (parse(path.toString('utf8')) as Data | null),
    )
    this.lastPath = path
  }

  /**
   * Whether the path JSON at `bytes[start..]` is the last match's, followed by `,"lines":`. A JSON object ends
   * itself: equal bytes are the same path. One native comparison of the ~100 bytes costs less than a loop over them.
   */
  private samePath(bytes: Buffer, start: number, end: number): boolean {
    const last = this.lastPath
    return (
      last !== undefined &&
      bytesAt(bytes, start + last.length, end, LINES) &&
      last.compare(bytes, start, start + last.length) === 0
    )
  }

  /** Any match record, parsed in full (a shape the fast path does not know). */
  private matchValue(value: unknown): void {
    const data = (value as { data?: { path?: Data; lines?: Data; line_number?: unknown; submatches?: unknown } } | null)
      ?.data
    if (!data?.path || !data.lines) throw new MalformedOutput('a match record without path or lines')
    const line = data.line_number
    if (typeof line !== 'number' || !Number.isSafeInteger(line) || line < 1)
      throw new MalformedOutput('a match record without a line number')
    this.lastPath = undefined
    this.file(data.path)
    const first = (Array.isArray(data.submatches) ? data.submatches[0] : undefined) as
      | { start?: unknown; end?: unknown }
      | undefined
    const matched =
      typeof first?.start === 'number' && typeof first.end === 'number'
        ? { start: first.start, end: first.end }
        : undefined
    this.keep(preview(line, textOf(data.lines), this.maxLineBytes, matched))
  }

  /** A context record (a line around a match), parsed in full: only calls that ask for context have them. */
  private contextValue(value: unknown): void {
    const data = (value as { data?: { path?: Data; lines?: Data; line_number?: unknown } } | null)?.data
    const line = data?.line_number
    if (!data?.path || !data.lines || typeof line !== 'number' || !Number.isSafeInteger(line) || line < 1)
      throw new MalformedOutput('a context record without path, lines or line number')
    this.lastPath = undefined
    this.file(data.path)
    this.sink.context?.({ ...preview(line, textOf(data.lines), this.maxLineBytes), context: true })
  }

  private keep(line: GrepLineValue): void {
    this.total++
    this.sink.line(this.multiline && line.preview?.includes('\n') === true ? { ...line, multiline: true } : line)
  }

  /**
   * The preview of a line without escapes, `bytes[body..bodyEnd)` (its terminator left out already); the record's
   * submatches follow at `bytes[after..end)`.
   */
  private plain(line: number, bytes: Buffer, body: number, bodyEnd: number, after: number, end: number): GrepLineValue {
    if (bodyEnd - body <= this.maxLineBytes)
      return { line, preview: bytes.toString('utf8', body, bodyEnd), truncated: false }
    const matched = firstMatch(bytes, after, end)
    if (matched === undefined || matched.end <= this.maxLineBytes) {
      const cut = charBoundary(bytes, body + this.maxLineBytes, body)
      return { line, preview: bytes.toString('utf8', body, cut), truncated: true }
    }
    return { line, preview: around(bytes, body, bodyEnd, matched, this.maxLineBytes), truncated: true }
  }

  /**
   * The preview of the `lines` JSON in `bytes[start..end)`; `firstEscape` is the first backslash at or after its
   * text's body when already known (-1 when not); the record's submatches follow at `bytes[after..recordEnd)`.
   */
  private line(
    line: number,
    bytes: Buffer,
    start: number,
    end: number,
    firstEscape: number,
    after: number,
    recordEnd: number,
  ): GrepLineValue | undefined {
    const body = textBody(bytes, start, end)
    if (body === -1) {
      // Not UTF-8: base64 bytes, never decoded (a minified line may be megabytes of it).
      if (
        bytesAt(bytes, start, end, BYTES_OPEN) &&
        bytes[end - 2] === QUOTE &&
        bytes[end - 1] === BRACE_CLOSE &&
        bytes.indexOf(QUOTE, start + BYTES_OPEN.length) === end - 2
      ) {
        return { line, preview: null, truncated: false }
      }
      return preview(
        line,
        textOf(parse(bytes.toString('utf8', start, end)) as Data | null),
        this.maxLineBytes,
        firstMatch(bytes, after, recordEnd),
      )
    }
    // The terminator: `\n`, or `\r\n` for a CRLF line; none on a last line without one.
    let bodyEnd = end - 2
    if (
      bodyEnd - body >= 4 &&
      bytes[bodyEnd - 4] === BACKSLASH &&
      bytes[bodyEnd - 3] === LETTER_R &&
      bytes[bodyEnd - 2] === BACKSLASH &&
      bytes[bodyEnd - 1] === LETTER_N
    )
      bodyEnd -= 4
    else if (bodyEnd - body >= 2 && bytes[bodyEnd - 2] === BACKSLASH && bytes[bodyEnd - 1] === LETTER_N) bodyEnd -= 2
    const escape = firstEscape === -1 ? bytes.indexOf(BACKSLASH, body) : firstEscape
    // No escape (so the terminator above was a real one).
    if (escape === -1 || escape >= bodyEnd) return this.plain(line, bytes, body, bodyEnd, after, recordEnd)
    return this.unescaped(line, bytes, body, end - 2, firstMatch(bytes, after, recordEnd))
  }

  /**
   * The preview of a JSON string body with escapes, `bytes[body..close)`, decoded to UTF-8 bytes without a string
   * (jsonStringBytes): only what the preview needs — its first `maxLineBytes + 3` bytes, or the whole line when its
   * first match lies past the cap. A line shown whole goes to the sink as bytes, as a plain one does; undefined then.
   * A body the decoder does not take (a lone surrogate, a byte JSON forbids) is decoded by JSON.parse.
   */
  private unescaped(
    line: number,
    bytes: Buffer,
    body: number,
    close: number,
    matched: ByteRange | undefined,
  ): GrepLineValue | undefined {
    const max = this.maxLineBytes
    const whole = matched !== undefined && matched.end > max
    // Beyond `max + 3` bytes the line is longer than the cap even without a `\r\n` terminator.
    const limit = whole ? close - body : Math.min(close - body, max + 3)
    if (this.scratch.length < limit + 3) this.scratch = Buffer.allocUnsafe(Math.max(limit + 3, 2 * this.scratch.length))
    const out = this.scratch
    const decoded = jsonStringBytes(bytes, body, close, out, limit)
    if (decoded === undefined) return this.escaped(line, bytes, body, close, matched)
    let length = decoded.length
    if (decoded.complete) {
      if (length > 0 && out[length - 1] === 0x0a) length -= length > 1 && out[length - 2] === 0x0d ? 2 : 1
      if (length <= max) {
        if (!this.multiline && this.sink.utf8Line !== undefined) {
          this.total++
          this.sink.utf8Line(line, out, 0, length)
          return undefined
        }
        return { line, preview: out.toString('utf8', 0, length), truncated: false }
      }
      // A view that ends with the line: around looks at the byte after it, and the scratch holds stale bytes there.
      if (whole) return { line, preview: around(out.subarray(0, length), 0, length, matched, max), truncated: true }
    }
    return { line, preview: out.toString('utf8', 0, charBoundary(out, max, 0)), truncated: true }
  }

  /**
   * The preview of a JSON string body with escapes, `bytes[body..close)` (`close` is its closing quote). Only a
   * prefix long enough for the preview is decoded: each escape stands for at most as many UTF-8 bytes as it has
   * (`\n` for one, `\u00e9` for two), so `6 × (maxLineBytes + 3)` bytes of JSON, cut between escapes and
   * characters, decode to more than `maxLineBytes + 2` bytes: cut, and still longer than the cap once a `\r\n`
   * terminator is taken off. A minified line of megabytes is not decoded whole for a 2000-byte preview — unless its
   * first match lies past the cap: then the line is decoded to show the text around it.
   */
  private escaped(
    line: number,
    bytes: Buffer,
    body: number,
    close: number,
    matched: ByteRange | undefined,
  ): GrepLineValue {
    const enough = 6 * (this.maxLineBytes + 3)
    if (close - body <= enough || (matched !== undefined && matched.end > this.maxLineBytes)) {
      const text = parse(bytes.toString('utf8', body - 1, close + 1))
      if (typeof text !== 'string') throw new MalformedOutput('a line that is not a JSON string')
      return preview(line, stripTerminator(text), this.maxLineBytes, matched)
    }
    const cut = escapeBoundary(bytes, body, body + enough)
    const text = parse(`${bytes.toString('utf8', body - 1, cut)}"`)
    if (typeof text !== 'string') throw new MalformedOutput('a line that is not a JSON string')
    return { line, preview: cutUtf8(text, this.maxLineBytes).text, truncated: true }
  }

  /** Tells the sink of the file of a path JSON value, unless it is the file it was last told of. */
  private file(path: Data | null): void {
    if (typeof path?.text !== 'string' && typeof path?.bytes !== 'string')
      throw new MalformedOutput('a path that is neither text nor bytes')
    const { key, display } =
      typeof path.text === 'string' && ASCII.test(path.text) ? this.asciiFile(path.text) : this.bytesFile(path)
    if (key === this.lastKey) return
    this.lastKey = key
    this.sink.file(key, display)
  }

  /** The common case: an ASCII path is its own bytes, its own key and its own display. */
  private asciiFile(text: string): { key: string; display: string } {
    const rel = relativeKey(this.rootKey, text)
    if (rel === undefined) throw new MalformedOutput(`a path outside the search root: ${text}`)
    return { key: rel, display: joinDisplay(this.root.display, rel) }
  }

  private bytesFile(path: Data | null): { key: string; display: string } {
    const printed =
      typeof path?.text === 'string' ? Buffer.from(path.text, 'utf8') : Buffer.from(path?.bytes as string, 'base64')
    const rel = relativeBytes(this.root, printed)
    if (!rel) throw new MalformedOutput(`a path outside the search root: ${decodeLossy(printed)}`)
    return { key: pathKey(rel), display: joinDisplay(this.root.display, decodeLossy(rel)) }
  }
}

/** A byte range of a line: where its first match is. */
interface ByteRange {
  readonly start: number
  readonly end: number
}

/**
 * The first submatch's byte range, from the record's tail `bytes[from..end)` (after the line number): ripgrep
 * prints `,"submatches":[{"match":{…},"start":N,"end":M}`, and no string holds `,"start":` unescaped. Undefined
 * when it cannot be read (the preview then shows the head of the line, as without a match).
 */
function firstMatch(bytes: Buffer, from: number, end: number): ByteRange | undefined {
  const list = bytes.indexOf(SUBMATCHES, from)
  if (list === -1 || list >= end) return undefined
  const startAt = bytes.indexOf(START, list + SUBMATCHES.length)
  if (startAt === -1 || startAt >= end) return undefined
  const start = digitsAt(bytes, startAt + START.length, end)
  if (start === undefined || !bytesAt(bytes, start.next, end, END_AT)) return undefined
  const stop = digitsAt(bytes, start.next + END_AT.length, end)
  return stop === undefined ? undefined : { start: start.value, end: stop.value }
}

function digitsAt(bytes: Buffer, at: number, end: number): { value: number; next: number } | undefined {
  let value = 0
  let i = at
  for (; i < end && (bytes[i] as number) >= 0x30 && (bytes[i] as number) <= 0x39; i++)
    value = value * 10 + (bytes[i] as number) - 0x30
  return i === at ? undefined : { value, next: i }
}

/**
 * The text of the UTF-8 line `bytes[body..bodyEnd)` around its first match, which ends past the first `max` bytes:
 * `max` bytes from a quarter of them before the match (from the match itself when it is longer than the rest),
 * moved back when the line ends sooner; `…` where the line was cut, before and after. Cut on character boundaries.
 */
function around(bytes: Buffer, body: number, bodyEnd: number, matched: ByteRange, max: number): string {
  const length = bodyEnd - body
  const matchStart = Math.min(matched.start, length)
  let from = Math.max(0, matchStart - Math.floor(max / 4))
  if (Math.min(matched.end, length) - from > max) from = matchStart
  let to = Math.min(length, from + max)
  if (to === length) from = Math.max(0, length - max)
  // Forward to a character's first byte, back from the middle of one at the end.
  while (from < to && ((bytes[body + from] as number) & 0xc0) === 0x80) from++
  to = charBoundary(bytes, body + to, body + from) - body
  return `${from > 0 ? ELLIPSIS : ''}${bytes.toString('utf8', body + from, body + to)}${to < length ? ELLIPSIS : ''}`
}

const ELLIPSIS = '…'

const ASCII = /^[\x00-\x7f]*$/
/** A line's text from its JSON form; null when it is not UTF-8 (base64 `bytes`). */
function textOf(lines: Data | null): string | null {
  if (typeof lines?.text === 'string') return stripTerminator(lines.text)
  if (typeof lines?.bytes === 'string') return null
  throw new MalformedOutput('a line that is neither text nor bytes')
}

function stripTerminator(text: string): string {
  return text.endsWith('\n') ? text.slice(0, text.endsWith('\r\n') ? -2 : -1) : text
}

function preview(line: number, text: string | null, maxLineBytes: number, matched?: ByteRange): GrepLineValue {
  if (text === null) return { line, preview: null, truncated: false }
  if (matched !== undefined && matched.end > maxLineBytes) {
    const bytes = Buffer.from(text, 'utf8')
    if (bytes.length > maxLineBytes)
      return { line, preview: around(bytes, 0, bytes.length, matched, maxLineBytes), truncated: true }
  }
  const cut = cutUtf8(text, maxLineBytes)
  return { line, preview: cut.text, truncated: cut.truncated }
}

/**
 * The largest index ≤ `at` where a JSON string body starting at `body` may be cut: never inside an escape
 * (`\x` or `\uXXXX`), nor inside a UTF-8 character.
 */
function escapeBoundary(bytes: Buffer, body: number, at: number): number {
  let from = body
  for (;;) {
    const escape = bytes.indexOf(BACKSLASH, from)
    if (escape === -1 || escape >= at) break
    const next = escape + (bytes[escape + 1] === LETTER_U ? 6 : 2)
    if (next > at) return escape
    from = next
  }
  return charBoundary(bytes, at, from)
}

/**
 * The UTF-8 bytes of the JSON string body `bytes[from..close)` (between its quotes), into `out` from 0: at least the
 * first `limit` of them (a little more when a character straddles it), all of them when `complete`. Undefined for
 * what JSON.parse should judge: a lone surrogate (`\ud800`, which it keeps as such), an unknown escape, a raw
 * control character or quote.
 */
export function jsonStringBytes(
  bytes: Buffer,
  from: number,
  close: number,
  out: Buffer,
  limit: number,
): { length: number; complete: boolean } | undefined {
  let at = from
  let n = 0
  while (at < close && n < limit) {
    const byte = bytes[at] as number
    if (byte !== BACKSLASH) {
      if (byte < 0x20 || byte === QUOTE) return undefined
      out[n++] = byte
      at++
      continue
    }
    // A backslash right before the closing quote escapes it: the string does not end there.
    if (at + 1 >= close) return undefined
    const kind = bytes[at + 1]
    at += 2
    switch (kind) {
      case LETTER_N:
        out[n++] = 0x0a
        continue
      case 0x74:
        out[n++] = 0x09
        continue
      case LETTER_R:
        out[n++] = 0x0d
        continue
      case QUOTE:
      case BACKSLASH:
      case 0x2f:
        out[n++] = kind
        continue
      case 0x62:
        out[n++] = 0x08
        continue
      case 0x66:
        out[n++] = 0x0c
        continue
      case LETTER_U:
        break
      default:
        return undefined
    }
    let code = hex4(bytes, at, close)
    if (code < 0) return undefined
    at += 4
    if (code >= 0xd800 && code <= 0xdfff) {
      const low =
        code <= 0xdbff && bytes[at] === BACKSLASH && bytes[at + 1] === LETTER_U ? hex4(bytes, at + 2, close) : -1
      if (low < 0xdc00 || low > 0xdfff) return undefined
      code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00)
      at += 6
    }
    if (code < 0x80) out[n++] = code
    else if (code < 0x800) {
      out[n++] = 0xc0 | (code >> 6)
      out[n++] = 0x80 | (code & 0x3f)
    } else if (code < 0x10000) {
      out[n++] = 0xe0 | (code >> 12)
      out[n++] = 0x80 | ((code >> 6) & 0x3f)
      out[n++] = 0x80 | (code & 0x3f)
    } else {
      out[n++] = 0xf0 | (code >> 18)
      out[n++] = 0x80 | ((code >> 12) & 0x3f)
      out[n++] = 0x80 | ((code >> 6) & 0x3f)
      out[n++] = 0x80 | (code & 0x3f)
    }
  }
  return { length: n, complete: at >= close }
}

/** The four hex digits at `bytes[at..]` (before `end`) as a number; -1 when they are not that. */
function hex4(bytes: Buffer, at: number, end: number): number {
  if (at + 4 > end) return -1
  let value = 0
  for (let i = at; i < at + 4; i++) {
    const c = bytes[i] as number
    const digit =
      c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : c >= 0x41 && c <= 0x46 ? c - 0x37 : -1
    if (digit < 0) return -1
    value = value * 16 + digit
  }
  return value
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    throw new MalformedOutput(`a record that is not JSON: ${JSON.stringify(text.slice(0, 80))}`)
  }
}
