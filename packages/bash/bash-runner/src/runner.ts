import { statSync } from 'node:fs'
import { resolve as resolvePath } from 'node:path'
import type { Context } from 'cordis'
import {
  BashError,
  BashErrorCode,
  type BashExecRequest,
  type BashExecSpec,
  type BashRunResult,
  type CollectedOutput,
  type StrayProcess,
  type TaskProcess,
} from '@deepseek-ai/dsh-bash'
import {
  SubprocessError,
  SubprocessErrorCode,
  type CollectedStream,
  type CollectOptions,
  type ExitStatus,
  type SubprocessHandle,
  type SubprocessService,
} from '@deepseek-ai/dsh-subprocess'
import { clampTimeout } from '@deepseek-ai/dsh-timeout'
import type { ToolSession } from '@deepseek-ai/dsh-tools'
import type { Config } from './config.ts'
import { CHILD_ENV } from './env.ts'
import { DRAIN_MS, outputEnds, subprocessTask } from './process.ts'
import { onTerminal, terminalTask } from './terminal.ts'

/**
 * How a provider starts a command: the argv for a spec (may reject, e.g. when a sandbox is unavailable: the call then
 * rejects with that error and nothing runs), and what to release after disposal. Without one: `<shell> -c -- <command>`.
 */
export interface Launcher {
  argv(spec: BashExecSpec): Promise<readonly string[]>
  /** The handle the executor uses in place of the spawned one (e.g. to report a wrapped shell's own exit), for `spec`. */
  wrap?(handle: SubprocessHandle, spec: BashExecSpec): SubprocessHandle
  close?(): void | Promise<void>
}

/**
 * The timeout and the caller's signal of one foreground command: one timer and one listener; the first cause wins.
 * (A derived AbortSignal for the subprocess, as `deadline()` makes, costs an AbortController and a second listener
 * on every call, and this is the hot path.)
 */
class Limit {
  /** What stopped the command first, if anything did. */
  cause: 'timeout' | 'abort' | undefined
  private handle: SubprocessHandle | undefined
  private readonly timer: NodeJS.Timeout

  constructor(
    private readonly signal: AbortSignal | undefined,
    ms: number,
  ) {
    this.timer = setTimeout(this.expire, ms)
    signal?.addEventListener('abort', this.abort)
  }

  /** The command to stop; one that a cause reached while it was starting is stopped now. */
  attach(handle: SubprocessHandle): void {
    this.handle = handle
    if (this.cause) handle.terminate()
  }

  /** Stops the timer and leaves the signal: nothing reaches the command from here on. */
  dispose(): void {
    clearTimeout(this.timer)
    this.signal?.removeEventListener('abort', this.abort)
  }

  private readonly expire = (): void => this.stop('timeout')
  private readonly abort = (): void => this.stop('abort')

  private stop(cause: 'timeout' | 'abort'): void {
    if (this.cause) return
    this.cause = cause
    this.dispose()
    this.handle?.terminate()
  }
}

/**
 * The mechanics of a `ctx.bash` provider over `ctx.subprocess`, which a provider composes with its launcher (kept out
 * of the Service object, whose properties Cordis reads through a per-caller proxy): resolving, running in the
 * foreground, starting processes that outlive the call, and stopping all of them at disposal.
 */
export class BashRunner {
  private readonly foreground = new Set<SubprocessHandle>()
  /** Started processes and a foreground command's leftovers, until they end: disposal stops them. */
  private readonly live = new Set<TaskProcess>()
  /** Spawns in flight: disposal waits for them, so nothing started during disposal escapes it. */
  private readonly pending = new Set<Promise<unknown>>()
  private readonly collect: CollectOptions
  private closed = false

  /**
   * `ctx.subprocess.spawn`, looked up once: the executor is restarted whenever ctx.subprocess is replaced (it is
   * injected), and every read of a method on a Cordis service builds a tracing proxy and a context for it.
   */
  private readonly spawn: SubprocessService['spawn']

  constructor(
    ctx: Context,
    private readonly config: Config,
    private readonly launcher?: Launcher,
  ) {
    const subprocess = ctx.subprocess
    this.spawn = subprocess.spawn.bind(subprocess)
    // A head as large as the tail: a long log keeps its first lines (the command's start, the first error) too.
    this.collect = {
      maxBytes: config.maxOutputBytes,
      headBytes: config.maxOutputBytes,
      spill: { maxBytes: config.spillMaxBytes },
    }
  }

  resolve(request: BashExecRequest): BashExecSpec {
    return {
      command: request.command,
      workdir: resolvePath(request.workdir ?? process.cwd()),
      timeoutMs: clampTimeout(request.timeoutMs, { defaultMs: this.config.timeoutMs, maxMs: this.config.maxTimeoutMs }),
      backgroundAfterMs: request.timeoutMs === undefined ? request.backgroundAfterMs : undefined,
      signal: request.signal,
      session: request.session,
      stdin: request.stdin,
      interactive: request.interactive ?? false,
      env: { ...CHILD_ENV, ...request.env },
    }
  }

