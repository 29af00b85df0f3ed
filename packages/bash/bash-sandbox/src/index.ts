import type { Context } from 'cordis'
import {
  BashExecutor,
  type BashExecRequest,
  type BashExecSpec,
  type BashRunResult,
  type TaskProcess,
} from '@deepseek-ai/dsh-bash'
import { BashRunner } from '@deepseek-ai/dsh-bash-runner'
import { Config } from './config.ts'
import { SandboxConfinement } from './confine.ts'
import { Sandbox } from './sandbox.ts'

export const name = 'bash-sandbox'
export { Config }
export { SandboxConfinement } from './confine.ts'
export { SandboxError, SandboxErrorCode, classify, unavailableError, type Unavailable } from './probe.ts'
export {
  bwrapArgs,
  hiddenPaths,
  systemHidden,
  type HiddenPath,
  type SandboxPolicy,
} from './policy.ts'

/** Where the service keeps its state (symbol reads pass Cordis' per-caller proxy straight through). */
const RUNNER: unique symbol = Symbol('runner')

/**
 * `ctx.bash` inside bubblewrap: the bash runner (output collection, timeouts, leftovers, disposal) composed with the
 * `Sandbox` launcher, which starts every command as `bwrap <confinement> -- <shell> -c -- <command>`. The system is
 * read-only; the session's workspace roots (from the optional `ctx.workspace`), `writable` and a private /tmp are
 * writable; credential paths are hidden; there is no network unless `network` is "host"; each command has its own
 * PID namespace, so whatever it starts dies with its call or task. When the sandbox cannot be set up, every call
 * rejects with BASH_SANDBOX_UNAVAILABLE and nothing runs.
 */
export class SandboxBashExecutor extends BashExecutor {
  static readonly inject = ['subprocess']
  static readonly Config = Config
  private readonly [RUNNER]: BashRunner

  constructor(ctx: Context, config: Partial<Config>) {
    super(ctx)
    const resolved = Config(config)
    const sandbox = new Sandbox(ctx, ctx.subprocess, resolved)
    const runner = new BashRunner(ctx, resolved, {
      argv: (spec) => sandbox.argv(spec),
      wrap: (handle, spec) => sandbox.wrap(handle, spec.session),
      close: () => sandbox.close(),
    })
    this[RUNNER] = runner
    // ctx.confinement: the same sandbox for the tools' own programs (ripgrep).
    new SandboxConfinement(ctx, sandbox, ctx.subprocess)
    ctx.effect(() => () => runner.close(), 'bash-sandbox')
  }

  resolve(request: BashExecRequest): BashExecSpec {
    const spec = this[RUNNER].resolve(request)
    // The host's TMPDIR is read-only in here: temp files go to the private /tmp.
    return { ...spec, env: { TMPDIR: '/tmp', ...spec.env } }
  }

  run(spec: BashExecSpec): Promise<BashRunResult> {
    return this[RUNNER].run(spec)
  }

  start(spec: BashExecSpec): Promise<TaskProcess> {
    return this[RUNNER].start(spec)
  }
}

export default SandboxBashExecutor
