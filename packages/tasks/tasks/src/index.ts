import { type Context, Service } from 'cordis'
import { HarnessError, type ToolSession } from '@deepseek-ai/dsh-tools'

declare module 'cordis' {
  interface Context {
    tasks: TaskService
  }
  interface Events {
    /** A task ended (never emitted once the task service is being disposed). */
    'tasks/done'(event: TaskDoneEvent): void
  }
}

/** A process that left the process group and was not stopped (it cannot be found by group). */
export interface StrayProcess {
  readonly pid: number
  /** Its command line, arguments joined by spaces (cut when long). */
  readonly command: string
}

/** One output stream of a task's process, read from an absolute byte offset. */
export interface TaskStream {
  readFrom(offset: number): { text: string; nextOffset: number; lossy: boolean; spillPath?: string }
}

/** How a task's processes ended. */
export interface TaskExit {
  /** The exit code of the task's main process; null when a signal killed it. */
  readonly exitCode: number | null
  readonly signal: string | null
  /** Processes outside the task's reach that still held its output open when a stop gave up waiting for them. */
  readonly leftRunning?: readonly StrayProcess[]
}

/**
 * A running process as a task holds it: its output, its end, a way to stop it, to hear of new output and — for a
 * process on a terminal — to type into it. Whoever started it (`ctx.bash.start`, a foreground run's leftovers) hands
 * it over; the task service never spawns or signals anything itself.
 */
export interface TaskProcess {
  readonly stdout: TaskStream | undefined
  readonly stderr: TaskStream | undefined
  /**
   * Settles once nothing of the process runs any more and its output is complete (or given up on). Never rejects;
   * settles within the provider's grace after `terminate()`, whatever holds the output open.
   */
  readonly ended: Promise<TaskExit>
  /** Stops everything the process runs. Idempotent; may be called after it ended. */
  terminate(): void
  /** Calls `listener` after new output became readable; returns the remover. */
  onOutput(listener: () => void): () => void
  /** Present only for a process that takes input (started on a terminal): writes `text` to it, as typed. */
  write?(text: string): Promise<void>
}

/** Where the unread output of each stream starts. */
export interface TaskOffsets {
  readonly stdout: number
  readonly stderr: number
}

/** What `add` registers. */
export interface TaskInit {
  readonly process: TaskProcess
  /** What runs, for listings (a shell command). */
  readonly command: string
  readonly workdir: string
  /** Where the unread output starts (what a foreground result already showed is not repeated). Default 0, 0. */
  readonly offsets?: TaskOffsets
  /** Aborting kills the task (a requested kill). */
  readonly signal?: AbortSignal
  /** When the process started (ms since the epoch). Default: now. */
  readonly startedAt?: number
}

export type TaskStatus =
  | { readonly state: 'running' }
  | { readonly state: 'completed'; readonly exitCode: number }
  | { readonly state: 'killed'; readonly signal: string }

/** A snapshot of one task. */
export interface Task {
  /** `bash-1`, `bash-2`, … in registration order, counted per session. */
  readonly id: string
  readonly command: string
  readonly workdir: string
  readonly status: TaskStatus
  readonly startedAt: number
  /** Whether it takes input (`write`). */
  readonly interactive: boolean
  /** Processes outside the task's process group that still held its output open when a kill stopped the task. */
  readonly leftRunning: readonly StrayProcess[]
  /** A read has delivered the end of its output (the final status came with it): nothing of it is held any more. */
  readonly readToEnd: boolean
}

/** Output of one stream that no earlier `readOutput` delivered. */
export interface OutputIncrement {
  readonly text: string
  /** True when bytes between the previous read and `text` were dropped from the kept tail. */
  readonly lossy: boolean
  /** A file holding the complete stream, when one is kept (set whenever one exists; look there when `lossy`). */
  readonly spillPath?: string
}

export interface TaskRead {
  readonly stdout: OutputIncrement
  readonly stderr: OutputIncrement
  /** The status at the time of the read: once it is not `running`, the increments hold the rest of the output. */
  readonly status: TaskStatus
}

/** The payload of `'tasks/done'` and of `onTaskDone` listeners. */
export interface TaskDoneEvent {
  readonly taskId: string
  /** The session whose task it is; undefined for a task registered without one. */
  readonly session: ToolSession | undefined
  readonly status: TaskStatus
  /** For the owner's model: `background task bash-N finished [status: …]. Read its output with bash_output.` */
  readonly notice: string
  /** True when the task ended because `kill` was called (a tool, a signal, a session's end): no notice is sent for it. */
  readonly requested: boolean
}

export type TaskDoneListener = (event: TaskDoneEvent) => void

