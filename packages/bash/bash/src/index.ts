import { Context, Service } from 'cordis'
import { HarnessError } from '@deepseek-ai/dsh-tools'

declare module 'cordis' {
  interface Context {
    bash: BashExecutor
  }
  interface Events {
    /** A background task ended (never emitted once the executor is being disposed). */
    'bash/task-done'(event: BashTaskDoneEvent): void
  }
}

/** What a caller asks for. Everything optional is filled in by `resolve()`. */
export interface BashExecRequest {
  /** Passed to the shell as one `-c` argument. */
  command: string
  /** Working directory; relative paths resolve against the host process's cwd. Default: that cwd. */
  workdir?: string
  /** Foreground budget in ms (default and maximum are the provider's); ignored by `start()`. */
  timeoutMs?: number
  /** Aborting kills the command (foreground: `run` resolves with `aborted`; background: the task is killed). */
  signal?: AbortSignal
  /** Opaque token stored verbatim with a background task (the tools use the session id). */
  owner?: string
  /** Written to the command's stdin, which is then closed. Default: stdin is /dev/null. */
  stdin?: string
  /** Merged over the provider's child environment: an entry wins, `undefined` removes the name. */
  env?: Readonly<Record<string, string | undefined>>
}

/** A request with every default applied and every cap enforced: `run` and `start` use it as is. */
export interface BashExecSpec {
  readonly command: string
  /** Absolute. */
  readonly workdir: string
  /** Within the provider's bounds. */
  readonly timeoutMs: number
  readonly signal: AbortSignal | undefined
  readonly owner: string | undefined
  readonly stdin: string | undefined
  /** The complete set of overrides over the provider's base environment. */
  readonly env: Readonly<Record<string, string | undefined>>
}

/** One output stream of a finished foreground command. */
export interface CollectedOutput {
  /** The stream's text, or its last part (the kept tail) when `truncated`. */
  readonly text: string
  /** True when the command wrote more than was kept: `text` starts somewhere in the middle. */
  readonly truncated: boolean
  /** When `truncated`, the kept first part of the stream, if the provider keeps one (it may end mid-line). */
  readonly head?: string
  /** Bytes the command wrote to the stream. */
  readonly totalBytes: number
  /** Lines of the whole stream (newlines, plus one for a last line without one), when the provider counts them. */
  readonly totalLines?: number
  /** A file holding the complete stream, when one was kept (a provider may keep one for a stream it holds whole). */
  readonly spillPath?: string
}

/** A process the command started that left its process group and still runs: it was not stopped (it cannot be found by group). */
export interface StrayProcess {
  readonly pid: number
  /** Its command line, arguments joined by spaces (cut when long). */
  readonly command: string
}

export interface BashRunResult {
  /** null when the shell was killed by a signal. */
  readonly exitCode: number | null
  readonly signal: string | null
  /** The timeout fired first (the command was killed). Exclusive with `aborted`. */
  readonly timedOut: boolean
  /** The caller's signal fired first (the command was killed). Exclusive with `timedOut`. */
  readonly aborted: boolean
  /** The budget the command had. */
  readonly timeoutMs: number
  readonly stdout: CollectedOutput
  readonly stderr: CollectedOutput
  /**
   * The shell exited but processes of its process group still ran (`server &`): they became this background task
   * of the request's owner, whose output continues where `stdout`/`stderr` stop.
   */
  readonly adoptedTaskId: string | undefined
  /** Processes outside the process group that still held the output open when the call stopped waiting for it. */
  readonly leftRunning: readonly StrayProcess[]
}

export type BashTaskStatus =
  | { readonly state: 'running' }
  | { readonly state: 'completed'; readonly exitCode: number }
  | { readonly state: 'killed'; readonly signal: string }

/** A snapshot of one background task. */
export interface BashTask {
  /** `bash-1`, `bash-2`, … in start order. */
  readonly id: string
  readonly command: string
  readonly workdir: string
  readonly owner: string | undefined
  readonly status: BashTaskStatus
  /** When it started (ms since the epoch); for an adopted task, when its foreground command started. */
  readonly startedAt: number
  /** Processes outside the task's process group that still held its output open when a kill stopped the task. */
  readonly leftRunning: readonly StrayProcess[]
}

/** Output of one stream that no earlier `readOutput` delivered. */
export interface OutputIncrement {
  readonly text: string
  /** True when bytes between the previous read and `text` were dropped from the kept tail. */
  readonly lossy: boolean
  /** A file holding the complete stream, when one is kept (set whenever one exists; look there when `lossy`). */
  readonly spillPath?: string
}

export interface BashTaskRead {
  readonly stdout: OutputIncrement
  readonly stderr: OutputIncrement
  /** The status at the time of the read: once it is not `running`, the increments hold the rest of the output. */
  readonly status: BashTaskStatus
}

/** The payload of `'bash/task-done'` and of `onTaskDone` listeners. */
export interface BashTaskDoneEvent {
  readonly taskId: string
  readonly owner: string | undefined
  readonly status: BashTaskStatus
  /** For the owner's model: `background task bash-N finished [status: …]. Read its output with bash_output.` */
  readonly notice: string
  /**
   * True when the task ended because `kill` was called (by a tool, a signal, a session's end): the owner asked for it,
   * so no notice is sent to the owner's session for it.
   */
  readonly requested: boolean
}

