import type { Stats } from 'node:fs'
import { stat, type FileHandle } from 'node:fs/promises'
import { isUtf8 } from 'node:buffer'
import { charBoundary, completeLength, cutChars, fileKind, systemErrorReason } from '@deepseek-ai/dsh-text'
import { checkPath, openFile, WorkspaceError, type OpenedFile, type PathPolicy } from '@deepseek-ai/dsh-workspace'
import { FsError, FsErrorCode } from './errors.ts'
import type { ReadObserver } from './guard.ts'
import { messages, renderRow, type ReadCaps, type ReadPage, type ReadRow } from './text.ts'

/** Bytes read per step: large enough that a skip to a far offset is a few thousand reads, small enough to not matter. */
const CHUNK = 256 * 1024
/** A NUL byte this early means a binary file. */
const BINARY_SNIFF = 8192
const NEWLINE = 0x0a
const CR = 0x0d

export interface ReadRequest {
  /** Absolute path. */
  readonly path: string
  readonly offset: number
  readonly limit: number
  readonly signal: AbortSignal
  /** Added to a not-found message (what the model should pass instead), e.g. from `tildeHint`. */
  readonly notFoundHint?: string
  /** The workspace policy (docs/security.md#boundary): the opened descriptor is checked against it. Unset: unconfined. */
  readonly policy?: PathPolicy | undefined
  /** The session cwd (refusal texts tell a path lexically inside it, led out by a link). */
  readonly cwd?: string
  /** Told what the read opened and every chunk it read (the "seen before changed" guard follows reads). */
  readonly observer?: ReadObserver
}

/**
 * Reads one page of a text file. Streams from the start with one fixed buffer: lines before `offset` are only
 * counted, lines of the window keep at most `4 × maxLineChars` bytes, and reading stops as soon as the page is
 * complete — memory is bounded whatever the size of the file or of its lines.
 */
export async function readPage(request: ReadRequest, caps: ReadCaps): Promise<ReadPage> {
  const { path } = request
  const checks = { cwd: request.cwd ?? path, tool: 'read', access: 'read', policy: request.policy } as const
  // A FIFO or device is refused from the path's stat, never opened (opening one can block, release a waiting writer,
  // arm a watchdog); outside the roots the refusal comes first, so a stat never tells what lies there. This stat
  // only spares an open: what is read is checked on the opened descriptor.
  const info = await stat(path).catch(() => undefined)
  if (info && !info.isFile()) {
    await checkPath(path, checks)
    refuseIrregular(path, info)
  }
  let file: OpenedFile
  try {
    // O_NONBLOCK: should the path have been swapped for a FIFO since the stat, opening it cannot hang.
    file = await openFile(path, checks)
  } catch (error) {
    if (error instanceof WorkspaceError) throw error
    throw fsFailure(path, error, request.notFoundHint)
  }
  try {
    refuseIrregular(path, file.stats)
    request.observer?.opened(file.real, file.stats)
    return await scan(file.handle, request, caps)
  } finally {
    await file.close()
  }
}

function refuseIrregular(path: string, info: Stats): void {
  if (info.isFile()) return
  if (info.isDirectory()) throw new FsError(messages.directory(path), { code: FsErrorCode.FS_NOT_REGULAR_FILE })
  throw new FsError(messages.notRegular(path, fileKind(info)), { code: FsErrorCode.FS_NOT_REGULAR_FILE })
}

function fsFailure(path: string, error: unknown, hint = ''): FsError {
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  if (code === 'ENOENT' || code === 'ENOTDIR')
    return new FsError(messages.notFound(path) + hint, { code: FsErrorCode.FS_NOT_FOUND, cause: error })
  return new FsError(messages.readFailed(path, systemErrorReason(error)), {
    code: FsErrorCode.FS_READ_FAILED,
    cause: error,
  })
}

