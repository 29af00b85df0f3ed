import type { Readable } from 'node:stream'
import { type Context, Service } from 'cordis'
import { type ExitStatus, type SubprocessService, treeResidentBytes } from '@deepseek-ai/dsh-subprocess'
import type { ToolSession } from '@deepseek-ai/dsh-tools'

declare module 'cordis' {
  interface Context {
    confinement: Confinement
  }
}

/** A program to run inside a session's boundary instead of on the host. */
export interface ConfineRequest {
  /** The program (an absolute path, trusted by the caller) and its arguments, as they would run unconfined. */
  readonly argv: readonly string[]
  /** Its working directory: an absolute real path, as the program sees it inside the boundary too. */
  readonly cwd: string
  /** The calling session: the boundary is that session's (its pinned root, its roots, its hidden paths). */
  readonly session: ToolSession | undefined
  /** `read`: every root read-only, no network — what a search needs and no more. */
  readonly access: 'read'
  /** Time between SIGTERM and SIGKILL when it is stopped. */
  readonly graceMs: number
  /** Aborting stops it. */
  readonly signal?: AbortSignal | undefined
}

/** The program, started inside the boundary: stdin is /dev/null, stdout and stderr are the caller's to read. */
export interface ConfinedProcess {
  readonly stdout: Readable
  readonly stderr: Readable
  /** The program's own exit, as a bare run would report it (a death by signal N as that signal). Never rejects. */
  readonly done: Promise<ExitStatus>
  /** SIGTERM, then SIGKILL after the grace. Idempotent. */
  terminate(): void
  /** The resident bytes of the program (and of what launched it for this call alone), now; 0 once gone. */
  residentBytes(): number
  /** Why the boundary failed before the program ran (judged once done, with its stderr), or undefined. */
  failure(stderr: string): string | undefined
}

/**
 * `ctx.confinement`: starts a program inside the calling session's boundary instead of on the host — the same
 * masks, the same kernel filter as its commands — so that a tool's helper program (ripgrep) meets what `cat` meets.
 * A provider fails closed: when it cannot confine, `start` rejects with its own coded error; it never runs the
 * program unconfined.
 */
export abstract class Confinement extends Service {
  static readonly provide = 'confinement'

  constructor(ctx: Context) {
    super(ctx, 'confinement')
  }

  abstract start(request: ConfineRequest): Promise<ConfinedProcess>
}

/** A launcher's argv that runs the program confined, and how to read the launcher's exit. */
export interface Wrapped {
  readonly argv: readonly string[]
  /** The host-side working directory of the launcher. */
  readonly cwd: string
  /** The program's own exit, from the launcher's (which may report a death by signal N as exit 128 + N). */
  status(exit: ExitStatus): ExitStatus
  /** Why the launcher itself failed before the program ran (its stderr judged), or undefined when it ran. */
  failure(exit: ExitStatus, stderr: string): string | undefined
}

/**
 * For a provider that confines by wrapping the argv: spawns the launcher through `ctx.subprocess` (its own process
 * group, stopped by the request's signal) and reports the program's exit; memory is the whole launched tree's.
 */
export async function spawnWrapped(
  subprocess: SubprocessService,
  wrapped: Wrapped,
  request: ConfineRequest,
): Promise<ConfinedProcess> {
  const handle = await subprocess.spawn({
    argv: wrapped.argv,
    cwd: wrapped.cwd,
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
    graceMs: request.graceMs,
    ...(request.signal ? { signal: request.signal } : {}),
  })
  const { stdout, stderr } = handle
  if (!stdout || !stderr) {
    handle.terminate()
    throw new Error('the subprocess provider gave no output pipes')
  }
  let exit: ExitStatus | undefined
  return {
    stdout,
    stderr,
    done: handle.done.then((status) => {
      exit = status
      return wrapped.status(status)
    }),
    terminate: () => handle.terminate(),
    residentBytes: () => treeResidentBytes(handle.pid),
    failure: (text) => (exit === undefined ? undefined : wrapped.failure(exit, text)),
  }
}
