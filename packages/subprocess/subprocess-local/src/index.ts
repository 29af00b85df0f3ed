import type { Context } from 'cordis'
import Schema from 'schemastery'
import { SubprocessService, type SpawnRequest, type SubprocessHandle } from '@deepseek-ai/dsh-subprocess'
import { PRUNE_INTERVAL_MS, pruneOutputDirs } from './output-dir.ts'
import { Spawner } from './spawner.ts'

export { processRuns } from '@deepseek-ai/dsh-subprocess'
export { PRUNE_INTERVAL_MS, pruneOutputDirs, pruneStampName } from './output-dir.ts'

export const name = 'subprocess-local'

export interface Config {
  /**
   * Parent of the provider's private spill directory. Unset: the OS temp dir. The private directory
   * (`dsh-subprocess-XXXXXX`, mode 0700) is made on the first spill and outlives the provider.
   */
  spillDir?: string
  /** Spill files older than this many days (in any of this user's spill directories there) go at start-up; 0: never. */
  pruneAfterDays?: number
}

export const Config: Schema<Config> = Schema.object({
  spillDir: Schema.string().description(
    'Parent directory of the private (0700) spill directory; default: the OS temp dir.',
  ),
  pruneAfterDays: Schema.number()
    .min(0)
    .default(7)
    .description('At start-up, remove full-output files older than this many days (0: never).'),
})

const DAY_MS = 86_400_000

/**
 * Where the service keeps its Spawner. A method called through Cordis runs on a tracing proxy, on which every string
 * property read looks itself up in the context's reflection table (and allocates a proxy for that); symbol reads
 * pass straight through.
 */
const SPAWNER: unique symbol = Symbol('spawner')

/**
 * The local `ctx.subprocess`: `child_process.spawn` without a shell, every child the leader of its own process
 * group, every group tracked until no member runs, and nothing left behind when the provider is disposed or the
 * host exits.
 */
export class LocalSubprocess extends SubprocessService {
  static readonly Config = Config
  private readonly [SPAWNER]: Spawner

  constructor(ctx: Context, config: Config = {}) {
    super(ctx)
    const spawner = new Spawner(config.spillDir)
    this[SPAWNER] = spawner
    ctx.effect(() => {
      // The host exits without disposing (process.exit, an uncaught exception): SIGKILL what is left, synchronously.
      const onExit = () => spawner.killAll()
      process.on('exit', onExit)
      return async () => {
        await spawner.close()
        process.off('exit', onExit)
      }
    }, 'subprocess-local')
    const days = config.pruneAfterDays ?? 7
    if (days > 0) {
      // In the background: start-up does not wait; disposal stops it between two entries and awaits it.
      ctx.effect(() => {
        const controller = new AbortController()
        const done = pruneOutputDirs(config.spillDir, Date.now() - days * DAY_MS, {
          signal: controller.signal,
          unlessWithinMs: PRUNE_INTERVAL_MS,
        })
        return async () => {
          controller.abort()
          await done
        }
      }, 'subprocess-local prune')
    }
  }

  spawn(request: SpawnRequest): Promise<SubprocessHandle> {
    return this[SPAWNER].spawn(request)
  }
}

export default LocalSubprocess
