import type { ChildProcess } from 'node:child_process'
import type { Readable, Writable } from 'node:stream'
import type {
  CollectOptions,
  ExitStatus,
  OutputDisposition,
  OutputHolder,
  SpawnRequest,
  SubprocessHandle,
} from '@deepseek-ai/dsh-subprocess'
import { Collector } from './collect.ts'
import type { SpillFile } from './output-dir.ts'
import { GroupWatch, signalGroup } from './group.ts'
import { endOf, holdersOf, likelyPeer, ourEnd } from './holders.ts'
import type { Mark } from './reaper.ts'

/** Longest pause between two checks of whether a group is gone, in ms (the first check is immediate). */
const MAX_POLL_MS = 100

const ignore = () => {}

const isCollect = (mode: OutputDisposition): mode is CollectOptions => typeof mode === 'object'

export interface HandleHooks {
  /** Creates the spill file for `stream` (throws when none can be made). */
  spillFile(pid: number, stream: 'stdout' | 'stderr'): SpillFile
  /** The whole group is gone: the provider stops tracking it. */
  gone(handle: LocalHandle): void
}

/**
 * One spawned process group. The leader's pid is the group id (it was spawned `detached`, so it called setsid),
 * which is why every kill goes to `-pid`. After the leader exits, the group is polled (with a bounded back-off)
 * until no member runs: only then is the tree known to be gone and the pid no longer signalled.
 */
export class LocalHandle implements SubprocessHandle {
  readonly pid: number
  readonly exited: Promise<ExitStatus>
  readonly done: Promise<ExitStatus>
  readonly stdin: Writable | null = null
  readonly stdout: Readable | null = null
  readonly stderr: Readable | null = null
  readonly collected: { stdout?: Collector; stderr?: Collector } = {}

  private readonly graceMs: number
  private readonly signal: AbortSignal | undefined
  private readonly watch: GroupWatch
  private terminating = false
  private killTimer: NodeJS.Timeout | undefined
  private pollTimer: NodeJS.Timeout | undefined
  private waiters = 0
  private gone = false
  private readonly groupGone: Promise<void>
  private markGone!: () => void
  /** After a stop: the processes that carry this spawn's mark outside its group are gone. */
  private marksGone: Promise<void> = Promise.resolve()
  /** The child's collected streams, for output listeners. */
  private readonly sources: Readable[] = []
  /** The child's ends of the collected streams (`socket:[…]`), for finding who still holds them. */
  private readonly ends = new Set<string>()
  private holders: readonly OutputHolder[] | undefined

  constructor(
    child: ChildProcess,
    request: SpawnRequest,
    private readonly mark: Mark,
    private readonly hooks: HandleHooks,
  ) {
    const pid = child.pid as number
    this.pid = pid
    this.graceMs = request.graceMs
    this.signal = request.signal
    this.watch = new GroupWatch(pid)
    child.on('error', ignore)

    if (child.stdin) {
      // A child may exit without reading its stdin: EPIPE then is its choice, not an error of ours.
      child.stdin.on('error', ignore)
      if (request.stdin === 'pipe') this.stdin = child.stdin
      else if (typeof request.stdin === 'object') child.stdin.end(request.stdin.data)
    }
    const finished: Promise<void>[] = []
    for (const name of ['stdout', 'stderr'] as const) {
      const mode = request[name]
      const stream = child[name]
      if (!stream) continue
      if (isCollect(mode)) {
        const collector = new Collector(mode, () => hooks.spillFile(pid, name))
        collector.attach(stream)
        this.sources.push(stream)
        const end = endOf(pid, name === 'stdout' ? 1 : 2)
        if (end !== undefined) this.ends.add(end)
        this.collected[name] = collector
        finished.push(collector.finished)
      } else {
        this[name] = stream
      }
    }

    this.groupGone = new Promise((resolve) => {
      this.markGone = resolve
    })
    this.exited = new Promise((resolve) => {
      child.once('exit', (exitCode, signal) => {
        resolve({ exitCode, signal })
        this.poll(1)
      })
    })
    this.done =
      finished.length === 0
        ? this.exited
        : this.exited.then(async (status) => {
            await Promise.all(finished)
            return status
          })
    this.signal?.addEventListener('abort', this.terminate, { once: true })
  }

