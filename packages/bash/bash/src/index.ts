import { type Context, Service } from 'cordis'
import { HarnessError, type ToolSession } from '@deepseek-ai/dsh-tools'
import type { StrayProcess, TaskOffsets, TaskProcess } from '@deepseek-ai/dsh-tasks'

export type { StrayProcess, TaskOffsets, TaskProcess }

declare module 'cordis' {
  interface Context {
    bash: BashExecutor
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
  /**
   * Only without `timeoutMs`: a foreground command still running after this many ms is not waited for any longer —
   * `run` resolves with the output so far and the running command as `continuing` (`still-running`). Ignored by
   * `start()`. Default: wait until it ends or times out.
   */
  backgroundAfterMs?: number
  /** Aborting kills the command (foreground: `run` resolves with `aborted`; `start`: the process is stopped). */
  signal?: AbortSignal
  /** The calling session: a provider reads its root, policy and private directories from it (docs/seams.md#sessions). */
  session?: ToolSession
  /** Written to the command's stdin, which is then closed. Default: stdin is /dev/null. */
  stdin?: string
  /**
   * `start()` only: run the command on a pseudo-terminal and give its process `write` (what is typed into it). Its
   * output is the terminal's, with control sequences removed (the spill file keeps the raw bytes). Ignored by `run`.
   */
  interactive?: boolean
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
  /** The request's `backgroundAfterMs` when it named no `timeoutMs`; else undefined (an explicit timeout kills). */
  readonly backgroundAfterMs: number | undefined
  readonly signal: AbortSignal | undefined
  readonly session: ToolSession | undefined
  readonly stdin: string | undefined
  readonly interactive: boolean
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

/**
 * A foreground command's processes that still run when `run` resolves, handed to the caller: register them with
 * `ctx.tasks` (or stop them). The executor still stops them when it is disposed.
 */
export interface BashContinuation {
  /**
   * `leftovers`: the shell exited, processes of its process group still run (`server &`). `still-running`: the shell
   * itself still ran after `backgroundAfterMs` (exit code and signal are then null; its timeout no longer applies).
   */
  readonly reason: 'leftovers' | 'still-running'
  readonly process: TaskProcess
  /** Where the output not shown in the result's streams starts. */
  readonly offsets: TaskOffsets
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
  /** What still runs of the command (`server &`), its output continuing where `stdout`/`stderr` stop. */
  readonly continuing: BashContinuation | undefined
  /** Processes outside the process group that still held the output open when the call stopped waiting for it. */
  readonly leftRunning: readonly StrayProcess[]
}

/**
 * The longest command an executor can run, in UTF-8 bytes: every executor hands it to the shell as one argument
 * (`<shell> -c <command>`), and Linux passes at most MAX_ARG_STRLEN (32 pages of 4 KiB) less the terminating NUL
 * in one; a longer one fails the spawn with E2BIG.
 */
export const MAX_COMMAND_BYTES = 131_071

export const BashErrorCode = {
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

/**
 * `ctx.bash`: runs shell commands in the foreground (`run`) or starts them as processes that outlive the call
 * (`start`, which `ctx.tasks` then holds). A provider decides where and how; callers never re-default a spec, so
 * what `resolve` returned is exactly what runs.
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

  /**
   * Starts a process that outlives the call (no timeout; `spec.timeoutMs` is ignored): stop it with `terminate()`;
   * `spec.signal`, when it aborts, stops it too. Register it with `ctx.tasks` to make it a task. Rejects like `run`.
   * Disposal of the executor stops every process it started.
   */
  abstract start(spec: BashExecSpec): Promise<TaskProcess>
}
