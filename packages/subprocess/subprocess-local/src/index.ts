import { spawn as spawnChild, type ChildProcess, type StdioOptions } from 'node:child_process'
import { mkdirSync, mkdtempSync } from 'node:fs'
import { rmdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { Context } from 'cordis'
import Schema from 'schemastery'
import {
  childEnv,
  SubprocessError,
  SubprocessErrorCode,
  SubprocessService,
  type OutputDisposition,
  type SpawnRequest,
  type SubprocessHandle,
} from '@deepseek-ai/dsh-subprocess'
import { LocalHandle } from './handle.ts'
import { checkRequest, spawnFailure } from './request.ts'

export { processRuns } from './group.ts'

export const name = 'subprocess-local'

export interface Config {
  /**
   * Parent of the provider's private spill directory. Unset: the OS temp dir. The private directory
   * (`dsh-subprocess-XXXXXX`, mode 0700) is made on the first spill and outlives the provider.
   */
  spillDir?: string
}

export const Config: Schema<Config> = Schema.object({
  spillDir: Schema.string().description('Parent directory of the private (0700) spill directory; default: the OS temp dir.'),
})

const stdio = (mode: OutputDisposition) => (typeof mode === 'object' ? 'pipe' : mode)

/**
 * The local `ctx.subprocess`: `child_process.spawn` without a shell, every child the leader of its own process
 * group, every group tracked until no member runs, and nothing left behind when the provider is disposed or the
 * host exits.
 */
export class LocalSubprocess extends SubprocessService {
  static readonly Config = Config
  private readonly live = new Set<LocalHandle>()
  private closed = false
  private dir: string | undefined
  private spills = 0

  constructor(ctx: Context, private readonly config: Config = {}) {
    super(ctx)
    ctx.effect(() => {
      // Host exits normally with trees still running (no dispose): SIGKILL them, synchronously, as it must be.
      const onExit = () => {
        for (const handle of this.live) handle.kill()
      }
      process.on('exit', onExit)
      return async () => {
        this.closed = true
        const handles = [...this.live]
        for (const handle of handles) handle.terminate()
        await Promise.all(handles.map((handle) => Promise.all([handle.waitForExit(), handle.done])))
        process.off('exit', onExit)
        // Removed only if no spill file was kept in it: kept files outlive the provider.
        if (this.dir) await rmdir(this.dir).catch(() => {})
      }
    }, 'subprocess-local')
  }

  async spawn(request: SpawnRequest): Promise<SubprocessHandle> {
    checkRequest(request)
    const program = JSON.stringify(request.argv[0])
    if (this.closed) {
      throw new SubprocessError(`cannot start ${program}: the subprocess provider was disposed`, { code: SubprocessErrorCode.SUBPROCESS_SPAWN_FAILED })
    }
    if (request.signal?.aborted) {
      throw new SubprocessError(`${program} was not started: the call was cancelled`, { code: SubprocessErrorCode.SUBPROCESS_ABORTED, cause: request.signal.reason })
    }
    const [file, ...args] = request.argv as [string, ...string[]]
    const modes: StdioOptions = [request.stdin === 'ignore' ? 'ignore' : 'pipe', stdio(request.stdout), stdio(request.stderr)]
    let child: ChildProcess
    try {
      child = spawnChild(file, args, { cwd: request.cwd, env: childEnv(request.env), stdio: modes, detached: true })
    } catch (error) {
      throw spawnFailure(request, error)
    }
    if (child.pid === undefined) {
      const error = await new Promise((resolve) => child.once('error', resolve))
      throw spawnFailure(request, error)
    }
    const handle = new LocalHandle(child, request, {
      spillPath: (pid, stream) => this.spillPath(pid, stream),
      // Tracked until the tree is gone and its output is complete (spill files flushed), so dispose awaits both.
      gone: (gone) => void gone.done.then(() => this.live.delete(gone)),
    })
    this.live.add(handle)
    return handle
  }

  private spillPath(pid: number, stream: string): string {
    if (!this.dir) {
      const parent = resolve(this.config.spillDir ?? tmpdir())
      mkdirSync(parent, { recursive: true, mode: 0o700 })
      this.dir = mkdtempSync(join(parent, 'dsh-subprocess-'))
    }
    return join(this.dir, `${++this.spills}-${pid}-${stream}.log`)
  }
}

export default LocalSubprocess
