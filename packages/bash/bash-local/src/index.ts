import type { Context } from 'cordis'
import {
  BashExecutor,
  type BashExecRequest, type BashExecSpec, type BashRunResult, type BashTask, type BashTaskDoneListener, type BashTaskRead,
} from '@deepseek-ai/dsh-bash'
import type {} from '@deepseek-ai/dsh-subprocess'
import { Config } from './config.ts'
import { CHILD_ENV, LocalBash, type Launcher } from './local.ts'

export const name = 'bash-local'
export { Config, CHILD_ENV, type Launcher }

/**
 * The local `ctx.bash`: `<shell> -c <command>` through `ctx.subprocess`, each command in its own process group,
 * both streams collected as a bounded tail with a spill file for the complete stream. Disposal stops every
 * command and task, descendants included, and waits until they are gone.
 */
export class LocalBashExecutor extends BashExecutor {
  static readonly inject = ['subprocess']
  static readonly Config = Config
  private readonly local: LocalBash

  /** `launcher` (for providers built on this one, such as the sandbox): how each command is started. */
  constructor(ctx: Context, config: Config, launcher?: Launcher) {
    super(ctx)
    this.local = new LocalBash(ctx, Config(config), launcher)
    ctx.effect(() => () => this.local.close(), 'bash-local')
  }

  resolve(request: BashExecRequest): BashExecSpec {
    return this.local.resolve(request)
  }

  run(spec: BashExecSpec): Promise<BashRunResult> {
    return this.local.run(spec)
  }

  start(spec: BashExecSpec): Promise<BashTask> {
    return this.local.start(spec)
  }

  get(id: string): BashTask | undefined {
    return this.local.get(id)
  }

  list(): BashTask[] {
    return this.local.list()
  }

  ownerOf(id: string): string | undefined {
    return this.local.ownerOf(id)
  }

  readOutput(id: string): BashTaskRead {
    return this.local.readOutput(id)
  }

  kill(id: string): Promise<boolean> {
    return this.local.kill(id)
  }

  onTaskDone(listener: BashTaskDoneListener): () => Promise<void> {
    // `this.ctx` is the caller's context here: the listener goes away with the plugin that registered it.
    return this.ctx.effect(() => this.local.addListener(listener), 'bash.onTaskDone')
  }
}

export default LocalBashExecutor
