import { randomBytes } from 'node:crypto'
import { constants, type Stats } from 'node:fs'
import { link, lstat, open, readlink, rename, stat, unlink, type FileHandle } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { fileKind, systemErrorReason } from '@deepseek-ai/dsh-text'
import { HarnessError } from '@deepseek-ai/dsh-tools'
import { changeMessages } from './change-text.ts'
import { FsError, FsErrorCode } from './errors.ts'
import {
  checkPath,
  checkReal,
  openDirectory,
  openFile,
  type OpenedDir,
  type OpenedFile,
  type OpenOptions,
  type PathPolicy,
} from '@deepseek-ai/dsh-workspace'

/*
 * Atomic, confined replacement of one file (docs/model-surface.md#tools): the path is opened, then checked (its descriptor's real
 * path against the policy, write access), the new bytes go to a temporary file in the same verified directory
 * (named through its /proc fd path, so a swapped link cannot redirect it), are fsync'd, and are renamed over the
 * target (a new file is linked into place, which fails if the name appeared meanwhile). Calls on one real path in one
 * process run one after another. Any failure before the rename leaves the file byte for byte as it was.
 */

export interface ReplaceRequest {
  readonly tool: 'write' | 'edit' | 'apply_patch'
  /** Absolute, as the model gave it (for texts). */
  readonly path: string
  readonly cwd: string
  readonly policy: PathPolicy | undefined
  readonly signal: AbortSignal
  /** write may create the file (and its missing parents); edit needs it to exist. */
  readonly create: boolean
  /** Largest file read, and largest content written (FS_TOO_LARGE past it): one call's memory stays a small multiple. */
  readonly maxBytes: number
}

/** The file as it is now (under the lock), for the caller to decide the new bytes from. */
export interface Current {
  readonly real: string
  readonly stats: Stats
  readonly bytes: Buffer
}

export interface Replaced {
  readonly real: string
  /** The new file's fstat, taken after the rename. */
  readonly stats: Stats
  readonly bytes: Buffer
  readonly created: boolean
  /** `decide` returned REMOVE: the file's name was unlinked (`bytes` is empty). */
  readonly removed?: boolean
}

/** What `decide` returns to remove the file instead of replacing it (apply_patch's "*** Delete File"). */
export const REMOVE: unique symbol = Symbol('remove')
type Decided = Buffer | typeof REMOVE

/** Test seam: a fault forced at a named step (tests that use it say "forced fault" in their names). */
export const forcedFaults: { beforeRename?: () => void } = {}

/**
 * Replaces (or creates) the file at `request.path` with what `decide` returns for its current content, then calls
 * `committed` before the lock is released, so the next call on the file sees what this one recorded.
 */
export async function replaceFile(
  request: ReplaceRequest,
  decide: (current: Current | undefined) => Promise<Decided> | Decided,
  committed: (replaced: Replaced) => void,
): Promise<Replaced> {
  // Once more if the file appears between "it does not exist" and creating it.
  for (let attempt = 0; attempt < 3; attempt++) {
    const result = await replaceOnce(request, decide, committed)
    if (result !== 'retry') return result
  }
  throw changedDuring(request.tool, request.path)
}