  /**
   * SIGTERM to the group, SIGKILL after the grace; what left the group (setsid, a double fork) but carries the
   * spawn's mark is stopped alike once the group is gone, and waitForExit() waits for it too.
   */
  readonly terminate = (): void => {
    if (this.terminating) return
    this.terminating = true
    if (this.gone) {
      this.marksGone = this.mark.stop(this.graceMs)
      return this.abandonOutputLater()
    }
    signalGroup(this.pid, 'SIGTERM')
    this.mark.signal('SIGTERM')
    this.killTimer = setTimeout(() => {
      this.killTimer = undefined
      if (!this.gone) signalGroup(this.pid, 'SIGKILL')
    }, this.graceMs)
  }

  async waitForExit(): Promise<ExitStatus> {
    if (!this.gone) {
      this.waiters++
      this.pollTimer?.ref()
      try {
        await this.groupGone
      } finally {
        this.waiters--
      }
    }
    await this.marksGone
    return this.exited
  }

  alive(): boolean {
    return !this.gone && this.watch.alive()
  }

  onOutput(listener: () => void): () => void {
    // Registered after the collector's own listener: by the time this runs, the bytes are readable.
    const onData = () => listener()
    for (const source of this.sources) source.on('data', onData)
    return () => {
      for (const source of this.sources) source.off('data', onData)
    }
  }

  abandonOutput(): readonly OutputHolder[] {
    if (this.holders) return this.holders
    const open = this.sources.filter((source) => !source.readableEnded && !source.destroyed)
    // The child's ends were read at spawn; a child that was gone before that leaves only our ends to go by.
    const guesses = new Set<string>()
    for (const source of open) {
      const peer = likelyPeer(ourEnd(source) ?? '')
      if (peer !== undefined && !this.ends.has(peer)) guesses.add(peer)
    }
    this.holders = open.length > 0 ? holdersOf(this.ends, guesses) : []
    this.collected.stdout?.abandon()
    this.collected.stderr?.abandon()
    return this.holders
  }

  /** Last resort at host exit: no grace, no waiting. */
  kill(): void {
    if (!this.gone) signalGroup(this.pid, 'SIGKILL')
    this.mark.signal('SIGKILL')
  }

  private poll(delay: number): void {
    this.pollTimer = undefined
    if (this.watch.alive()) {
      this.pollTimer = setTimeout(() => this.poll(Math.min(delay * 2, MAX_POLL_MS)), delay)
      // Nobody waits: a lingering descendant must not keep the host alive (the exit hook still kills it).
      if (this.waiters === 0) this.pollTimer.unref()
      return
    }
    this.gone = true
    clearTimeout(this.killTimer)
    this.killTimer = undefined
    this.signal?.removeEventListener('abort', this.terminate)
    // Stopped: what left the group gets the rest of the grace (it had its SIGTERM with the group's).
    if (this.terminating) this.marksGone = this.mark.stop(this.graceMs)
    this.hooks.gone(this)
    this.markGone()
    if (this.terminating) this.abandonOutputLater()
  }

  /**
   * After terminate(), once the group and the marked processes are dead, a collected pipe may still be held open by a
   * process that left the group and dropped its mark (`env -i`). Give the last bytes one grace period to arrive, then stop waiting for that pipe, so that
   * `done` (and the provider's dispose) cannot hang on a process we may not kill.
   */
  private abandonOutputLater(): void {
    void this.marksGone.then(() => setTimeout(() => void this.abandonOutput(), this.graceMs).unref())
  }
}
