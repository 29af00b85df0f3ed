import { BashError, BashErrorCode, type BashExecutor, type BashTask } from '@deepseek-ai/dsh-bash'
import type { ToolExecution } from '@deepseek-ai/dsh-tools'
import { forbiddenMessage, unknownTaskMessage } from './common-text.ts'

/** What the tools call on `ctx.bash`. */
export type Executor = Pick<BashExecutor, 'resolve' | 'run' | 'start' | 'get' | 'list' | 'ownerOf' | 'readOutput' | 'waitFor' | 'kill'>

/**
 * `executor`'s methods, each read once: every read of a method on a Cordis service builds a tracing proxy and a
 * context for it, which a call should not pay for again and again. Called with the service as `this`, as before.
 */
export function boundMethods(executor: BashExecutor): Executor {
  return {
    resolve: executor.resolve.bind(executor),
    run: executor.run.bind(executor),
    start: executor.start.bind(executor),
    get: executor.get.bind(executor),
    list: executor.list.bind(executor),
    ownerOf: executor.ownerOf.bind(executor),
    readOutput: executor.readOutput.bind(executor),
    waitFor: executor.waitFor.bind(executor),
    kill: executor.kill.bind(executor),
  }
}

/**
 * The task a call may touch: it must exist, and a task with an owner belongs to that session alone (an ownerless
 * task, started by a library caller without a session, is anyone's).
 */
export function ownTask(executor: Executor, taskId: string, exec: ToolExecution): BashTask {
  const task = executor.get(taskId)
  if (!task) throw new BashError(unknownTaskMessage(taskId), { code: BashErrorCode.BASH_UNKNOWN_TASK })
  const owner = executor.ownerOf(taskId)
  if (owner !== undefined && owner !== exec.session?.id) throw new BashError(forbiddenMessage(taskId), { code: BashErrorCode.BASH_TASK_FORBIDDEN })
  return task
}
