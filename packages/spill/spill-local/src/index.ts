import { open, unlink, type FileHandle } from 'node:fs/promises'
import { tmpdir, userInfo } from 'node:os'
import { join, resolve } from 'node:path'
import type { Context } from 'cordis'
import type { ToolSession } from '@deepseek-ai/dsh-tools'
import Schema from 'schemastery'
import {
  SpillError,
  SpillErrorCode,
  SpillStore,
  type SavedText,
  type SaveStreamRequest,
  type SaveTextRequest,
} from '@deepseek-ai/dsh-spill'
import {
  CREATE_FILE_FLAGS,
  dueForPruning,
  openPrivateDir,
  PrivateDirError,
  prune,
  PRUNE_INTERVAL_MS,
  type Dir,
  type PruneCount,
} from '@deepseek-ai/dsh-private-dir'
import { numbered, spillFileName } from './names.ts'

export { spillFileName } from './names.ts'

export interface Config {
  /** Directory that holds one private directory per session. */
  root?: string
  /** Saved results older than this many days are removed at start-up; 0 keeps them forever. */
  pruneAfterDays?: number
}

export const Config: Schema<Config> = Schema.object({
  root: Schema.string().description(
    'Directory holding one private directory per session (default: <os tmpdir>/dsh-spill-<uid>).',
  ),
  pruneAfterDays: Schema.number()
    .min(0)
    .default(7)
    .description('At start-up, remove saved results older than this many days (0: never).'),
})

const DAY_MS = 86_400_000

/** What the model is told after the locator. */
export const RETRIEVAL_HINT = 'Page through it with read (offset and limit) or search it with grep, passing that path.'

/** `<os tmpdir>/dsh-spill-<uid>`: per user, and outside any process, so a locator outlives a short `dsh call`. */
export function defaultRoot(): string {
  const uid = process.getuid?.()
  const owner = uid === undefined ? userInfo().username.replace(/[^A-Za-z0-9._-]+/g, '_') : String(uid)
  return join(tmpdir(), `dsh-spill-${owner}`)
}

function failed(message: string, cause?: unknown): SpillError {
  return new SpillError(
    message,
    cause === undefined
      ? { code: SpillErrorCode.SPILL_WRITE_FAILED }
      : { code: SpillErrorCode.SPILL_WRITE_FAILED, cause },
  )
}

function reason(error: unknown): string {
  return error instanceof PrivateDirError ? error.reason : error instanceof Error ? error.message : String(error)
}

function errno(error: unknown): string | undefined {
  return error instanceof PrivateDirError ? error.errno : (error as NodeJS.ErrnoException | undefined)?.code
}

/** The root's stamp of its last pruning (a name no session directory can have: those never start with a dot). */
export const PRUNE_STAMP = '.last-prune'
/** Start-ups within this time of the last pruning do not prune again (a `dsh call` per tool call would rescan). */
export { PRUNE_INTERVAL_MS }

export interface PruneSpillRootOptions {
  /** Skip when the root was pruned less than this many ms ago (its `.last-prune` stamp); default 0: always. */
  unlessWithinMs?: number
  signal?: AbortSignal
}

/**
 * Removes saved results under `root` last modified before `before` (and session directories left empty), never
 * anything of another user, never through a symlink. A missing or unusable root prunes nothing; a root pruned
 * within `unlessWithinMs` is left alone. Stamps the root before pruning.
 */
export async function pruneSpillRoot(
  root: string,
  before: number,
  options: PruneSpillRootOptions = {},
): Promise<PruneCount> {
  const none = { files: 0, directories: 0, bytes: 0 }
  let dir: Dir
  try {
    dir = openPrivateDir(root, { create: false, writable: 'refuse', tighten: false })
  } catch {
    return none
  }
  try {
    if (!(await dueForPruning(dir, PRUNE_STAMP, options.unlessWithinMs ?? 0))) return none
    return await prune(dir, options.signal ? { before, signal: options.signal } : { before })
  } catch {
    return none
  } finally {
    dir.close()
  }
}

/**
 * `ctx.spillStore` on local files: `<root>/<session>/<call id>-<name>`, directories 0700, files 0600, created
 * exclusively. Every save walks root → session → file through descriptors (`@deepseek-ai/dsh-private-dir`): no
 * symlink is followed, each directory must be this user's, and nothing is cached, so a directory a temp cleaner
 * removed is made again on the next save. Files are kept after the process exits; at start-up (at most once an
 * hour per root), those older than `pruneAfterDays` are removed.
 */
export class LocalSpillStore extends SpillStore {
  static Config = Config
  readonly root: string