  /**
   * Runs until the shell exits (or is stopped), then gives the output at most DRAIN_MS to end. What still runs in
   * the process group is handed over as `continuing` (leftovers); a process outside it that holds the output is
   * named, not waited for. With `backgroundAfterMs`, a shell still running then is handed over itself (still-running).
   */
  async run(spec: BashExecSpec): Promise<BashRunResult> {
    this.prepare(spec)
    const limit = new Limit(spec.signal, spec.timeoutMs)
    let handle: SubprocessHandle
    try {
      handle = await this.launch(spec, limit, (h) => this.foreground.add(h))
    } catch (error) {
      limit.dispose()
      throw error
    }
    limit.attach(handle)
    try {
      const first =
        spec.backgroundAfterMs === undefined ? await handle.exited : await exitedWithin(handle, spec.backgroundAfterMs)
      if (first === undefined && !limit.cause) {
        // Still running: from here on neither the timeout nor the caller's signal reaches it; the caller makes it a task.
        limit.dispose()
        this.foreground.delete(handle)
        const stdout = shown(handle.collected.stdout, spec.session)
        const stderr = shown(handle.collected.stderr, spec.session)
        return {
          exitCode: null,
          signal: null,
          timedOut: false,
          aborted: false,
          timeoutMs: spec.timeoutMs,
          stdout: stdout.output,
          stderr: stderr.output,
          leftRunning: [],
          continuing: {
            reason: 'still-running',
            process: this.track(subprocessTask(handle)),
            offsets: { stdout: stdout.next, stderr: stderr.next },
          },
        }
      }
      const exit = first ?? (await handle.exited)
      let drained = await outputEnds(handle, DRAIN_MS)
      const timedOut = limit.cause === 'timeout'
      const aborted = limit.cause === 'abort'
      let leftover = false
      if (timedOut || aborted) {
        // A stopped command: its whole group is gone before the call ends, not only the shell.
        await handle.waitForExit()
        if (!drained) drained = await outputEnds(handle, DRAIN_MS)
      } else {
        leftover = handle.alive()
      }
      // From here on the caller's signal and the timer must not reach an adopted task.
      limit.dispose()
      // After a stop, the handle may have given the output up by itself already: it still knows who held it.
      const leftRunning: readonly StrayProcess[] =
        !leftover && (!drained || timedOut || aborted) ? handle.abandonOutput() : []
      const stdout = shown(handle.collected.stdout, spec.session)
      const stderr = shown(handle.collected.stderr, spec.session)
      let continuing: BashRunResult['continuing']
      if (leftover) {
        this.foreground.delete(handle)
        continuing = {
          reason: 'leftovers',
          process: this.track(subprocessTask(handle)),
          offsets: { stdout: stdout.next, stderr: stderr.next },
        }
      }
      return {
        exitCode: exit.exitCode,
        signal: exit.signal,
        timedOut,
        aborted,
        timeoutMs: spec.timeoutMs,
        stdout: stdout.output,
        stderr: stderr.output,
        continuing,
        leftRunning,
      }
    } finally {
      limit.dispose()
      this.foreground.delete(handle)
    }
  }

  /** A process that outlives the call; the spec's signal stops it. */
  async start(spec: BashExecSpec): Promise<TaskProcess> {
    this.prepare(spec)
    const process = this.track(
      spec.interactive
        ? terminalTask(await this.launch(onTerminal(spec), undefined, () => {}, 'pipe'))
        : subprocessTask(await this.launch(spec, undefined, () => {})),
    )
    const signal = spec.signal
    if (signal) {
      const stop = () => process.terminate()
      signal.addEventListener('abort', stop, { once: true })
      void process.ended.then(() => signal.removeEventListener('abort', stop))
      if (signal.aborted) stop()
    }
    return process
  }

  /** Disposal: every foreground command and every process still running (and their descendants) is stopped and awaited. */
  async close(): Promise<void> {
    this.closed = true
    await Promise.allSettled([...this.pending])
    const handles = [...this.foreground]
    const processes = [...this.live]
    for (const handle of handles) handle.terminate()
    for (const process of processes) process.terminate()
    await Promise.all([
      ...handles.map((handle) => Promise.all([handle.done, handle.waitForExit()])),
      ...processes.map((process) => process.ended),
    ])
    await this.launcher?.close?.()
  }

  private track(process: TaskProcess): TaskProcess {
    this.live.add(process)
    void process.ended.then(() => this.live.delete(process))
    // Disposal began while it was being handed over: it is stopped like every other.
    if (this.closed) process.terminate()
    return process
  }

