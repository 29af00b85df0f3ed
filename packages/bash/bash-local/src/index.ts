import type { Context } from 'cordis'
import type { BashExecRequest, BashExecSpec, BashRunResult } from '@deepseek-ai/dsh-bash'
import { TaskBashExecutor, type TaskProcess } from '@deepseek-ai/dsh-bash-tasks'
import type {} from '@deepseek-ai/dsh-subprocess'
import { Config } from './config.ts'
import { CHILD_ENV, LocalBash, type Launcher } from './local.ts'

export const name = 'bash-local'
export { Config, CHILD_ENV, type Launcher }

/**
 * Where the service keeps its state. A method called through Cordis runs on a tracing proxy, on which every string
 * property read looks itself up in the context's reflection table (and allocates a proxy for that); symbol reads
 * pass straight through.
 */
const LOCAL: unique symbol = Symbol('local')

/**
 * The local `ctx.bash`: `<shell> -c <command>` through `ctx.subprocess`, each command in its own process group,
 * both streams collected as a bounded tail with a spill file for the complete stream. Background tasks live in the
 * shared task table (`@deepseek-ai/dsh-bash-tasks`). Disposal stops every command and task, descendants included,
 * and waits until they are gone.
 */
export class LocalBashExecutor extends TaskBashExecutor {
  static readonly inject = ['subprocess']
  static readonly Config = Config
  private readonly [LOCAL]: LocalBash

  /** `launcher` (for providers built on this one, such as the sandbox): how each command is started. */
  constructor(ctx: Context, config: Config, launcher?: Launcher) {
    super(ctx)
    const local = new LocalBash(ctx, Config(config), launcher)
    this[LOCAL] = local
    ctx.effect(() => () => local.close(), 'bash-local')
  }

  resolve(request: BashExecRequest): BashExecSpec {
    return this[LOCAL].resolve(request)
  }

  run(spec: BashExecSpec): Promise<BashRunResult> {
    return this[LOCAL].run(spec, (process, offsets) => this.adopt(spec, process, offsets))
  }

  protected spawnTask(spec: BashExecSpec): Promise<TaskProcess> {
    return this[LOCAL].spawnTask(spec)
  }
}

export default LocalBashExecutor