async function replaceOnce(
  request: ReplaceRequest,
  decide: (current: Current | undefined) => Promise<Decided> | Decided,
  committed: (replaced: Replaced) => void,
): Promise<Replaced | 'retry'> {
  const { tool, path } = request
  const checks = { cwd: request.cwd, tool, access: 'write', policy: request.policy } as const
  // A FIFO or device is refused from a stat, never opened (opening one can release a waiting writer).
  const info = await stat(path).catch(() => undefined)
  if (info && !info.isFile() && !info.isDirectory()) {
    await checkPath(path, checks) // outside the roots the refusal comes first: a stat must not tell what lies there
    throw irregular(tool, path, info)
  }
  const first = await openExisting(request, checks)
  if (first === 'missing') return request.create ? await createFile(request, decide, committed) : missing(request)
  await first.close()
  if (!first.stats.isFile()) throw irregular(tool, path, first.stats)
  if (first.stats.size > request.maxBytes) throw tooLarge(request, first.stats.size, 'file')
  // Serialised on the real path; opened again inside, so a call that waited sees what the one before it wrote.
  return await serialised(first.real, async () => {
    const file = await openExisting(request, checks)
    if (file === 'missing') return 'retry'
    try {
      if (file.real !== first.real) return 'retry'
      if (!file.stats.isFile()) throw irregular(tool, path, file.stats)
      if (file.stats.size > request.maxBytes) throw tooLarge(request, file.stats.size, 'file')
      await using dir = await openParent(file.real, checks, path)
      const name = basename(file.real)
      // The name must still be the file that was opened and checked (not renamed away or replaced meanwhile).
      const entry = await lstat(`${dir.fdPath}/${name}`).catch(() => undefined)
      if (!entry || entry.ino !== file.stats.ino || entry.dev !== file.stats.dev) throw changedDuring(tool, path)
      const bytes = await readAll(file.handle, path)
      const stats = await file.handle.stat()
      if (
        stats.mtimeMs !== file.stats.mtimeMs ||
        stats.size !== file.stats.size ||
        stats.ctimeMs !== file.stats.ctimeMs
      )
        throw changedDuring(tool, path)
      const next = await decide({ real: file.real, stats, bytes })
      if (next !== REMOVE && next.length > request.maxBytes) throw tooLarge(request, next.length, 'result')
      request.signal.throwIfAborted()
      if (next === REMOVE) {
        await unlink(`${dir.fdPath}/${name}`).catch((error: unknown) => {
          throw new FsError(changeMessages.writeFailed(path, systemErrorReason(error)), {
            code: FsErrorCode.FS_WRITE_FAILED,
            cause: error,
          })
        })
        const result: Replaced = { real: file.real, stats, bytes: Buffer.alloc(0), created: false, removed: true }
        committed(result)
        return result
      }
      const replaced = await put(dir, name, next, { tool, path, signal: request.signal, like: stats })
      const result: Replaced = { real: file.real, stats: replaced, bytes: next, created: false }
      committed(result)
      return result
    } finally {
      await file.close()
    }
  })
}

/** The file opened and checked, or 'missing'; any other failure is its coded error. */
async function openExisting(request: ReplaceRequest, checks: OpenOptions): Promise<OpenedFile | 'missing'> {
  try {
    return await openFile(request.path, checks)
  } catch (error) {
    if (error instanceof HarnessError) throw error
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') return 'missing'
    if (code === 'ENOTDIR') {
      throw request.create
        ? new FsError(changeMessages.parentNotDirectory(request.path), {
            code: FsErrorCode.FS_WRITE_FAILED,
            cause: error,
          })
        : new FsError(changeMessages.notFound(request.path), { code: FsErrorCode.FS_NOT_FOUND, cause: error })
    }
    throw request.create
      ? new FsError(changeMessages.writeFailed(request.path, systemErrorReason(error)), {
          code: FsErrorCode.FS_WRITE_FAILED,
          cause: error,
        })
      : new FsError(changeMessages.readFailed(request.path, systemErrorReason(error)), {
          code: FsErrorCode.FS_READ_FAILED,
          cause: error,
        })
  }
}

function missing(request: ReplaceRequest): never {
  throw new FsError(changeMessages.notFound(request.path), { code: FsErrorCode.FS_NOT_FOUND })
}

async function createFile(
  request: ReplaceRequest,
  decide: (current: Current | undefined) => Promise<Decided> | Decided,
  committed: (replaced: Replaced) => void,
): Promise<Replaced | 'retry'> {
  const { tool, path } = request
  const checks = { cwd: request.cwd, tool, access: 'write', policy: request.policy } as const
  let dir: OpenedDir
  try {
    dir = await openDirectory(dirname(path), { ...checks, create: true })
  } catch (error) {
    if (error instanceof HarnessError) throw error
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOTDIR' || code === 'EEXIST')
      throw new FsError(changeMessages.parentNotDirectory(path), { code: FsErrorCode.FS_WRITE_FAILED, cause: error })
    throw new FsError(changeMessages.writeFailed(path, systemErrorReason(error)), {
      code: FsErrorCode.FS_WRITE_FAILED,
      cause: error,
    })
  }
  await using _dir = dir
  const name = basename(path)
  const real = join(dir.real, name)
  checkReal(real, checks, path)
  return await serialised(real, async () => {
    const entry = await lstat(`${dir.fdPath}/${name}`).catch(() => undefined)
    if (entry?.isSymbolicLink()) {
      const target = await readlink(`${dir.fdPath}/${name}`).catch(() => '?')
      throw new FsError(changeMessages.danglingLink(path, target), { code: FsErrorCode.FS_WRITE_FAILED })
    }
    if (entry) return 'retry' // it appeared meanwhile: replace it, under its own checks
    const next = await decide(undefined)
    if (next === REMOVE) throw missing(request)
    if (next.length > request.maxBytes) throw tooLarge(request, next.length, 'result')
    request.signal.throwIfAborted()
    const stats = await put(dir, name, next, { tool, path, signal: request.signal, like: undefined })
    const result: Replaced = { real, stats, bytes: next, created: true }
    committed(result)
    return result
  })
}

