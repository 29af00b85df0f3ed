import { writeFileSync } from 'node:fs'
import type { SubprocessHandle, SubprocessService } from '@deepseek-ai/dsh-subprocess'

/**
 * The reaper, a host shell started once per sandbox: it blocks reading a pipe whose only writer is dsh, so it
 * reads EOF exactly when dsh is gone — also after a SIGKILL, which no handler in dsh sees. It then SIGKILLs every
 * process group it was told of (the namespace's init is in its command's group, and everything in a PID namespace
 * dies with its init: `setsid` daemons too) and removes the sandbox's state directory (the private /tmp dirs).
 * A group whose id now names a live process that is not bubblewrap was reused by someone else and is left alone.
 */
const REAPER =
  'read -r _; [ -f "$1" ] && while read -r g; do ' +
  'c=; [ -e "/proc/$g" ] && read -r c < "/proc/$g/comm"; ' +
  '[ -z "$c" ] || [ "$c" = bwrap ] && kill -KILL "-$g" 2>/dev/null; ' +
  'done < "$1"; rm -rf -- "$2"'

/**
 * Why not bwrap's `--die-with-parent`: it ties the namespace's init to the bwrap that started it, and that bwrap
 * exits with the shell — so whatever the command left running would die at once, and docs/seams.md#tasks's adoption of leftovers
 * as tasks would be impossible. The reaper keeps adoption and still takes everything down with dsh.
 */
export class Lifeline {
  private reaper: Promise<SubprocessHandle> | undefined
  private readonly groups = new Set<number>()

  constructor(
    private readonly subprocess: SubprocessService,
    private readonly sh: string,
    private readonly groupsFile: string,
    private readonly stateDir: string,
  ) {}

  /** Starts the reaper once; resolves when it runs. Rejects (and is retried next time) when it cannot start. */
  async ensure(): Promise<void> {
    this.reaper ??= this.subprocess.spawn({
      argv: [this.sh, '-c', REAPER, 'sh', this.groupsFile, this.stateDir],
      cwd: '/',
      env: { PATH: '/usr/bin:/bin' },
      // It kills the sandboxed groups once dsh is gone: the local reaper must not kill it first.
      reap: false,
      stdin: 'pipe',
      stdout: 'ignore',
      stderr: 'ignore',
      graceMs: 0,
    })
    try {
      await this.reaper
    } catch (error) {
      this.reaper = undefined
      throw error
    }
  }

  /** A sandboxed command's process group, to kill if dsh dies while any of it runs. */
  watch(handle: SubprocessHandle): void {
    this.groups.add(handle.pid)
    this.save()
    // The leader's exit is the moment to look again: the group is usually gone a moment later (or adopted).
    void handle.done.then(() => this.save())
  }

  /** Stops the reaper (dsh ends normally: everything was stopped already). */
  async close(): Promise<void> {
    const reaper = this.reaper
    this.reaper = undefined
    if (!reaper) return
    const handle = await reaper.catch(() => undefined)
    if (!handle) return
    handle.terminate()
    await handle.waitForExit()
  }

  /** Writes the live groups (the dead are dropped first), one id a line. */
  private save(): void {
    for (const group of this.groups) {
      try {
        process.kill(-group, 0)
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ESRCH') this.groups.delete(group)
      }
    }
    try {
      writeFileSync(this.groupsFile, [...this.groups].map((group) => `${group}\n`).join(''), { mode: 0o600 })
    } catch {
      // The state directory is gone (disposal): nothing is left to watch.
    }
  }
}
