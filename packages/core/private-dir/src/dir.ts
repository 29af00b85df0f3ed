import {
  closeSync,
  constants,
  existsSync,
  fchmodSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readlinkSync,
  type Stats,
} from 'node:fs'
import { dirname, join } from 'node:path'
import { HarnessError } from '@deepseek-ai/dsh-tools'

export const PrivateDirErrorCode = {
  /** The directory exists but must not be used (a symlink, not a directory, another owner, shared, replaced). */
  PRIVATE_DIR_UNUSABLE: 'PRIVATE_DIR_UNUSABLE',
  /** The directory does not exist and was not to be created. */
  PRIVATE_DIR_MISSING: 'PRIVATE_DIR_MISSING',
  /** The system refused to create or open it (permissions, a full disk, a file in the way, …). */
  PRIVATE_DIR_FAILED: 'PRIVATE_DIR_FAILED',
} as const
export type PrivateDirErrorCode = (typeof PrivateDirErrorCode)[keyof typeof PrivateDirErrorCode]

/** `message` is `<path>: <reason>`; `reason` alone reads after a caller's own words ("spill root X is unusable: …"). */
export class PrivateDirError extends HarnessError {
  override name = 'PrivateDirError'
  readonly path: string
  readonly reason: string

  constructor(path: string, reason: string, code: PrivateDirErrorCode, cause?: unknown) {
    super(`${path}: ${reason}`, cause === undefined ? { code } : { code, cause })
    this.path = path
    this.reason = reason
  }

  /** The errno code of the system call that failed, if one did (`ENOENT` when a temp cleaner got there first). */
  get errno(): string | undefined {
    return (this.cause as NodeJS.ErrnoException | undefined)?.code
  }
}

const DIRECTORY_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW
/** A new file for writing: never an existing one, never through a symlink. */
export const CREATE_FILE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW

/**
 * Linux names an open directory as `/proc/self/fd/<n>`, and a path through it reaches that very directory
 * whatever has since been renamed, removed or planted at its old path (the effect of openat(2), which Node lacks).
 * Elsewhere paths are joined: checked, but with a window between the check and the use.
 */
const ANCHORED = process.platform === 'linux' && existsSync('/proc/self/fd')

/** Whether operations through a `Dir` are anchored to its descriptor (true on Linux with /proc). */
export const anchored = ANCHORED

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

function errnoOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code
}

export interface OpenPrivateOptions {
  /** Create the directory (mode 0700) if it does not exist. Default true. */
  create?: boolean
  /** With `create`, also create missing parents (the user's own path, so their symlinks are followed). Default false. */
  parents?: boolean
  /**
   * What to do with a directory of ours that group or others may write to: `'tighten'` it to 0700 (default), or
   * `'refuse'` it — someone else may have put entries in it, or it is shared on purpose.
   */
  writable?: 'tighten' | 'refuse'
  /** Make a looser mode 0700 (default true); false leaves it (pruning changes nothing but what it removes). */
  tighten?: boolean
}

/**
 * An open directory, checked when it was opened: a real directory (never reached through a symlink at its own
 * name), owned by this user, mode 0700 unless opened as shared. `at(name)` names an entry inside this very
 * directory. Close it (or `using`) when done.
 */
export class Dir implements Disposable {
  private open = true

  constructor(
    /** The path it was opened at: for messages and for paths shown to people. */
    readonly path: string,
    readonly fd: number,
  ) {}

  /** A path to `name` inside this directory, anchored to the descriptor where the platform allows. */
  at(name: string): string {
    return ANCHORED ? `/proc/self/fd/${this.fd}/${name}` : join(this.path, name)
  }

  /** The anchored path of the directory itself (for readdir). */
  get self(): string {
    return ANCHORED ? `/proc/self/fd/${this.fd}` : this.path
  }

  /** Opens (by default creating) the private subdirectory `name`, with the same checks. */
  subdir(name: string, options: OpenPrivateOptions = {}): Dir {
    return openChecked(this.at(name), join(this.path, name), options)
  }

  close(): void {
    if (!this.open) return
    this.open = false
    closeSync(this.fd)
  }

  [Symbol.dispose](): void {
    this.close()
  }
}

/** Opens the private directory at `path`, creating it 0700 when missing (unless `create: false`). */
export function openPrivateDir(path: string, options: OpenPrivateOptions = {}): Dir {
  return openChecked(path, path, options)
}

/**
 * Makes a fresh private directory `<parent>/<prefix>XXXXXX` (mkdtemp: exclusive, 0700) and opens it checked.
 * `parent` is created if missing.
 */
