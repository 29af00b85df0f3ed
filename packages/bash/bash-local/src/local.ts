import { statSync } from 'node:fs'
import { resolve as resolvePath } from 'node:path'
import type { Context } from 'cordis'
import {
  BashError, BashErrorCode, taskDoneNotice,
  type BashExecRequest, type BashExecSpec, type BashRunResult, type BashTask, type BashTaskDoneEvent, type BashTaskDoneListener,
  type BashTaskRead, type BashTaskStatus, type CollectedOutput, type OutputIncrement,
} from '@deepseek-ai/dsh-bash'
import {
  SubprocessError, SubprocessErrorCode, type CollectedStream, type CollectOptions, type ExitStatus, type SubprocessHandle, type SubprocessService,
} from '@deepseek-ai/dsh-subprocess'
import { clampTimeout, deadline } from '@deepseek-ai/dsh-timeout'
import type { Config } from './config.ts'

/** Added over the scrubbed parent env: no colours, no pagers, a terminal that claims nothing. */
export const CHILD_ENV: Readonly<Record<string, string>> = { NO_COLOR: '1', TERM: 'dumb', PAGER: 'cat', GIT_PAGER: 'cat' }

type StreamName = 'stdout' | 'stderr'

/**
 * How a provider built on this executor starts a command: the argv for a spec (may reject, e.g. when a sandbox is
 * unavailable: the call then rejects with that error and nothing runs), and what to release after disposal.
 */
export interface Launcher {
  argv(spec: BashExecSpec): Promise<readonly string[]>
  close?(): void | Promise<void>
}

interface Task {
  readonly id: string
  readonly command: string
  readonly workdir: string
  readonly owner: string | undefined
  readonly handle: SubprocessHandle
  status: BashTaskStatus
  /** Next unread byte of each stream. */
  readonly offsets: Record<StreamName, number>
  killing: boolean
  /** Settles once the status is final. */
  ended: Promise<void>
}

/**
 * Everything the local executor knows, kept out of the Service object (whose properties Cordis reads through a
 * per-caller proxy): the task table, the foreground commands in flight, the listeners. `ctx` is the executor's
 * own context, so events are emitted from it whoever called.
 */
export class LocalBash {
  private readonly tasks = new Map<string, Task>()
  private readonly foreground = new Set<SubprocessHandle>()
  /** Spawns in flight: disposal waits for them, so nothing started during disposal escapes it. */
  private readonly pending = new Set<Promise<unknown>>()
  private readonly listeners = new Set<BashTaskDoneListener>()
  private readonly collect: CollectOptions
  private counter = 0
  private closed = false

  /** Looked up once: the executor is restarted whenever ctx.subprocess is replaced (it is injected). */
  private readonly subprocess: SubprocessService

  constructor(private readonly ctx: Context, private readonly config: Config, private readonly launcher?: Launcher) {
    this.subprocess = ctx.subprocess
    this.collect = { maxBytes: config.maxOutputBytes, spill: { maxBytes: config.spillMaxBytes } }
  }

  resolve(request: BashExecRequest): BashExecSpec {
    return {
      command: request.command,
      workdir: resolvePath(request.workdir ?? process.cwd()),
      timeoutMs: clampTimeout(request.timeoutMs, { defaultMs: this.config.timeoutMs, maxMs: this.config.maxTimeoutMs }),
      signal: request.signal,
      owner: request.owner,
      stdin: request.stdin,
      env: { ...CHILD_ENV, ...request.env },
    }
  }

