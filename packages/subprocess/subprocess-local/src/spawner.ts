import { spawn as spawnChild, type ChildProcess, type StdioOptions } from 'node:child_process'
import {
  childEnv,
  SubprocessError,
  SubprocessErrorCode,
  type OutputDisposition,
  type SpawnRequest,
} from '@deepseek-ai/dsh-subprocess'
import { LocalHandle } from './handle.ts'
import { OutputDir } from './output-dir.ts'
import { MARK, Reaper } from './reaper.ts'
import { checkRequest, spawnFailure } from './request.ts'

const stdio = (mode: OutputDisposition) => (typeof mode === 'object' ? 'pipe' : mode)

/**
 * The provider's state and behaviour, kept out of the Cordis service object (every property read on a service
 * goes through Cordis' tracing proxy; the hot path should not).
 */
export class Spawner {
  /** Every handle whose tree may still run or whose output is not complete yet. */
  private readonly live = new Set<LocalHandle>()
  private closed = false
  private readonly output: OutputDir
  private readonly reaper = new Reaper()
  /** The longest grace a spawn asked for: disposal gives marked processes that long after SIGTERM. */
  private graceMs = 0

  constructor(spillDir: string | undefined) {
    this.output = new OutputDir(spillDir)
  }

  async spawn(request: SpawnRequest): Promise<LocalHandle> {
    checkRequest(request)
    if (this.closed) {
      throw new SubprocessError(
        `cannot start ${JSON.stringify(request.argv[0])}: the subprocess provider was disposed`,
        { code: SubprocessErrorCode.SUBPROCESS_SPAWN_FAILED },
      )
    }
    if (request.signal?.aborted) {
      throw new SubprocessError(`${JSON.stringify(request.argv[0])} was not started: the call was cancelled`, {
        code: SubprocessErrorCode.SUBPROCESS_ABORTED,
        cause: request.signal.reason,
      })
    }
    const [file, ...args] = request.argv as [string, ...string[]]
    const modes: StdioOptions = [
      request.stdin === 'ignore' ? 'ignore' : 'pipe',
      stdio(request.stdout),
      stdio(request.stderr),
    ]
    const mark = this.reaper.next()
    this.graceMs = Math.max(this.graceMs, request.graceMs)
    let child: ChildProcess
    try {
      const env = childEnv(request.reap === false ? { ...request.env } : { ...request.env, [MARK]: mark.value })
      child = spawnChild(file, args, { cwd: request.cwd, env, stdio: modes, detached: true })
    } catch (error) {
      throw spawnFailure(request, error)
    }
    if (child.pid === undefined) {
      const error = await new Promise((resolve) => child.once('error', resolve))
      throw spawnFailure(request, error)
    }
    const handle = new LocalHandle(child, request, mark, {
      spillFile: (pid, stream) => this.output.createFile(pid, stream),
      // Tracked until the tree is gone and its output is complete (spill files flushed), so close() awaits both.
      gone: (gone) => void gone.done.then(() => this.live.delete(gone)),
    })
    this.live.add(handle)
    return handle
  }

  /** At host exit: SIGKILL every tree still tracked and every process that carries a mark, synchronously. */
  killAll(): void {
    for (const handle of this.live) handle.kill()
    this.reaper.killAll()
  }

  /** Refuses new spawns, terminates every live tree and waits until each is gone with its output complete. */
  async close(): Promise<void> {
    this.closed = true
    const handles = [...this.live]
    for (const handle of handles) handle.terminate()
    await Promise.all(handles.map((handle) => Promise.all([handle.waitForExit(), handle.done])))
    // What left its group, also of spawns whose group ended long ago (a foreground command's setsid'd daemon).
    await this.reaper.close(this.graceMs)
    await this.output.close()
  }
}