export function makePrivateTempDir(parent: string, prefix: string): Dir {
  let path: string
  try {
    mkdirSync(parent, { recursive: true, mode: 0o700 })
    path = mkdtempSync(join(parent, prefix))
  } catch (error) {
    throw new PrivateDirError(
      join(parent, `${prefix}XXXXXX`),
      `cannot create it: ${message(error)}`,
      PrivateDirErrorCode.PRIVATE_DIR_FAILED,
      error,
    )
  }
  return openChecked(path, path, { create: false })
}

/**
 * Opens a directory that is not ours to check (the OS temp dir, a configured parent): only its entries will be
 * checked. A symlink at `path` itself is followed — it is the user's or the system's own path.
 */
export function openSharedDir(path: string): Dir {
  try {
    return new Dir(path, openSync(path, constants.O_RDONLY | constants.O_DIRECTORY))
  } catch (error) {
    const code =
      errnoOf(error) === 'ENOENT' ? PrivateDirErrorCode.PRIVATE_DIR_MISSING : PrivateDirErrorCode.PRIVATE_DIR_FAILED
    throw new PrivateDirError(path, message(error), code, error)
  }
}

function lstatOrMissing(target: string, shown: string): Stats | undefined {
  try {
    return lstatSync(target)
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return undefined
    const reason = errnoOf(error) === 'ENOTDIR' ? `a parent is not a directory (${message(error)})` : message(error)
    throw new PrivateDirError(shown, reason, PrivateDirErrorCode.PRIVATE_DIR_FAILED, error)
  }
}

function unusable(shown: string, reason: string): PrivateDirError {
  return new PrivateDirError(shown, reason, PrivateDirErrorCode.PRIVATE_DIR_UNUSABLE)
}

/** What is wrong with the entry `info` for use as a private directory, or undefined when nothing is. */
function refusal(info: Stats, target: string): string | undefined {
  if (info.isSymbolicLink()) {
    let to = ''
    try {
      to = ` to ${readlinkSync(target)}`
    } catch {
      /* gone meanwhile: the plain reason will do */
    }
    return `it is a symbolic link${to}, and a private directory is never reached through one`
  }
  if (!info.isDirectory()) return 'it is not a directory'
  const uid = process.getuid?.()
  if (uid !== undefined && info.uid !== uid) return `it is owned by uid ${info.uid}, not by this user (uid ${uid})`
  return undefined
}

/**
 * lstat (never following), create exclusively when missing, check type and owner, open with O_NOFOLLOW, and
 * confirm that the descriptor is the very directory that was checked (same device and inode).
 */
function openChecked(target: string, shown: string, options: OpenPrivateOptions): Dir {
  let info = lstatOrMissing(target, shown)
  if (!info) {
    if (options.create === false)
      throw new PrivateDirError(shown, 'it does not exist', PrivateDirErrorCode.PRIVATE_DIR_MISSING)
    try {
      if (options.parents) mkdirSync(dirname(target), { recursive: true, mode: 0o700 })
      mkdirSync(target, { mode: 0o700 })
    } catch (error) {
      // EEXIST: someone made it first; it is checked below like any existing entry.
      if (errnoOf(error) !== 'EEXIST') {
        throw new PrivateDirError(
          shown,
          `cannot create it: ${message(error)}`,
          PrivateDirErrorCode.PRIVATE_DIR_FAILED,
          error,
        )
      }
    }
    info = lstatOrMissing(target, shown)
    if (!info)
      throw new PrivateDirError(shown, 'it vanished right after it was created', PrivateDirErrorCode.PRIVATE_DIR_FAILED)
  }
  const wrong = refusal(info, target)
  if (wrong) throw unusable(shown, wrong)
  let fd: number
  try {
    fd = openSync(target, DIRECTORY_FLAGS)
  } catch (error) {
    // ELOOP/ENOTDIR: replaced by a symlink or a file since the lstat.
    const code =
      errnoOf(error) === 'ELOOP' || errnoOf(error) === 'ENOTDIR'
        ? PrivateDirErrorCode.PRIVATE_DIR_UNUSABLE
        : PrivateDirErrorCode.PRIVATE_DIR_FAILED
    throw new PrivateDirError(
      shown,
      code === PrivateDirErrorCode.PRIVATE_DIR_UNUSABLE ? 'it was replaced while being checked' : message(error),
      code,
      error,
    )
  }
  try {
    const opened = fstatSync(fd)
    if (opened.dev !== info.dev || opened.ino !== info.ino) throw unusable(shown, 'it was replaced while being checked')
    const loose = opened.mode & 0o077
    if (loose) {
      if (options.writable === 'refuse' && opened.mode & 0o022)
        throw unusable(shown, 'other users can write to it; use a private directory')
      if (options.tighten !== false) fchmodSync(fd, 0o700)
    }
    return new Dir(shown, fd)
  } catch (error) {
    closeSync(fd)
    if (error instanceof PrivateDirError) throw error
    throw new PrivateDirError(shown, message(error), PrivateDirErrorCode.PRIVATE_DIR_FAILED, error)
  }
}
