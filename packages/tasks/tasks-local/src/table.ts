import type { Context } from 'cordis'
import {
  TaskError,
  TaskErrorCode,
  taskDoneNotice,
  type OutputIncrement,
  type StrayProcess,
  type Task,
  type TaskDoneEvent,
  type TaskDoneListener,
  type TaskExit,
  type TaskInit,
  type TaskProcess,
  type TaskRead,
  type TaskStatus,
  type TaskStream,
  type TaskWaitOptions,
  type TaskWaitOutcome,
} from '@deepseek-ai/dsh-tasks'
import type { ToolSession } from '@deepseek-ai/dsh-tools'
import { PatternTester } from './pattern-tester.ts'

type StreamName = 'stdout' | 'stderr'
const STREAMS: readonly StreamName[] = ['stdout', 'stderr']

export interface TaskTableOptions {
  /** Finished tasks whose output is held until read; past this, the oldest one's output is dropped. Default 100. */
  maxFinishedTasks?: number
  /** Dropped tasks that still answer `get` (their final status); past this, the oldest become unknown. Default 1000. */
  maxForgottenTasks?: number
  /** How long one test of a wait's pattern may run before the wait gives it up. Default PATTERN_TEST_MS. */
  patternTestMs?: number
}

interface Entry {
  readonly id: string
  readonly command: string
  readonly workdir: string
  readonly startedAt: number
  readonly interactive: boolean
  status: TaskStatus
  leftRunning: readonly StrayProcess[]
  /** Undefined once the task was dropped from memory (read to the end, or too many finished unread). */
  process: TaskProcess | undefined
  readonly offsets: Record<StreamName, number>
  /** A kill was asked for while it ran: it ends as killed, and its owner gets no notice. */
  killing: boolean
  finished: boolean
  /** Settles once the status is final. */
  ended: Promise<void>
  /** What a read of a task dropped before it was read to the end says once: that its output was lost. */
  lost: Record<StreamName, OutputIncrement> | undefined
}

const NONE: OutputIncrement = { text: '', lossy: false }
/** setTimeout's largest delay; a longer one fires at once. */
const MAX_TIMER_MS = 2 ** 31 - 1

/**
 * The tasks of one session (kept in the session) or of no session: ids, incremental reads, waits, status, completion
 * events and session notices, kills and their bookkeeping. `ctx` is the service's own context: events are emitted
 * from it; `listeners` are the service's, shared by every table.
 */
export class TaskTable {
  private readonly entries = new Map<string, Entry>()
  /** Finished tasks still holding output, oldest first. */
  private readonly unread: Entry[] = []
  /** Ids of dropped tasks that still answer `get`, oldest first. */
  private readonly forgotten: string[] = []
  private readonly maxFinished: number
  private readonly maxForgotten: number
  private counter = 0
  private closed = false
  /** The session's own pattern tester: its slow patterns queue behind its own tests only. */
  private patterns: PatternTester | undefined
  private readonly patternTestMs: number | undefined

  constructor(
    private readonly ctx: Context,
    options: TaskTableOptions,
    private readonly session: ToolSession | undefined,
    private readonly listeners: Set<TaskDoneListener>,
  ) {
    this.maxFinished = options.maxFinishedTasks ?? 100
    this.maxForgotten = options.maxForgottenTasks ?? 1000
    this.patternTestMs = options.patternTestMs
  }

  /** Registers a running process as the next task; its unread output starts at `init.offsets`; the signal kills it. */
  add(init: TaskInit): Task {
    if (this.closed) {
      init.process.terminate()
      throw new TaskError('the task service was disposed', { code: TaskErrorCode.TASKS_DISPOSED })
    }
    const entry = this.register(init)
    const signal = init.signal
    if (signal) {
      const onAbort = () => void this.kill(entry.id).catch(() => {})
      if (signal.aborted) onAbort()
      else {
        signal.addEventListener('abort', onAbort, { once: true })
        void entry.ended.then(() => signal.removeEventListener('abort', onAbort))
      }
    }
    return snapshot(entry)
  }

  get(id: string): Task | undefined {
    const entry = this.entries.get(id)
    return entry && snapshot(entry)
  }

  list(): Task[] {
    return [...this.entries.values()].map(snapshot)
  }

  readOutput(id: string): TaskRead {
    const entry = this.require(id)
    const process = entry.process
    if (!process) {
      const lost = entry.lost
      entry.lost = undefined
      return { stdout: lost?.stdout ?? NONE, stderr: lost?.stderr ?? NONE, status: entry.status }
    }
    // Synchronous, and the status turns final only once the output is complete: a final status comes with the rest.
    const read: TaskRead = {
      stdout: this.advance(entry, process, 'stdout'),
      stderr: this.advance(entry, process, 'stderr'),
      status: entry.status,
    }
    if (entry.finished) {
      this.drop(entry)
      // The model has just read the end itself: a notice still waiting for its next result would only repeat it.
      if (this.session) this.ctx.get('tools')?.withdrawNotice(this.session, entry.id)
    }
    return read
  }

