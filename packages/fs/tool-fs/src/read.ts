import type { Stats } from 'node:fs'
import { readdir, stat, type FileHandle } from 'node:fs/promises'
import { basename, join, relative } from 'node:path'
import { isUtf8 } from 'node:buffer'
import { charBoundary, completeLength, cutChars, fileKind, systemErrorReason } from '@deepseek-ai/dsh-text'
import {
  checkPath,
  openFile,
  WorkspaceError,
  type OpenedFile,
  type OpenOptions,
  type PathPolicy,
} from '@deepseek-ai/dsh-workspace'
import { FsError, FsErrorCode } from './errors.ts'
import type { ReadObserver } from './seen-files.ts'
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
  /** Set: a PNG, JPEG, GIF or WebP file up to this size is returned whole, as an image (larger: FS_IMAGE_TOO_LARGE). */
  readonly maxImageBytes?: number
}

/** An image file read whole (read's answer for a PNG, JPEG, GIF or WebP when images are asked for). */
export interface ImageFile {
  readonly kind: 'image'
  readonly mimeType: string
  readonly bytes: Buffer
}

/** The image type a file's first bytes announce, if any. */
export function imageType(head: Buffer): { mimeType: string; name: string } | undefined {
  if (head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])))
    return { mimeType: 'image/png', name: 'PNG' }
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return { mimeType: 'image/jpeg', name: 'JPEG' }
  const ascii = head.toString('latin1', 0, 12)
  if (ascii.startsWith('GIF87a') || ascii.startsWith('GIF89a')) return { mimeType: 'image/gif', name: 'GIF' }
  if (ascii.startsWith('RIFF') && ascii.slice(8, 12) === 'WEBP') return { mimeType: 'image/webp', name: 'WebP' }
  return undefined
}

/**
 * Reads one page of a text file. Streams from the start with one fixed buffer: lines before `offset` are only
 * counted, lines of the window keep at most `4 × maxLineChars` bytes, and reading stops as soon as the page is
 * complete — memory is bounded whatever the size of the file or of its lines.
 */
export async function readPage(
  request: ReadRequest & { readonly maxImageBytes: number },
  caps: ReadCaps,
): Promise<ReadPage | ImageFile>
export async function readPage(request: ReadRequest, caps: ReadCaps): Promise<ReadPage>
export async function readPage(request: ReadRequest, caps: ReadCaps): Promise<ReadPage | ImageFile> {
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
    const code = (error as NodeJS.ErrnoException | undefined)?.code
    const missing = code === 'ENOENT' || code === 'ENOTDIR'
    const alike = missing && request.cwd ? await sameName(path, request.cwd, checks, request.signal) : []
    throw fsFailure(path, error, (request.notFoundHint ?? '') + (alike.length ? messages.didYouMean(alike) : ''))
  }
  try {
    refuseIrregular(path, file.stats)
    if (request.maxImageBytes !== undefined) {
      const image = await asImage(file, path, request.maxImageBytes)
      if (image) return image
    }
    request.observer?.opened(file.real, file.stats)
    const page = await scan(file.handle, request, caps)
    if (page.end.kind === 'eof' || file.stats.size > COUNT_LINES_BYTES) return page
    // A small file's line count costs one more read of it; a large one's would cost a pass over all of it.
    const totalLines = await countLines(file.handle, file.stats.size, request.signal)
    return { ...page, end: { kind: page.end.kind, totalLines } }
  } finally {
    await file.close()
  }
}

/** The whole file as an image when its first bytes say it is one; FS_IMAGE_TOO_LARGE past the bound. */
async function asImage(file: OpenedFile, path: string, maxBytes: number): Promise<ImageFile | undefined> {
  const head = Buffer.alloc(12)
  const { bytesRead } = await file.handle.read(head, 0, head.length, 0).catch((error: unknown) => {
    throw fsFailure(path, error)
  })
  const type = imageType(head.subarray(0, bytesRead))
  if (!type) return undefined
  if (file.stats.size > maxBytes)
    throw new FsError(messages.imageTooLarge(path, type.name, file.stats.size, maxBytes), {
      code: FsErrorCode.FS_IMAGE_TOO_LARGE,
    })
  const bytes = Buffer.alloc(file.stats.size)
  let at = 0
  while (at < bytes.length) {
    const { bytesRead: got } = await file.handle.read(bytes, at, bytes.length - at, at).catch((error: unknown) => {
      throw fsFailure(path, error)
    })
    if (got === 0) break
    at += got
  }
  return { kind: 'image', mimeType: type.mimeType, bytes: bytes.subarray(0, at) }
}

/** How far the search for a missing file's namesakes goes: directory entries looked at, and depth. */
const ALIKE_ENTRIES = 20_000
const ALIKE_DEPTH = 12
/** Directories no one means when naming a file of their project. */
const ALIKE_SKIPPED = new Set(['.git', 'node_modules'])

/**
 * Up to three readable files named like `path`'s last component under `root` (relative to it, shallowest first):
 * a bounded breadth-first walk that follows no link; each one is checked by the workspace policy before it is named.
 */
async function sameName(path: string, root: string, checks: OpenOptions, signal: AbortSignal): Promise<string[]> {
  const name = basename(path)
  const found: string[] = []
  let budget = ALIKE_ENTRIES
  let level = [root]
  for (let depth = 0; depth <= ALIKE_DEPTH && level.length && budget > 0 && found.length < 3; depth++) {
    const next: string[] = []
    for (const dir of level) {
      if (budget <= 0 || found.length >= 3 || signal.aborted) break
      const entries = await readdir(dir, { withFileTypes: true }).catch(() => [])
      budget -= entries.length
      entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      for (const entry of entries) {
        const full = join(dir, entry.name)
        if (entry.isDirectory() && !ALIKE_SKIPPED.has(entry.name)) next.push(full)
        else if (entry.isFile() && entry.name === name && full !== path && found.length < 3) {
          const allowed = await checkPath(full, checks).then(
            () => true,
            () => false,
          )
          if (allowed) found.push(relative(root, full))
        }
      }
    }
    level = next
  }
  return found
}

/** Files up to this size have their line count in every footer. */
const COUNT_LINES_BYTES = 1024 * 1024

/** Lines as read counts them: newlines, plus a last line without one. */
async function countLines(handle: FileHandle, size: number, signal: AbortSignal): Promise<number> {
  const buffer = Buffer.allocUnsafe(Math.min(CHUNK, Math.max(1, size)))
  let lines = 0
  let last = NEWLINE
  for (let position = 0; ; ) {
    signal.throwIfAborted()
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, position)
    if (bytesRead === 0) break
    for (let at = buffer.indexOf(NEWLINE, 0); at >= 0 && at < bytesRead; at = buffer.indexOf(NEWLINE, at + 1)) lines++
    last = buffer[bytesRead - 1]!
    position += bytesRead
  }
  return last === NEWLINE ? lines : lines + 1
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