  constructor(ctx: Context, config: Config = {}) {
    super(ctx)
    this.root = resolve(config.root ?? defaultRoot())
    const days = config.pruneAfterDays ?? 7
    if (days > 0) {
      // In the background: start-up does not wait for it; disposal stops it between two entries and awaits it.
      ctx.effect(() => {
        const controller = new AbortController()
        const done = pruneSpillRoot(this.root, Date.now() - days * DAY_MS, {
          unlessWithinMs: PRUNE_INTERVAL_MS,
          signal: controller.signal,
        })
        return async () => {
          controller.abort()
          await done
        }
      }, 'spill-local prune')
    }
  }

  /** `<root>` and `<root>/<the session's random name>`: a session is shown only its own directory. */
  override localDirectories(session: ToolSession): { all: string; own: string } {
    return { all: this.root, own: join(this.root, session.dirName) }
  }

  async saveText(request: SaveTextRequest): Promise<SavedText> {
    const data = Buffer.from(request.content, 'utf8')
    return this.saveWith(request, async (handle) => {
      await handle.writeFile(data)
      return data.length
    })
  }

  /** Writes each part as it comes: one part is held at a time, whatever the size of the text. */
  override async saveStream(request: SaveStreamRequest): Promise<SavedText> {
    let started = false
    return this.saveWith(request, async (handle) => {
      if (started) throw failed('the text to save could be read only once, and a retry would need it again')
      started = true
      let bytes = 0
      for await (const part of request.content) {
        const data = typeof part === 'string' ? Buffer.from(part, 'utf8') : part
        for (let at = 0; at < data.byteLength; ) at += (await handle.write(data, at, data.byteLength - at)).bytesWritten
        bytes += data.byteLength
      }
      return bytes
    })
  }

  private async saveWith(
    request: Pick<SaveTextRequest, 'owner' | 'source' | 'suggestedName'>,
    write: Writer,
  ): Promise<SavedText> {
    const fileName = spillFileName(request.source.callId, request.suggestedName)
    const sessionName = request.owner.dirName
    // One retry when a directory vanished between two steps (a temp cleaner): the walk makes it again.
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.save(sessionName, fileName, write)
      } catch (error) {
        if (attempt === 0 && errno(error instanceof SpillError ? error.cause : error) === 'ENOENT') continue
        throw error instanceof SpillError
          ? error
          : failed(`cannot write a spill file in ${join(this.root, sessionName)}: ${reason(error)}`, error)
      }
    }
  }

  private async save(sessionName: string, fileName: string, write: Writer): Promise<SavedText> {
    const root = this.openRoot()
    try {
      const session = this.openSession(root, sessionName)
      try {
        const { locator, bytes } = await writeExclusive(session, fileName, write)
        return { locator, bytes, retrievalHint: RETRIEVAL_HINT }
      } finally {
        session.close()
      }
    } finally {
      root.close()
    }
  }

  /**
   * The root must be a real directory of ours (never a symlink: another user could have planted one under a shared
   * temp dir) that others cannot write to; missing, it is made 0700 (parents too: a configured root may be new).
   */
  private openRoot(): Dir {
    try {
      return openPrivateDir(this.root, { parents: true, writable: 'refuse' })
    } catch (error) {
      throw failed(`spill root ${this.root} is unusable: ${reason(error)}`, error)
    }
  }

  /** The session directory, made 0700, or an existing one only if it is a real directory of ours. */
  private openSession(root: Dir, sessionName: string): Dir {
    const dir = join(this.root, sessionName)
    try {
      return root.subdir(sessionName)
    } catch (error) {
      const what =
        error instanceof PrivateDirError && error.code === 'PRIVATE_DIR_FAILED'
          ? `cannot create the session directory ${dir} in spill root ${this.root}`
          : `cannot use the session directory ${dir}`
      throw failed(`${what}: ${reason(error)}`, error)
    }
  }
}

/** Writes a saved text into an open file; resolves with the bytes written. */
type Writer = (handle: FileHandle) => Promise<number>

/** Creates `name` (or `name-2`, `name-3`, … when taken) exclusively, mode 0600, and writes the text into it. */
async function writeExclusive(dir: Dir, fileName: string, write: Writer): Promise<{ locator: string; bytes: number }> {
  for (let n = 1; ; n++) {
    const name = n === 1 ? fileName : numbered(fileName, n)
    let handle: FileHandle
    try {
      handle = await open(dir.at(name), CREATE_FILE_FLAGS, 0o600)
    } catch (error) {
      if (errno(error) === 'EEXIST') continue
      throw error
    }
    try {
      const bytes = await write(handle)
      await handle.close()
      return { locator: join(dir.path, name), bytes }
    } catch (error) {
      await handle.close().catch(() => {})
      await unlink(dir.at(name)).catch(() => {})
      throw error
    }
  }
}

export default LocalSpillStore