  async waitFor(id: string, options: TaskWaitOptions): Promise<TaskWaitOutcome> {
    const entry = this.require(id)
    const { pattern, signal } = options
    // The pattern is the model's: it is tested on a worker, within a time bound (PatternTester), never on this loop.
    const test = async (): Promise<boolean | 'too-slow'> => {
      const process = entry.process
      if (!pattern || !process) return false
      const texts: string[] = []
      for (const name of STREAMS) {
        const stream = process[name]
        if (stream) texts.push(stream.readFrom(entry.offsets[name]).text)
      }
      return this.tester().test(pattern, texts)
    }
    const judged = (outcome: boolean | 'too-slow'): TaskWaitOutcome | undefined =>
      outcome === 'too-slow' ? 'pattern-too-slow' : outcome ? 'matched' : undefined
    return new Promise((resolve) => {
      let settled = false
      const cleanup: (() => void)[] = []
      const finish = (outcome: TaskWaitOutcome) => {
        if (settled) return
        settled = true
        for (const undo of cleanup) undo()
        resolve(outcome)
      }
      // One test in flight per wait: output that arrives while a test runs is tested once it is done.
      let testing = false
      let again = false
      const retest = async (): Promise<void> => {
        if (testing) {
          again = true
          return
        }
        testing = true
        try {
          do {
            again = false
            const outcome = judged(await test())
            if (outcome) return finish(outcome)
          } while (again && !settled)
        } finally {
          testing = false
        }
      }
      // Listening before the first test, which takes a round trip to the worker: output printed meanwhile is not missed.
      if (pattern && entry.process) cleanup.push(entry.process.onOutput(() => void retest()))
      void retest().then(() => {
        if (entry.finished) finish('ended')
        else if (signal?.aborted) finish('aborted')
      })
      // A task that had ended already is judged by the first test, which saw all of its output; else its end is
      // tested once more, for the output it printed last.
      if (!entry.finished) void entry.ended.then(async () => finish(judged(await test()) ?? 'ended'))
      const timer = setTimeout(() => finish('timeout'), Math.min(Math.max(options.timeoutMs, 0), MAX_TIMER_MS))
      cleanup.push(() => clearTimeout(timer))
      if (signal) {
        const onAbort = () => finish('aborted')
        signal.addEventListener('abort', onAbort, { once: true })
        cleanup.push(() => signal.removeEventListener('abort', onAbort))
      }
    })
  }

  async write(id: string, text: string): Promise<void> {
    const entry = this.require(id)
    const process = entry.process
    if (!entry.interactive) {
      throw new TaskError(
        `task ${id} takes no input: it was not started with interactive: true (start a program that reads input with bash run_in_background: true, interactive: true)`,
        { code: TaskErrorCode.BASH_TASK_NOT_INTERACTIVE },
      )
    }
    if (entry.finished || !process?.write) {
      throw new TaskError(
        `task ${id} has ended ${statusText(entry.status)}: it takes no more input (read its output with bash_output)`,
        { code: TaskErrorCode.BASH_TASK_ENDED },
      )
    }
    try {
      await process.write(text)
    } catch (error) {
      // It ended while the text was on its way (its terminal closed).
      throw new TaskError(`task ${id} has ended: it takes no more input (read its output with bash_output)`, {
        code: TaskErrorCode.BASH_TASK_ENDED,
        cause: error,
      })
    }
  }

  async kill(id: string): Promise<boolean> {
    const entry = this.require(id)
    if (entry.finished || !entry.process) return false
    const first = !entry.killing
    entry.killing = true
    entry.process.terminate()
    await entry.ended
    return first
  }

  /** The session is over: its running tasks are killed (no notice: it is gone) and all of its tasks are forgotten. */
  async end(): Promise<void> {
    const mine = [...this.entries.values()]
    await Promise.all(mine.map((entry) => this.kill(entry.id).catch(() => false)))
    this.closed = true
    this.entries.clear()
    this.unread.length = 0
    await this.patterns?.close()
    this.patterns = undefined
  }

  /** Disposal of the service: no event from now on; every running task (and all it runs) is stopped and awaited. */
  async close(): Promise<void> {
    this.closed = true
    const running = [...this.entries.values()].filter((entry) => !entry.finished)
    for (const entry of running) entry.process?.terminate()
    await Promise.all(running.map((entry) => entry.ended))
    await this.patterns?.close()
    this.patterns = undefined
  }