  /** The checks that make `run`/`start` reject instead of running: each failure says what is wrong. */
  private prepare(spec: BashExecSpec): void {
    if (this.closed) throw new BashError('the bash executor was disposed', { code: BashErrorCode.BASH_DISPOSED })
    if (spec.signal?.aborted)
      throw new BashError('command not started: the signal was already aborted', {
        code: BashErrorCode.BASH_ABORTED,
        cause: spec.signal.reason,
      })
    if (spec.command.includes('\0'))
      throw new BashError('command contains a NUL byte', { code: BashErrorCode.BASH_INVALID_REQUEST })
  }

  /** Spawns `<shell> -c <command>` and hands the handle to `register` before disposal can look for it. */
  private launch(
    spec: BashExecSpec,
    limit: Limit | undefined,
    register: (handle: SubprocessHandle) => void,
    stdin?: 'pipe',
  ): Promise<SubprocessHandle> {
    const launched = (async () => {
      let handle: SubprocessHandle
      try {
        // `--`: a command that starts with "-" is a command, never a shell option.
        const argv = this.launcher ? await this.launcher.argv(spec) : [this.config.shell, '-c', '--', spec.command]
        // Cancelled (or timed out) while a launcher prepared the command: nothing starts.
        if (limit?.cause)
          throw new BashError('command not started: the call was cancelled', { code: BashErrorCode.BASH_ABORTED })
        handle = await this.spawn({
          argv,
          cwd: spec.workdir,
          env: spec.env,
          stdin: stdin ?? (spec.stdin === undefined ? 'ignore' : { data: spec.stdin }),
          stdout: this.collect,
          stderr: this.collect,
          graceMs: this.config.graceMs,
        })
      } catch (error) {
        // A workdir that is not a directory fails the spawn (chdir in the child): only then is it looked at, so that
        // the error blames it rather than the shell.
        if (error instanceof SubprocessError && error.code === SubprocessErrorCode.SUBPROCESS_SPAWN_FAILED)
          checkWorkdir(spec.workdir)
        throw translate(error)
      }
      if (this.launcher?.wrap) handle = this.launcher.wrap(handle, spec)
      register(handle)
      // Disposal began while the shell was starting: it is stopped like every other.
      if (this.closed) handle.terminate()
      return handle
    })()
    this.pending.add(launched)
    const forget = () => {
      this.pending.delete(launched)
    }
    launched.then(forget, forget)
    return launched
  }
}

/** The shell's exit if it comes within `ms`, else undefined. */
async function exitedWithin(handle: SubprocessHandle, ms: number): Promise<ExitStatus | undefined> {
  let timer: NodeJS.Timeout | undefined
  const bound = new Promise<undefined>((resolve) => {
    timer = setTimeout(resolve, ms, undefined)
  })
  try {
    return await Promise.race([handle.exited, bound])
  } finally {
    clearTimeout(timer)
  }
}

/** A stream as the foreground result shows it, and the offset where an adopted task's reads continue. */
function shown(
  stream: CollectedStream | undefined,
  session: ToolSession | undefined,
): { output: CollectedOutput; next: number } {
  if (!stream) return { output: { text: '', truncated: false, totalBytes: 0, totalLines: 0 }, next: 0 }
  const { text, nextOffset } = stream.readFrom(0)
  const { truncated, totalBytes, totalLines, spillPath } = stream
  // The full-output file is the session's own: its file tools may read it, no other session's can.
  if (spillPath !== undefined) session?.ownFiles.add(spillPath)
  const output: CollectedOutput = truncated
    ? { text, truncated, head: stream.readHead().text, totalBytes, totalLines }
    : { text, truncated, totalBytes, totalLines }
  return { output: spillPath === undefined ? output : { ...output, spillPath }, next: nextOffset }
}

/** Throws BASH_INVALID_WORKDIR unless `workdir` is a directory (one synchronous stat, after a failed spawn only). */
function checkWorkdir(workdir: string): void {
  const shown = JSON.stringify(workdir)
  let isDirectory: boolean
  try {
    isDirectory = statSync(workdir).isDirectory()
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    const why =
      code === 'ENOENT' || code === 'ENOTDIR'
        ? 'does not exist'
        : `cannot be used (${code ?? (error as Error).message})`
    throw new BashError(`working directory ${shown} ${why}`, { code: BashErrorCode.BASH_INVALID_WORKDIR, cause: error })
  }
  if (!isDirectory)
    throw new BashError(`working directory ${shown} is not a directory`, { code: BashErrorCode.BASH_INVALID_WORKDIR })
}

function translate(error: unknown): unknown {
  if (!(error instanceof SubprocessError)) return error
  const code =
    error.code === SubprocessErrorCode.SUBPROCESS_ABORTED
      ? BashErrorCode.BASH_ABORTED
      : error.code === SubprocessErrorCode.SUBPROCESS_INVALID_REQUEST
        ? BashErrorCode.BASH_INVALID_REQUEST
        : BashErrorCode.BASH_SPAWN_FAILED
  return new BashError(error.message, { code, cause: error })
}