async function scan(handle: FileHandle, request: ReadRequest, caps: ReadCaps): Promise<ReadPage> {
  const { path, offset, signal } = request
  const limit = Math.min(request.limit, caps.maxLines)
  const keepBytes = 4 * caps.maxLineChars // always holds maxLineChars characters
  const buffer = Buffer.allocUnsafe(CHUNK)
  const rows: ReadRow[] = []
  let rowBytes = 0
  let position = 0
  let line = 1 // the line the next byte belongs to
  let lastByte = -1
  // The window line being gathered: its first keepBytes bytes, and whether it had more.
  const kept = Buffer.allocUnsafe(keepBytes)
  let keptBytes = 0
  let overflow = false

  const readChunk = async (): Promise<Buffer> => {
    signal.throwIfAborted()
    // A stat'ed regular file can still fail to read (EIO from /proc/self/mem, a failing disk): coded, not a crash.
    const { bytesRead } = await handle.read(buffer, 0, CHUNK, position).catch((error: unknown) => {
      throw fsFailure(path, error)
    })
    const chunk = buffer.subarray(0, bytesRead)
    if (position < BINARY_SNIFF && chunk.subarray(0, BINARY_SNIFF - position).includes(0)) {
      throw new FsError(messages.binary(path), { code: FsErrorCode.FS_NOT_TEXT })
    }
    position += bytesRead
    request.observer?.chunk(chunk)
    if (bytesRead > 0) lastByte = chunk[bytesRead - 1]!
    return chunk
  }

  /** Turns the gathered line into a row; false when the byte cap stops the page before it. */
  const finishLine = (terminated: boolean): boolean => {
    let end = keptBytes
    if (overflow) end = completeLength(kept, end)
    else if (terminated && end > 0 && kept[end - 1] === CR) end--
    const bytes = kept.subarray(0, end)
    if (!isUtf8(bytes)) throw new FsError(messages.invalidUtf8(path, line), { code: FsErrorCode.FS_NOT_TEXT })
    const cut = cutChars(bytes.toString('utf8'), caps.maxLineChars)
    let row: ReadRow = { line, text: cut.text, truncated: overflow || cut.truncated }
    let size = Buffer.byteLength(renderRow(row)) + 1
    if (rowBytes + size > caps.maxBytes) {
      if (rows.length > 0) return false
      row = fitRow(row, caps.maxBytes) // a lone row is cut to fit, so every page makes progress
      size = Buffer.byteLength(renderRow(row)) + 1
    }
    rows.push(row)
    rowBytes += size
    keptBytes = 0
    overflow = false
    line++
    return true
  }

  /** After the last row: does any byte follow? */
  const moreFollows = async (chunk: Buffer, at: number): Promise<boolean> =>
    at < chunk.length || (await readChunk()).length > 0

  for (;;) {
    const chunk = await readChunk()
    if (chunk.length === 0) break
    let at = 0
    while (line < offset) {
      const newline = chunk.indexOf(NEWLINE, at)
      if (newline < 0) {
        at = chunk.length
        break
      }
      line++
      at = newline + 1
    }
    while (at < chunk.length) {
      const newline = chunk.indexOf(NEWLINE, at)
      const end = newline < 0 ? chunk.length : newline
      const take = Math.min(end - at, keepBytes - keptBytes)
      chunk.copy(kept, keptBytes, at, at + take)
      keptBytes += take
      if (take < end - at) overflow = true
      if (newline < 0) break
      at = newline + 1
      if (!finishLine(true)) return { offset, rows, end: { kind: 'bytes' } }
      if (rows.length === limit) {
        return {
          offset,
          rows,
          end: (await moreFollows(chunk, at)) ? { kind: 'limit' } : { kind: 'eof', totalLines: line - 1 },
        }
      }
    }
  }
  // End of file. A last line without a newline is still a line.
  if (line >= offset && (keptBytes > 0 || overflow)) {
    if (!finishLine(false)) return { offset, rows, end: { kind: 'bytes' } }
  }
  const totalLines = line >= offset ? line - 1 : line - 1 + (lastByte >= 0 && lastByte !== NEWLINE ? 1 : 0)
  if (rows.length === 0 && !(offset === 1 && totalLines === 0)) {
    throw new FsError(messages.offsetPastEnd(path, offset, totalLines), { code: FsErrorCode.FS_NOT_FOUND })
  }
  return { offset, rows, end: { kind: 'eof', totalLines } }
}

/** A row cut on a character boundary so that it, its marker and its newline fit in `maxBytes`. */
function fitRow(row: ReadRow, maxBytes: number): ReadRow {
  const room = maxBytes - Buffer.byteLength(renderRow({ ...row, text: '', truncated: true })) - 1
  const bytes = Buffer.from(row.text, 'utf8')
  if (room >= bytes.length) return row
  return { line: row.line, text: bytes.toString('utf8', 0, charBoundary(bytes, Math.max(0, room))), truncated: true }
}
