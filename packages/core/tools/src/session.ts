import { closeSync, constants, fstatSync, openSync, realpathSync, statSync } from 'node:fs'
import { resolve } from 'node:path'
import { HarnessError } from './errors.ts'

/**
 * A session's root, resolved once to a real path and held open as a directory descriptor (docs/seams.md#sessions). Whatever later
 * happens to `path` (renamed, a symlink put in its place), `fdPath` names the directory that was claimed.
 */
export interface PinnedRoot {
  /** The real path the root had when it was claimed. */
  readonly path: string
  readonly fd: number
  /** `/proc/<pid>/fd/<fd>`: the claimed directory itself, for a child's cwd or a bind mount. */
  readonly fdPath: string
  /** Throws WORKSPACE_ROOT_MOVED when `path` no longer names the claimed directory (one stat). */
  check(tool?: string): void
}

/**
 * One connection's session (an MCP stdio connection, an HTTP session, a `dsh call` process), made by the host and
 * handed to every tool and provider with the call. Services keep what is the session's own in it (`slot`), never in
 * a map keyed by its id, and register how to end it (`defer`); `dispose()` ends all of it.
 */
export interface ToolSession {
  readonly id: string
  /** Absolute directory that relative paths resolve against: the pinned root's real path. */
  readonly cwd: string
  /** The pinned root; undefined only for a session whose directory did not exist when it was made. */
  readonly root: PinnedRoot | undefined
  /**
   * A random name (not derived from the id or the pid) that every store uses for this session's own directory
   * under its shared root (saved results, full outputs, the sandbox's /tmp); another session cannot guess it.
   */
  readonly dirName: string
  /**
   * Files this session was given in a directory that every session's files share (its commands' full outputs):
   * visible to it alone, hidden from every other session's tools.
   */
  readonly ownFiles: Set<string>
  /** The value kept under `key` in this session, made by `make` on first use. */
  slot<T>(key: symbol, make: () => T): T
  /** Runs `cleanup` when the session is disposed (last registered first). */
  defer(cleanup: () => unknown): void
  readonly disposed: boolean
  /** Ends the session: the deferred clean-ups (its tasks killed, its private /tmp removed…), then its root closed. */
  dispose(): Promise<void>
}

export interface SessionOptions {
  /** Default: `session-<random>`. */
  readonly id?: string
  /** The directory claimed as the session's root: pinned at once. */
  readonly cwd: string
  /**
   * Default: random. Only for a session that must find what an earlier process of the same user saved (`dsh call`,
   * one process per call); never derived from anything another session could know.
   */
  readonly dirName?: string
}

export const SessionErrorCode = {
  /** The path of the session's root no longer names the directory it claimed (renamed, or replaced by a link). */
  WORKSPACE_ROOT_MOVED: 'WORKSPACE_ROOT_MOVED',
} as const

function randomName(): string {
  const bytes = new Uint8Array(12)
  globalThis.crypto.getRandomValues(bytes)
  return Buffer.from(bytes).toString('hex')
}

/** Opens and holds `cwd` (real path) as the session's root; undefined when it cannot be opened as a directory. */
export function pinRoot(cwd: string): PinnedRoot | undefined {
  let fd: number
  let path: string
  try {
    path = realpathSync.native(resolve(cwd))
    fd = openSync(path, constants.O_RDONLY | constants.O_DIRECTORY)
  } catch {
    return undefined
  }
  const pinned = fstatSync(fd)
  return {
    path,
    fd,
    fdPath: `/proc/${process.pid}/fd/${fd}`,
    check(tool = 'dsh') {
      const now = statSync(path, { throwIfNoEntry: false })
      if (now && now.dev === pinned.dev && now.ino === pinned.ino) return
      throw new HarnessError(
        `${tool} refused: the session's root ${JSON.stringify(path)} was moved or replaced since the session claimed it, and a session never follows its root elsewhere; start a new session in the directory you mean (--cwd)`,
        { code: SessionErrorCode.WORKSPACE_ROOT_MOVED },
      )
    },
  }
}

class Session implements ToolSession {
  readonly id: string
  readonly cwd: string
  readonly root: PinnedRoot | undefined
  readonly dirName: string
  readonly ownFiles = new Set<string>()
  disposed = false
  private readonly slots = new Map<symbol, unknown>()
  private readonly cleanups: (() => unknown)[] = []
  private ending: Promise<void> | undefined

  constructor(options: SessionOptions) {
    this.dirName = options.dirName ?? randomName()
    this.root = pinRoot(options.cwd)
    this.cwd = this.root?.path ?? resolve(options.cwd)
    this.id = options.id ?? `session-${this.dirName.slice(0, 8)}`
  }

  slot<T>(key: symbol, make: () => T): T {
    if (this.slots.has(key)) return this.slots.get(key) as T
    const value = make()
    this.slots.set(key, value)
    return value
  }

  defer(cleanup: () => unknown): void {
    if (this.disposed) void Promise.resolve().then(cleanup)
    else this.cleanups.push(cleanup)
  }

  dispose(): Promise<void> {
    this.ending ??= (async () => {
      this.disposed = true
      for (const cleanup of this.cleanups.splice(0).reverse()) {
        try {
          await cleanup()
        } catch {
          // One failed clean-up must not keep the others from running.
        }
      }
      this.slots.clear()
      if (this.root) closeSync(this.root.fd)
    })()
    return this.ending
  }
}

/** Makes a session whose root is `cwd`, pinned now. The host makes one per connection and disposes it at the end. */
export function createSession(options: SessionOptions): ToolSession {
  return new Session(options)
}
