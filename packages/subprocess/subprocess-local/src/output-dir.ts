import { mkdirSync, mkdtempSync, openSync } from 'node:fs'
import { rmdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

/** A spill file just created for one stream: its path (shown to the model) and the open descriptor to write. */
export interface SpillFile {
  path: string
  fd: number
}

/**
 * The provider's private output directory `<parent>/dsh-subprocess-XXXXXX` and the spill files in it. The
 * directory is made on the first spill; files are created exclusively, 0600.
 */
export class OutputDir {
  private dir: string | undefined
  private files = 0

  constructor(private readonly parent: string | undefined) {}

  /** Creates the spill file of `stream` of process `pid`; throws when none can be made. */
  createFile(pid: number, stream: string): SpillFile {
    if (!this.dir) {
      const parent = resolve(this.parent ?? tmpdir())
      mkdirSync(parent, { recursive: true, mode: 0o700 })
      this.dir = mkdtempSync(join(parent, 'dsh-subprocess-'))
    }
    const path = join(this.dir, `${++this.files}-${pid}-${stream}.log`)
    return { path, fd: openSync(path, 'wx', 0o600) }
  }

  /** Removes the directory only if no spill file was kept in it: kept files outlive the provider. */
  async close(): Promise<void> {
    if (this.dir) await rmdir(this.dir).catch(() => {})
  }
}
