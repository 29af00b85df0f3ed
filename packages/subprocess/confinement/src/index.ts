import { type Context, Service } from 'cordis'
import type { ExitStatus } from '@deepseek-ai/dsh-subprocess'
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
}

/** What to spawn (through `ctx.subprocess`) in place of the request's argv. */
export interface Confined {
  readonly argv: readonly string[]
  /** The host-side working directory of the wrapper. */
  readonly cwd: string
  /** The program's own exit, from the wrapper's (a wrapper may report a death by signal N as exit 128 + N). */
  status(exit: ExitStatus): ExitStatus
  /** Why the wrapper itself failed before the program ran (its stderr judged), or undefined when the program ran. */
  failure(exit: ExitStatus, stderr: string): string | undefined
}

/**
 * `ctx.confinement`: turns an argv into the argv that runs it inside the calling session's boundary — the same
 * masks, the same kernel filter as its commands — so that a tool's helper program (ripgrep) meets what `cat` meets.
 * A provider fails closed: when it cannot confine, `confine` rejects with its own coded error; it never returns
 * the argv unconfined.
 */
export abstract class Confinement extends Service {
  static readonly provide = 'confinement'

  constructor(ctx: Context) {
    super(ctx, 'confinement')
  }

  abstract confine(request: ConfineRequest): Promise<Confined>
}