  async run(spec: BashExecSpec): Promise<BashRunResult> {
    this.prepare(spec)
    const limit = deadline(spec.signal ?? new AbortController().signal, spec.timeoutMs)
    let handle: SubprocessHandle
    try {
      handle = await this.launch(spec, limit.signal, (h) => this.foreground.add(h))
    } catch (error) {
      limit.dispose()
      throw error
    }
    try {
      const exit = await handle.done
      const timedOut = limit.expired
      const aborted = !timedOut && limit.signal.aborted
      // A stopped command: its whole tree is gone before the call ends, not only the shell.
      if (timedOut || aborted) await handle.waitForExit()
      return {
        exitCode: exit.exitCode,
        signal: exit.signal,
        timedOut,
        aborted,
        timeoutMs: spec.timeoutMs,
        stdout: collected(handle.collected.stdout),
        stderr: collected(handle.collected.stderr),
      }
    } finally {
      limit.dispose()
      this.foreground.delete(handle)
    }
  }

  async start(spec: BashExecSpec): Promise<BashTask> {
    this.prepare(spec)
    let task!: Task
    await this.launch(spec, spec.signal, (handle) => {
      task = {
        id: `bash-${++this.counter}`,
        command: spec.command,
        workdir: spec.workdir,
        owner: spec.owner,
        handle,
        status: { state: 'running' },
        offsets: { stdout: 0, stderr: 0 },
        killing: false,
        ended: Promise.resolve(),
      }
      task.ended = handle.done.then((exit) => this.finish(task, exit))
      this.tasks.set(task.id, task)
    })
    return snapshot(task)
  }

  get(id: string): BashTask | undefined {
    const task = this.tasks.get(id)
    return task && snapshot(task)
  }

  list(): BashTask[] {
    return [...this.tasks.values()].map(snapshot)
  }

  ownerOf(id: string): string | undefined {
    return this.tasks.get(id)?.owner
  }

  readOutput(id: string): BashTaskRead {
    const task = this.require(id)
    // Reading is synchronous and the status only changes once both streams are drained, so a final status
    // always comes with the rest of the output.
    return { stdout: this.advance(task, 'stdout'), stderr: this.advance(task, 'stderr'), status: task.status }
  }

  async kill(id: string): Promise<boolean> {
    const task = this.require(id)
    const killsIt = task.status.state === 'running' && !task.killing
    task.killing = true
    // Also after the shell ended: a descendant it left in its process group is stopped too.
    task.handle.terminate()
    await Promise.all([task.ended, task.handle.waitForExit()])
    return killsIt
  }

  addListener(listener: BashTaskDoneListener): () => void {
    if (this.closed) return () => {}
    this.listeners.add(listener)
    return () => { this.listeners.delete(listener) }
  }

  /** Disposal: no notice from now on; every command and task (and its descendants) is stopped and awaited. */
  async close(): Promise<void> {
    this.closed = true
    this.listeners.clear()
    await Promise.allSettled([...this.pending])
    const handles = [...this.foreground, ...[...this.tasks.values()].map((task) => task.handle)]
    for (const handle of handles) handle.terminate()
    await Promise.all(handles.map((handle) => Promise.all([handle.done, handle.waitForExit()])))
    await this.launcher?.close?.()
  }

  private require(id: string): Task {
    const task = this.tasks.get(id)
    if (!task) throw new BashError(`unknown bash task ${JSON.stringify(id)}`, { code: BashErrorCode.BASH_UNKNOWN_TASK })
    return task
  }

  private advance(task: Task, name: StreamName): OutputIncrement {
    const stream = task.handle.collected[name]
    if (!stream) return { text: '', lossy: false }
    const read = stream.readFrom(task.offsets[name])
    task.offsets[name] = read.nextOffset
    return read.spillPath === undefined ? { text: read.text, lossy: read.lossy } : { text: read.text, lossy: read.lossy, spillPath: read.spillPath }
  }

  private finish(task: Task, exit: ExitStatus): void {
    task.status = exit.signal !== null ? { state: 'killed', signal: exit.signal } : { state: 'completed', exitCode: exit.exitCode ?? 0 }
    if (this.closed) return
    const event: BashTaskDoneEvent = { taskId: task.id, owner: task.owner, status: task.status, notice: taskDoneNotice(task.id, task.status) }
    for (const listener of [...this.listeners]) {
      try {
        listener(event)
      } catch (error) {
        this.ctx.logger('bash-local').warn('an onTaskDone listener failed: %s', (error as Error)?.message ?? String(error))
      }
    }
    try {
      this.ctx.emit('bash/task-done', event)
    } catch (error) {
      this.ctx.logger('bash-local').warn('a bash/task-done listener failed: %s', (error as Error)?.message ?? String(error))
    }
  }

