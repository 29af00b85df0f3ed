import { openSync } from 'node:fs'
import { rmdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import {
  CREATE_FILE_FLAGS,
  dueForPruning,
  makePrivateTempDir,
  openPrivateDir,
  openSharedDir,
  prune,
  PRUNE_INTERVAL_MS,
  type Dir,
  type PruneCount,
} from '@deepseek-ai/dsh-private-dir'

/** A spill file just created for one stream: its path (shown to the model) and the open descriptor to write. */
export interface SpillFile {
  path: string
  fd: number
}

const PREFIX = 'dsh-subprocess-'
/** Exactly what mkdtemp makes from the prefix: other names that merely start alike are never pruned. */
const OURS = /^dsh-subprocess-[A-Za-z0-9]{6}$/

/**
 * The provider's private output directory `<parent>/dsh-subprocess-XXXXXX` and the spill files in it. The
 * directory is made on the first spill (mkdtemp, then checked: a real 0700 directory of this user). For each file
 * it is opened and checked again (never through a symlink, still this user's, the very inode that was checked) and
 * the file is created through that descriptor, exclusively, 0600. When a temp cleaner removed it, or its name now
 * leads elsewhere, a fresh one is made the same way — never the old name, which someone else may have taken since.
 * No descriptor is held between two files.
 */
export class OutputDir {
  private path: string | undefined
  private files = 0
  private readonly parent: string

  constructor(parent: string | undefined) {
    this.parent = resolve(parent ?? tmpdir())
  }

  /** Creates the spill file of `stream` of process `pid`; throws when none can be made. */
  createFile(pid: number, stream: string): SpillFile {
    for (let attempt = 0; ; attempt++) {
      const dir = this.open()
      const name = `${++this.files}-${pid}-${stream}.log`
      try {
        return { path: join(dir.path, name), fd: openSync(dir.at(name), CREATE_FILE_FLAGS, 0o600) }
      } catch (error) {
        // Removed between its check and the create: once more, in a fresh directory.
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || attempt > 0) throw error
        this.path = undefined
      } finally {
        dir.close()
      }
    }
  }

  /** Removes the directory if no spill file was kept in it (kept files outlive the provider), and if it is ours still. */
  async close(): Promise<void> {
    const path = this.path
    this.path = undefined
    if (!path) return
    try {
      openPrivateDir(path, { create: false, tighten: false }).close()
    } catch {
      return
    }
    await rmdir(path).catch(() => {})
  }

  /** Our directory, checked; a fresh one when there is none yet or ours is gone or no longer leads to ours. */
  private open(): Dir {
    if (this.path) {
      try {
        return openPrivateDir(this.path, { create: false })
      } catch {
        /* removed by a cleaner, or replaced: never reuse the name */
      }
    }
    const dir = makePrivateTempDir(this.parent, PREFIX)
    this.path = dir.path
    return dir
  }
}

/** The stamp of this user's last pruning in a parent (a dot name, never one of ours: see OURS). */
export function pruneStampName(): string {
  return `.dsh-subprocess-pruned-${process.getuid?.() ?? 'user'}`
}

/** Start-ups within this time of the last pruning of a parent do not prune it again. */
export { PRUNE_INTERVAL_MS }

/**
 * At start-up: removes the spill files older than `before` in this user's `dsh-subprocess-XXXXXX` directories
 * under `parent`, and those directories once empty and idle as long. Never another user's entry, never through a
 * symlink, nothing in a parent that others can write to without the sticky bit. With `unlessWithinMs`, a parent
 * this user pruned less long ago (its stamp, pruneStampName()) is left alone: the temp dir holds one directory per
 * process that ever spilled, and a `dsh call` per tool call would rescan them all (about 45 ms for 98 of them).
 */
export async function pruneOutputDirs(
  parent: string | undefined,
  before: number,
  options: { signal?: AbortSignal; unlessWithinMs?: number } = {},
): Promise<PruneCount> {
  const none = { files: 0, directories: 0, bytes: 0 }
  let shared: Dir
  try {
    shared = openSharedDir(resolve(parent ?? tmpdir()))
  } catch {
    return none
  }
  try {
    if (!(await dueForPruning(shared, pruneStampName(), options.unlessWithinMs ?? 0))) return none
    return await prune(shared, {
      before,
      match: (name) => OURS.test(name),
      ...(options.signal ? { signal: options.signal } : {}),
    })
  } catch {
    // Best effort, and never a rejection: nobody awaits the start-up pruning until disposal.
    return none
  } finally {
    shared.close()
  }
}