  private register(init: TaskInit): Entry {
    const process = init.process
    const offsets = init.offsets ?? { stdout: 0, stderr: 0 }
    const entry: Entry = {
      id: `bash-${++this.counter}`,
      command: init.command,
      workdir: init.workdir,
      startedAt: init.startedAt ?? Date.now(),
      interactive: process.write !== undefined,
      status: { state: 'running' },
      leftRunning: [],
      process,
      offsets: { stdout: offsets.stdout, stderr: offsets.stderr },
      killing: false,
      finished: false,
      ended: Promise.resolve(),
      lost: undefined,
    }
    entry.ended = process.ended.then(
      (exit) => this.finish(entry, exit),
      // A provider's bug must not leave the task running forever in the table.
      () => this.finish(entry, { exitCode: null, signal: 'SIGKILL' }),
    )
    this.entries.set(entry.id, entry)
    return entry
  }

  private tester(): PatternTester {
    this.patterns ??= new PatternTester(this.patternTestMs)
    return this.patterns
  }

  private require(id: string): Entry {
    const entry = this.entries.get(id)
    if (!entry)
      throw new TaskError(`unknown bash task ${JSON.stringify(id)}`, { code: TaskErrorCode.BASH_UNKNOWN_TASK })
    return entry
  }

  private advance(entry: Entry, process: TaskProcess, name: StreamName): OutputIncrement {
    const stream: TaskStream | undefined = process[name]
    if (!stream) return NONE
    const read = stream.readFrom(entry.offsets[name])
    entry.offsets[name] = read.nextOffset
    if (read.spillPath !== undefined) this.session?.ownFiles.add(read.spillPath)
    return read.spillPath === undefined
      ? { text: read.text, lossy: read.lossy }
      : { text: read.text, lossy: read.lossy, spillPath: read.spillPath }
  }

  private finish(entry: Entry, exit: TaskExit): void {
    entry.finished = true
    entry.leftRunning = exit.leftRunning ?? []
    // A kill that was asked for is what the status says, even if the shell had exited by itself before it came:
    // `bash_kill` answered "killed", so no later text may say "completed".
    if (entry.killing) entry.status = { state: 'killed', signal: exit.signal ?? 'SIGTERM' }
    else
      entry.status =
        exit.signal !== null
          ? { state: 'killed', signal: exit.signal }
          : { state: 'completed', exitCode: exit.exitCode ?? 0 }
    this.unread.push(entry)
    while (this.unread.length > this.maxFinished) this.release(this.unread[0] as Entry)
    if (this.closed) return
    const notice = taskDoneNotice(entry.id, entry.status)
    const event: TaskDoneEvent = {
      taskId: entry.id,
      session: this.session,
      status: entry.status,
      notice,
      requested: entry.killing,
    }
    for (const listener of [...this.listeners]) {
      try {
        listener(event)
      } catch (error) {
        this.warn('an onTaskDone listener failed: %s', error)
      }
    }
    try {
      this.ctx.emit('tasks/done', event)
    } catch (error) {
      this.warn('a tasks/done listener failed: %s', error)
    }
    if (!entry.killing && this.session !== undefined)
      this.ctx.get('tools')?.notify({ session: this.session, text: notice, key: entry.id })
  }

  /** Drops a finished task's output before it was read to the end; the next read says what was lost and where it is. */
  private release(entry: Entry): void {
    const process = entry.process
    if (process) {
      const lost = (name: StreamName): OutputIncrement => {
        const read = process[name]?.readFrom(entry.offsets[name])
        if (!read || (read.text === '' && !read.lossy)) return NONE
        return read.spillPath === undefined
          ? { text: '', lossy: true }
          : { text: '', lossy: true, spillPath: read.spillPath }
      }
      entry.lost = { stdout: lost('stdout'), stderr: lost('stderr') }
    }
    this.drop(entry)
  }

  /** Forgets a finished task's output; its snapshot still answers `get` (bounded). */
  private drop(entry: Entry): void {
    entry.process = undefined
    const at = this.unread.indexOf(entry)
    if (at !== -1) this.unread.splice(at, 1)
    this.forgotten.push(entry.id)
    while (this.forgotten.length > this.maxForgotten) this.entries.delete(this.forgotten.shift() as string)
  }

  private warn(format: string, error: unknown): void {
    this.ctx.logger('tasks').warn(format, (error as Error)?.message ?? String(error))
  }
}

function snapshot(entry: Entry): Task {
  return {
    id: entry.id,
    command: entry.command,
    workdir: entry.workdir,
    status: entry.status,
    startedAt: entry.startedAt,
    interactive: entry.interactive,
    leftRunning: entry.leftRunning,
    readToEnd: entry.process === undefined && entry.lost === undefined,
  }
}

/** `(completed, exit code 0)`, `(killed by SIGTERM)`. */
function statusText(status: TaskStatus): string {
  return status.state === 'completed'
    ? `(completed, exit code ${status.exitCode})`
    : status.state === 'killed'
      ? `(killed by ${status.signal})`
      : '(running)'
}