  /** The checks that make `run`/`start` reject instead of running: each failure says what is wrong. */
  private prepare(spec: BashExecSpec): void {
    this.assertOpen()
    if (spec.signal?.aborted) throw new BashError('command not started: the signal was already aborted', { code: BashErrorCode.BASH_ABORTED, cause: spec.signal.reason })
    if (spec.command.includes('\0')) throw new BashError('command contains a NUL byte', { code: BashErrorCode.BASH_INVALID_REQUEST })
    checkWorkdir(spec.workdir)
  }

  private assertOpen(): void {
    if (this.closed) throw new BashError('the bash executor was disposed', { code: BashErrorCode.BASH_DISPOSED })
  }

  /** Spawns `<shell> -c <command>` and hands the handle to `register` before disposal can look for it. */
  private launch(spec: BashExecSpec, signal: AbortSignal | undefined, register: (handle: SubprocessHandle) => void): Promise<SubprocessHandle> {
    const launched = (async () => {
      let handle: SubprocessHandle
      try {
        // `--`: a command that starts with "-" is a command, never a shell option.
        const argv = this.launcher ? await this.launcher.argv(spec) : [this.config.shell, '-c', '--', spec.command]
        handle = await this.subprocess.spawn({
          argv,
          cwd: spec.workdir,
          env: spec.env,
          stdin: spec.stdin === undefined ? 'ignore' : { data: spec.stdin },
          stdout: this.collect,
          stderr: this.collect,
          graceMs: this.config.graceMs,
          ...(signal ? { signal } : {}),
        })
      } catch (error) {
        throw translate(error)
      }
      register(handle)
      // Disposal began while the shell was starting: it is stopped like every other.
      if (this.closed) handle.terminate()
      return handle
    })()
    this.pending.add(launched)
    const forget = () => { this.pending.delete(launched) }
    launched.then(forget, forget)
    return launched
  }
}

function snapshot(task: Task): BashTask {
  return { id: task.id, command: task.command, workdir: task.workdir, owner: task.owner, status: task.status }
}

function collected(stream: CollectedStream | undefined): CollectedOutput {
  if (!stream) return { text: '', truncated: false, totalBytes: 0 }
  const { text } = stream.readFrom(0)
  const { truncated, totalBytes, spillPath } = stream
  return truncated && spillPath !== undefined ? { text, truncated, totalBytes, spillPath } : { text, truncated, totalBytes }
}

/** One synchronous stat: cheaper than a thread-pool round trip on every command, and it cannot block for long. */
function checkWorkdir(workdir: string): void {
  const shown = JSON.stringify(workdir)
  let isDirectory: boolean
  try {
    isDirectory = statSync(workdir).isDirectory()
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    const why = code === 'ENOENT' || code === 'ENOTDIR' ? 'does not exist' : `cannot be used (${code ?? (error as Error).message})`
    throw new BashError(`working directory ${shown} ${why}`, { code: BashErrorCode.BASH_INVALID_WORKDIR, cause: error })
  }
  if (!isDirectory) throw new BashError(`working directory ${shown} is not a directory`, { code: BashErrorCode.BASH_INVALID_WORKDIR })
}

function translate(error: unknown): unknown {
  if (!(error instanceof SubprocessError)) return error
  const code = error.code === SubprocessErrorCode.SUBPROCESS_ABORTED
    ? BashErrorCode.BASH_ABORTED
    : error.code === SubprocessErrorCode.SUBPROCESS_INVALID_REQUEST ? BashErrorCode.BASH_INVALID_REQUEST : BashErrorCode.BASH_SPAWN_FAILED
  return new BashError(error.message, { code, cause: error })
}
