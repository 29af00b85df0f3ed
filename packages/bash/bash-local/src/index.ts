import type { Context } from 'cordis'
import {
  BashExecutor,
  type BashExecRequest,
  type BashExecSpec,
  type BashRunResult,
  type TaskProcess,
} from '@deepseek-ai/dsh-bash'
import { BashRunner, CHILD_ENV, Config } from '@deepseek-ai/dsh-bash-runner'
import type {} from '@deepseek-ai/dsh-subprocess'

export const name = 'bash-local'
export { Config, CHILD_ENV }

/**
 * Where the service keeps its state. A method called through Cordis runs on a tracing proxy, on which every string
 * property read looks itself up in the context's reflection table (and allocates a proxy for that); symbol reads
 * pass straight through.
 */
const RUNNER: unique symbol = Symbol('runner')

/**
 * The local `ctx.bash`: `<shell> -c <command>` through `ctx.subprocess` (the runner of `@deepseek-ai/dsh-bash-runner`
 * with no launcher), each command in its own process group, both streams collected as a bounded head and tail with
 * a spill file for the complete stream. Disposal stops every command and started process, descendants included,
 * and waits until they are gone.
 */
export class LocalBashExecutor extends BashExecutor {
  static readonly inject = ['subprocess']
  static readonly Config = Config
  private readonly [RUNNER]: BashRunner

  constructor(ctx: Context, config: Partial<Config>) {
    super(ctx)
    const runner = new BashRunner(ctx, Config(config))
    this[RUNNER] = runner
    ctx.effect(() => () => runner.close(), 'bash-local')
  }

  resolve(request: BashExecRequest): BashExecSpec {
    return this[RUNNER].resolve(request)
  }

  run(spec: BashExecSpec): Promise<BashRunResult> {
    return this[RUNNER].run(spec)
  }

  start(spec: BashExecSpec): Promise<TaskProcess> {
    return this[RUNNER].start(spec)
  }
}

export default LocalBashExecutor
