import { chmod, lstat, mkdir, open, realpath, rm, stat, type FileHandle } from 'node:fs/promises'
import { tmpdir, userInfo } from 'node:os'
import { join, resolve } from 'node:path'
import type { Context } from 'cordis'
import Schema from 'schemastery'
import { SpillError, SpillErrorCode, SpillStore, type SavedText, type SaveTextRequest } from '@deepseek-ai/dsh-spill'
import { numbered, sessionDirName, spillFileName } from './names.ts'

export { sessionDirName, spillFileName } from './names.ts'

export interface Config {
  /** Directory that holds one private directory per session. */
  root?: string
}

export const Config: Schema<Config> = Schema.object({
  root: Schema.string().description('Directory holding one private directory per session (default: <os tmpdir>/dsh-spill-<uid>).'),
})

/** What the model is told after the locator. */
export const RETRIEVAL_HINT = 'Page through it with read (offset and limit) or search it with grep, passing that path.'

/** `<os tmpdir>/dsh-spill-<uid>`: per user, and outside any process, so a locator outlives a short `dsh call`. */
export function defaultRoot(): string {
  const uid = process.getuid?.()
  const owner = uid === undefined ? userInfo().username.replace(/[^A-Za-z0-9._-]+/g, '_') : String(uid)
  return join(tmpdir(), `dsh-spill-${owner}`)
}

function failed(message: string, cause?: unknown): SpillError {
  return new SpillError(message, cause === undefined
    ? { code: SpillErrorCode.SPILL_WRITE_FAILED }
    : { code: SpillErrorCode.SPILL_WRITE_FAILED, cause })
}

function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

function errno(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code
}

/**
 * `ctx.spillStore` on local files: `<root>/<session>/<call id>-<name>`, directories 0700, files 0600, created
 * exclusively (never overwritten, never through a planted symlink). Files are kept after the process exits — the
 * OS temp cleaner, or the user, removes them.
 */
export class LocalSpillStore extends SpillStore {
  static Config = Config
  readonly root: string
  private readonly uid = process.getuid?.()
  /** The checked real path of the root, once known; a failure is not cached, so a repaired root works again. */
  private checkedRoot: Promise<string> | undefined
  private readonly sessions = new Map<string, Promise<string>>()

  constructor(ctx: Context, config: Config = {}) {
    super(ctx)
    this.root = resolve(config.root ?? defaultRoot())
  }

  async saveText(request: SaveTextRequest): Promise<SavedText> {
    const data = Buffer.from(request.content, 'utf8')
    const fileName = spillFileName(request.source.callId, request.suggestedName)
    // One retry when the session directory vanished under us (a temp cleaner): it is made again.
    for (let attempt = 0; ; attempt++) {
      const dir = await this.sessionDir(request.owner.sessionId)
      try {
        const locator = await writeExclusive(dir, fileName, data)
        return { locator, bytes: data.length, retrievalHint: RETRIEVAL_HINT }
      } catch (error) {
        if (errno(error) === 'ENOENT' && attempt === 0) {
          this.sessions.delete(request.owner.sessionId)
          continue
        }
        throw failed(`cannot write a spill file in ${dir}: ${reason(error)}`, error)
      }
    }
  }

  private sessionDir(sessionId: string): Promise<string> {
    let dir = this.sessions.get(sessionId)
    if (!dir) {
      dir = this.prepareRoot().then((root) => this.prepareSession(join(root, sessionDirName(sessionId))))
      this.sessions.set(sessionId, dir)
      dir.catch(() => { if (this.sessions.get(sessionId) === dir) this.sessions.delete(sessionId) })
    }
    return dir
  }

  private prepareRoot(): Promise<string> {
    if (!this.checkedRoot) {
      const checked = this.checkRoot()
      this.checkedRoot = checked
      checked.catch(() => { if (this.checkedRoot === checked) this.checkedRoot = undefined })
    }
    return this.checkedRoot
  }

  /**
   * The root must be a directory of ours that other users cannot write: a directory under a shared temp dir could
   * otherwise have been planted by someone else. Later saves use its real path, so a swapped symlink cannot
   * redirect them.
   */
  private async checkRoot(): Promise<string> {
    const unusable = (why: string, cause?: unknown) => failed(`spill root ${this.root} is unusable: ${why}`, cause)
    let real: string
    try {
      await mkdir(this.root, { recursive: true, mode: 0o700 })
      real = await realpath(this.root)
    } catch (error) {
      throw unusable(errno(error) === 'EEXIST' || errno(error) === 'ENOTDIR' ? `it is not a directory (${reason(error)})` : reason(error), error)
    }
    const info = await stat(real).catch((error: unknown) => { throw unusable(reason(error), error) })
    if (!info.isDirectory()) throw unusable('it is not a directory')
    if (this.uid !== undefined && info.uid !== this.uid) throw unusable(`it is owned by uid ${info.uid}, not by this user (uid ${this.uid})`)
    if (info.mode & 0o002) throw unusable('other users can write to it; use a private directory')
    return real
  }

  /** Creates the session directory 0700, or accepts an existing one only if it is a real directory of ours. */
  private async prepareSession(dir: string): Promise<string> {
    try {
      await mkdir(dir, { mode: 0o700 })
      return dir
    } catch (error) {
      if (errno(error) !== 'EEXIST') throw failed(`cannot create the session directory ${dir} in spill root ${this.root}: ${reason(error)}`, error)
    }
    const info = await lstat(dir).catch((error: unknown) => { throw failed(`cannot use the session directory ${dir}: ${reason(error)}`, error) })
    if (!info.isDirectory()) throw failed(`cannot use the session directory ${dir}: it is not a directory`)
    if (this.uid !== undefined && info.uid !== this.uid) throw failed(`cannot use the session directory ${dir}: it is owned by uid ${info.uid}`)
    if (info.mode & 0o077) await chmod(dir, 0o700).catch((error: unknown) => { throw failed(`cannot make ${dir} private: ${reason(error)}`, error) })
    return dir
  }
}

/** Creates `name` (or `name-2`, `name-3`, … when taken) with O_EXCL, mode 0600, and writes all of `data`. */
async function writeExclusive(dir: string, fileName: string, data: Buffer): Promise<string> {
  for (let n = 1; ; n++) {
    const path = join(dir, n === 1 ? fileName : numbered(fileName, n))
    let handle: FileHandle
    try {
      handle = await open(path, 'wx', 0o600)
    } catch (error) {
      if (errno(error) === 'EEXIST') continue
      throw error
    }
    try {
      await handle.writeFile(data)
      await handle.close()
      return path
    } catch (error) {
      await handle.close().catch(() => {})
      await rm(path, { force: true }).catch(() => {})
      throw error
    }
  }
}

export default LocalSpillStore