/**
 * What `waitFor` saw first. `pattern-too-slow`: testing the pattern against the new output took longer than the
 * executor allows (catastrophic backtracking), so the wait gave it up.
 */
export type BashWaitOutcome = 'matched' | 'ended' | 'timeout' | 'aborted' | 'pattern-too-slow'

export interface BashWaitOptions {
  /** Resolve as soon as output not yet delivered by `readOutput` (either stream) matches. Without it: wait for the end. */
  readonly pattern?: RegExp
  readonly timeoutMs: number
  readonly signal?: AbortSignal
}

export type BashTaskDoneListener = (event: BashTaskDoneEvent) => void

/**
 * The longest command an executor can run, in UTF-8 bytes: every executor hands it to the shell as one argument
 * (`<shell> -c <command>`), and Linux passes at most MAX_ARG_STRLEN (32 pages of 4 KiB) less the terminating NUL
 * in one; a longer one fails the spawn with E2BIG.
 */
export const MAX_COMMAND_BYTES = 131_071

export const BashErrorCode = {
  /** No task has this id. */
  BASH_UNKNOWN_TASK: 'BASH_UNKNOWN_TASK',
  /** The task belongs to another owner (session). */
  BASH_TASK_FORBIDDEN: 'BASH_TASK_FORBIDDEN',
  /** The working directory does not exist or is not a directory. */
  BASH_INVALID_WORKDIR: 'BASH_INVALID_WORKDIR',
  /** A NUL byte in the command or an env entry: nothing a shell could be given. */
  BASH_INVALID_REQUEST: 'BASH_INVALID_REQUEST',
  /** The shell could not be started. */
  BASH_SPAWN_FAILED: 'BASH_SPAWN_FAILED',
  /** The signal was already aborted: nothing was started. */
  BASH_ABORTED: 'BASH_ABORTED',
  /** The executor was disposed. */
  BASH_DISPOSED: 'BASH_DISPOSED',
} as const
export type BashErrorCode = (typeof BashErrorCode)[keyof typeof BashErrorCode]

export class BashError extends HarnessError {
  override name = 'BashError'
  declare readonly code: BashErrorCode

  constructor(message: string, options: { code: BashErrorCode; cause?: unknown }) {
    super(message, options)
  }
}

/** `[status: …]`, as `bash_output` and the completion notice show it. */
export function statusLine(status: BashTaskStatus): string {
  switch (status.state) {
    case 'running':
      return '[status: running]'
    case 'completed':
      return `[status: completed, exit code: ${status.exitCode}]`
    case 'killed':
      return `[status: killed by ${status.signal}]`
  }
}

/** The completion notice every provider sends with `'bash/task-done'`. */
export function taskDoneNotice(taskId: string, status: BashTaskStatus): string {
  return `background task ${taskId} finished ${statusLine(status)}. Read its output with bash_output.`
}

/**
 * `ctx.bash`: runs shell commands in the foreground (`run`) or as background tasks (`start`). A provider decides
 * where and how; callers never re-default a spec, so what `resolve` returned is exactly what runs.
 */
export abstract class BashExecutor extends Service {
  static readonly provide = 'bash'

  constructor(ctx: Context) {
    super(ctx, 'bash')
  }

  /** Defaults and caps applied; pure (no file system access, nothing started). */
  abstract resolve(request: BashExecRequest): BashExecSpec

  /**
   * Runs in the foreground until the command is done, its timeout fires or its signal aborts; resolves in all of
   * these. Rejects with a BashError only when nothing could be run: a bad workdir, a shell that cannot start, an
   * already-aborted signal, an invalid request, a disposed executor.
   */
  abstract run(spec: BashExecSpec): Promise<BashRunResult>

  /** Starts a background task (no timeout; stop it with `kill`). Rejects like `run`. */
  abstract start(spec: BashExecSpec): Promise<BashTask>

  /**
   * A snapshot, or undefined for an unknown id. A finished task whose output was read to the end is dropped from
   * memory but still answers here (bounded: the oldest such answers are forgotten first).
   */
  abstract get(id: string): BashTask | undefined

  /** The tasks whose output is still held (running, or finished and not yet read to the end), in start order. */
  abstract list(): BashTask[]

  /** The owner token given at start, verbatim; undefined for an unknown or ownerless task. */
  abstract ownerOf(id: string): string | undefined

  /** Output not delivered by an earlier call, and the status. Throws BASH_UNKNOWN_TASK for an unknown id. */
  abstract readOutput(id: string): BashTaskRead

  /**
   * Waits, without reading, until undelivered output matches `pattern`, the task ends, `timeoutMs` passes or
   * `signal` aborts, and says which came first (a match wins over an end seen at the same time). Throws
   * BASH_UNKNOWN_TASK for an unknown id.
   */
  abstract waitFor(id: string, options: BashWaitOptions): Promise<BashWaitOutcome>

  /**
   * Kills a running task's whole process tree and resolves once it is gone: true for the call that killed it,
   * false when it had already finished (or another call is killing it). Throws BASH_UNKNOWN_TASK for an unknown id.
   */
  abstract kill(id: string): Promise<boolean>

  /**
   * Calls `listener` once for every task that ends from now on, until the returned disposer runs or the calling
   * plugin is disposed; never once the executor is being disposed.
   */
  abstract onTaskDone(listener: BashTaskDoneListener): () => Promise<void>
}
