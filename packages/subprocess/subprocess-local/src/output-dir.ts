import { lstatSync, openSync, fstatSync } from 'node:fs'
import { rmdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { CREATE_FILE_FLAGS, makePrivateTempDir, openSharedDir, prune, type Dir, type PruneCount } from '@deepseek-ai/dsh-private-dir'

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
 * directory is made on the first spill (mkdtemp, then checked: a real 0700 directory of this user) and kept open;
 * files are created through its descriptor, exclusively, 0600, never through a symlink. When a temp cleaner
 * removed it, a fresh one is made the same way — never the old name, which someone else may have taken since.
 */
export class OutputDir {
  private dir: Dir | undefined
  private files = 0
  private readonly parent: string

  constructor(parent: string | undefined) {
    this.parent = resolve(parent ?? tmpdir())
  }

  /** Creates the spill file of `stream` of process `pid`; throws when none can be made. */
  createFile(pid: number, stream: string): SpillFile {
    for (let attempt = 0; ; attempt++) {
      const dir = this.dir ??= makePrivateTempDir(this.parent, PREFIX)
      const name = `${++this.files}-${pid}-${stream}.log`
      try {
        return { path: join(dir.path, name), fd: openSync(dir.at(name), CREATE_FILE_FLAGS, 0o600) }
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || attempt > 0) throw error
        this.dir = undefined
        dir.close()
      }
    }
  }

  /** Closes the directory and removes it if no spill file was kept in it: kept files outlive the provider. */
  async close(): Promise<void> {
    const dir = this.dir
    if (!dir) return
    this.dir = undefined
    try {
      // Only if its name still leads to our directory (a cleaner may have removed it, someone else taken the name).
      const at = lstatSync(dir.path)
      const ours = fstatSync(dir.fd)
      if (at.dev === ours.dev && at.ino === ours.ino) await rmdir(dir.path).catch(() => {})
    } catch { /* gone already */ }
    dir.close()
  }
}

/**
 * At start-up: removes the spill files older than `before` in this user's `dsh-subprocess-XXXXXX` directories
 * under `parent`, and those directories once empty and idle as long. Never another user's entry, never through a
 * symlink, nothing in a parent that others can write to without the sticky bit.
 */
export async function pruneOutputDirs(parent: string | undefined, before: number, signal?: AbortSignal): Promise<PruneCount> {
  let shared: Dir
  try {
    shared = openSharedDir(resolve(parent ?? tmpdir()))
  } catch {
    return { files: 0, directories: 0, bytes: 0 }
  }
  try {
    return await prune(shared, { before, match: (name) => OURS.test(name), ...(signal ? { signal } : {}) })
  } finally {
    shared.close()
  }
}