async function openParent(real: string, checks: OpenOptions, path: string): Promise<OpenedDir> {
  try {
    return await openDirectory(dirname(real), checks)
  } catch (error) {
    if (error instanceof HarnessError) throw error
    throw new FsError(changeMessages.writeFailed(path, systemErrorReason(error)), {
      code: FsErrorCode.FS_WRITE_FAILED,
      cause: error,
    })
  }
}

/**
 * Writes `bytes` to a temporary file beside `name` in `dir`, fsyncs it and renames it over `name` (`like` given:
 * keeping that file's mode and owner) or links it in as a new file. Returns the new file's fstat.
 */
async function put(
  dir: OpenedDir,
  name: string,
  bytes: Buffer,
  options: { tool: string; path: string; signal: AbortSignal; like: Stats | undefined },
): Promise<Stats> {
  const { path, like } = options
  const temp = `${dir.fdPath}/.${name.slice(0, 200)}.${randomBytes(6).toString('hex')}.dsh-tmp`
  const target = `${dir.fdPath}/${name}`
  const failed = (error: unknown) =>
    error instanceof HarnessError
      ? error
      : new FsError(changeMessages.writeFailed(path, systemErrorReason(error)), {
          code: FsErrorCode.FS_WRITE_FAILED,
          cause: error,
        })
  let out: FileHandle
  try {
    out = await open(
      temp,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      like ? like.mode & 0o7777 : 0o666,
    )
  } catch (error) {
    throw failed(error)
  }
  let placed = false
  try {
    await out.writeFile(bytes)
    if (like) {
      // chown first: it clears set-id bits that the chmod then restores. Not our file to give away: keep going.
      await out.chown(like.uid, like.gid).catch(() => {})
      await out.chmod(like.mode & 0o7777)
    }
    // fdatasync: the data and the size it needs, not the times; enough for the rename to never expose a short file.
    await out.datasync()
    forcedFaults.beforeRename?.()
    // The last moment a cancelled or timed-out call can stop: after the rename the change is made.
    options.signal.throwIfAborted()
    if (like) await rename(temp, target)
    else {
      await link(temp, target)
      await unlink(temp).catch(() => {})
    }
    placed = true
    // The directory is not fsync'd: a crash before its entry reaches the disk leaves the old content, which docs/model-surface.md#tools
    // allows ("the old or the new"); the file's own fsync above is what keeps a renamed file from being empty.
    return await out.stat()
  } catch (error) {
    if (!placed) await unlink(temp).catch(() => {})
    if (options.signal.aborted) throw error // the pipeline names it: ABORTED or TOOL_TIMEOUT
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw changedDuring(options.tool, path)
    throw failed(error)
  } finally {
    await out.close()
  }
}

async function readAll(handle: FileHandle, path: string): Promise<Buffer> {
  try {
    return await handle.readFile()
  } catch (error) {
    throw new FsError(changeMessages.readFailed(path, systemErrorReason(error)), {
      code: FsErrorCode.FS_READ_FAILED,
      cause: error,
    })
  }
}

function irregular(tool: string, path: string, info: Stats): FsError {
  if (info.isDirectory())
    return new FsError(changeMessages.directory(tool, path), { code: FsErrorCode.FS_NOT_REGULAR_FILE })
  return new FsError(changeMessages.notRegular(tool, path, fileKind(info)), { code: FsErrorCode.FS_NOT_REGULAR_FILE })
}

function tooLarge(request: ReplaceRequest, size: number, what: 'file' | 'result'): FsError {
  const text = what === 'file' ? changeMessages.tooLarge : changeMessages.tooLargeResult
  return new FsError(text(request.tool, request.path, size, request.maxBytes), { code: FsErrorCode.FS_TOO_LARGE })
}

function changedDuring(tool: string, path: string): FsError {
  return new FsError(changeMessages.changedDuring(tool, path), { code: FsErrorCode.FS_STALE })
}

/** One chain of calls per real path: a call starts when the one before it on that file has ended. */
const chains = new Map<string, Promise<void>>()

async function serialised<T>(key: string, run: () => Promise<T>): Promise<T> {
  const before = chains.get(key) ?? Promise.resolve()
  let release!: () => void
  const gate = new Promise<void>((resolve) => {
    release = resolve
  })
  const mine = before.then(() => gate)
  chains.set(key, mine)
  await before
  try {
    return await run()
  } finally {
    release()
    if (chains.get(key) === mine) chains.delete(key)
  }
}