/**
 * What `waitFor` saw first. `pattern-too-slow`: testing the pattern against the new output took longer than the
 * service allows (catastrophic backtracking), so the wait gave it up.
 */
export type TaskWaitOutcome = 'matched' | 'ended' | 'timeout' | 'aborted' | 'pattern-too-slow'

export interface TaskWaitOptions {
  /** Resolve as soon as output not yet delivered by `readOutput` (either stream) matches. Without it: wait for the end. */
  readonly pattern?: RegExp
  readonly timeoutMs: number
  readonly signal?: AbortSignal
}

/** The codes keep their `BASH_` names: the model has always seen them on bash tasks. */
export const TaskErrorCode = {
  /** No task has this id. */
  BASH_UNKNOWN_TASK: 'BASH_UNKNOWN_TASK',
  /** Input to a task that was not started on a terminal. */
  BASH_TASK_NOT_INTERACTIVE: 'BASH_TASK_NOT_INTERACTIVE',
  /** Input to a task that has ended. */
  BASH_TASK_ENDED: 'BASH_TASK_ENDED',
  /** The task service was disposed. */
  TASKS_DISPOSED: 'TASKS_DISPOSED',
} as const
export type TaskErrorCode = (typeof TaskErrorCode)[keyof typeof TaskErrorCode]

export class TaskError extends HarnessError {
  override name = 'TaskError'
  declare readonly code: TaskErrorCode

  constructor(message: string, options: { code: TaskErrorCode; cause?: unknown }) {
    super(message, options)
  }
}

/** `[status: …]`, as `bash_output` and the completion notice show it. */
export function statusLine(status: TaskStatus): string {
  switch (status.state) {
    case 'running':
      return '[status: running]'
    case 'completed':
      return `[status: completed, exit code: ${status.exitCode}]`
    case 'killed':
      return `[status: killed by ${status.signal}]`
  }
}

/** The completion notice of a task that ended by itself. */
export function taskDoneNotice(taskId: string, status: TaskStatus): string {
  return `background task ${taskId} finished ${statusLine(status)}. Read its output with bash_output.`
}

/**
 * One session's tasks (or the tasks registered without a session): ids count from `bash-1` in each, and a task of
 * another session is simply unknown here.
 */
export interface SessionTasks {
  /** Registers a running process as the next task (`bash-N`). Throws TASKS_DISPOSED (and stops it) once disposed. */
  add(init: TaskInit): Task
  /** A snapshot, or undefined for an unknown id; also for a task dropped after its end was read (bounded). */
  get(id: string): Task | undefined
  /**
   * Every task `get` answers for, in registration order: running, finished and not yet read to the end, and finished
   * and read to the end (`readToEnd`; bounded like `get`).
   */
  list(): Task[]
  /** Output not delivered by an earlier call, and the status. Throws BASH_UNKNOWN_TASK for an unknown id. */
  readOutput(id: string): TaskRead
  /**
   * Waits, without reading, until undelivered output matches `pattern`, the task ends, `timeoutMs` passes or
   * `signal` aborts, and says which came first (a match wins over an end seen at the same time). Throws
   * BASH_UNKNOWN_TASK for an unknown id.
   */
  waitFor(id: string, options: TaskWaitOptions): Promise<TaskWaitOutcome>
  /**
   * Types `text` into a task started on a terminal. Throws BASH_UNKNOWN_TASK, BASH_TASK_NOT_INTERACTIVE for a task
   * without input, BASH_TASK_ENDED for one that ended.
   */
  write(id: string, text: string): Promise<void>
  /**
   * Kills a running task's whole process tree and resolves once it is gone: true for the call that killed it, false
   * when it had already finished (or another call is killing it). Throws BASH_UNKNOWN_TASK for an unknown id.
   */
  kill(id: string): Promise<boolean>
}

/**
 * `ctx.tasks`: the processes that outlive the call that started them — background commands, a foreground command's
 * leftovers, a long command moved to the background. Each session's tasks are kept in the session (`of`), ended by
 * its `dispose()`; completion notices go out on `ctx.tools`' session channel. Knows nothing of how a process is started.
 */
export abstract class TaskService extends Service {
  static readonly provide = 'tasks'

  constructor(ctx: Context) {
    super(ctx, 'tasks')
  }

  /** The tasks of `session` (undefined: those registered without a session, a library caller's). */
  abstract of(session: ToolSession | undefined): SessionTasks

  /** Calls `listener` once for every task that ends from now on, until the disposer runs or the calling plugin is disposed. */
  abstract onTaskDone(listener: TaskDoneListener): () => Promise<void>
}
