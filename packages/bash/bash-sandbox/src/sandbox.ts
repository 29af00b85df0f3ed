import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Context } from 'cordis'
import { BashError, BashErrorCode, type BashExecSpec } from '@deepseek-ai/dsh-bash'
import type { SubprocessService } from '@deepseek-ai/dsh-subprocess'
import type {} from '@deepseek-ai/dsh-workspace'
import type { Config } from './config.ts'
import { bwrapArgs, DEFAULT_DENY_READ, existingDirs, expandHome, hiddenPaths, systemHidden, within, type SandboxPolicy } from './policy.ts'
import { probe, unavailableError, type Unavailable } from './probe.ts'

/**
 * Turns a resolved spec into the argv that runs it inside bubblewrap. Fails closed: until a probe of the same
 * namespaces succeeded, every call gets BASH_SANDBOX_UNAVAILABLE (a success is kept; a failure is probed again on
 * the next call, so a fix takes effect without a restart).
 */
export class Sandbox {
  private available: Promise<Unavailable | undefined> | undefined
  private tmpDir: string | undefined

  constructor(private readonly ctx: Context, private readonly subprocess: SubprocessService, private readonly config: Config) {}

  /** `bwrap <mounts and namespaces> -- <shell> -c -- <command>`, for the session that owns the spec. */
  async argv(spec: BashExecSpec): Promise<string[]> {
    await this.ensureAvailable()
    const policy = this.policy(spec.owner)
    const hidden = policy.hidden.find((item) => within(spec.workdir, item.path))
    if (hidden) {
      throw new BashError(`working directory ${JSON.stringify(spec.workdir)} is hidden by the sandbox (denyRead: ${hidden.path})`, { code: BashErrorCode.BASH_INVALID_WORKDIR })
    }
    return [this.config.bwrapPath, ...bwrapArgs(policy, spec.workdir), '--', this.config.shell, '-c', '--', spec.command]
  }

  /**
   * What a command of `owner` (a session id) may touch: the session's workspace roots (its cwd, the configured
   * roots) and `writable` read-write, read-only roots (spill directories) readable, the credential paths hidden.
   * Without the workspace service, the host's cwd stands for the session's.
   */
  policy(owner: string | undefined): SandboxPolicy {
    const workspace = this.ctx.get('workspace')
    const cwd = workspace?.sessionCwd(owner) ?? process.cwd()
    const roots = workspace?.roots(cwd) ?? { writable: [cwd], readOnly: [] }
    const writable = existingDirs([...roots.writable, ...this.config.writable.map((path) => expandHome(path))])
    const readOnly = existingDirs(roots.readOnly).filter((dir) => !writable.includes(dir))
    return { writable, readOnly, hidden: [...systemHidden(), ...hiddenPaths([...DEFAULT_DENY_READ, ...this.config.denyRead])], tmpDir: this.privateTmp(), network: this.config.network }
  }

  /** Removes the private /tmp (what commands left there goes with it). */
  close(): void {
    if (this.tmpDir) rmSync(this.tmpDir, { recursive: true, force: true })
    this.tmpDir = undefined
  }

  private async ensureAvailable(): Promise<void> {
    const pending = (this.available ??= this.check())
    const problem = await pending
    if (!problem) return
    if (this.available === pending) this.available = undefined
    throw unavailableError(problem)
  }

  /** The probe runs the namespaces and mounts of a real command (without the roots), so it fails where they would. */
  private check(): Promise<Unavailable | undefined> {
    const args = bwrapArgs({ writable: [], readOnly: [], hidden: [], tmpDir: this.privateTmp(), network: this.config.network }, '/')
    return probe(this.subprocess, this.config.bwrapPath, args, this.config.shell)
  }

  private privateTmp(): string {
    // 0700 (mkdtemp), one per executor: commands of this process share it, other users never see it.
    return (this.tmpDir ??= mkdtempSync(join(tmpdir(), 'dsh-sandbox-')))
  }
}
