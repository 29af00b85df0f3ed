import type { Context } from 'cordis'
import type { BashExecRequest, BashExecSpec } from '@deepseek-ai/dsh-bash'
import { LocalBashExecutor } from '@deepseek-ai/dsh-bash-local'
import { Config } from './config.ts'
import { Sandbox } from './sandbox.ts'

export const name = 'bash-sandbox'
export { Config }
export { SandboxError, SandboxErrorCode, classify, unavailableError, type Unavailable } from './probe.ts'
export { bwrapArgs, DEFAULT_DENY_READ, expandHome, hiddenPaths, systemHidden, type HiddenPath, type SandboxPolicy } from './policy.ts'

/**
 * `ctx.bash` inside bubblewrap: the local executor (its task table, output collection, timeouts, disposal), with
 * every command started as `bwrap <confinement> -- <shell> -c -- <command>`. The system is read-only; the
 * session's workspace roots (from the optional `ctx.workspace`), `writable` and a private /tmp are writable;
 * credential paths are hidden; there is no network unless `network` is "host"; each command has its own PID
 * namespace, so whatever it starts dies with its call or task. When the sandbox cannot be set up, every call
 * rejects with BASH_SANDBOX_UNAVAILABLE and nothing runs.
 */
export class SandboxBashExecutor extends LocalBashExecutor {
  static override readonly Config = Config

  constructor(ctx: Context, config: Partial<Config>) {
    const resolved = Config(config)
    const sandbox = new Sandbox(ctx, ctx.subprocess, resolved)
    super(ctx, resolved, { argv: (spec) => sandbox.argv(spec), wrap: (handle) => sandbox.wrap(handle), close: () => sandbox.close() })
  }

  override resolve(request: BashExecRequest): BashExecSpec {
    const spec = super.resolve(request)
    // The host's TMPDIR is read-only in here: temp files go to the private /tmp.
    return { ...spec, env: { TMPDIR: '/tmp', ...spec.env } }
  }
}

export default SandboxBashExecutor
