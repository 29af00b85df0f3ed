import type { BashExecutor } from '@deepseek-ai/dsh-bash'
import { TaskError, TaskErrorCode, type Task, type TaskService } from '@deepseek-ai/dsh-tasks'
import type { ToolExecution } from '@deepseek-ai/dsh-tools'
import { forbiddenMessage, unknownTaskMessage } from './common-text.ts'

/** What the tools call on `ctx.bash`. */
export type Executor = Pick<BashExecutor, 'resolve' | 'run' | 'start'>

/** What the tools call on `ctx.tasks`. */
export type Tasks = Pick<TaskService, 'add' | 'get' | 'list' | 'ownerOf' | 'readOutput' | 'waitFor' | 'write' | 'kill'>

/** The two services the tools use. */
export interface Services {
  readonly bash: Executor
  readonly tasks: Tasks
}

/**
 * The services' methods, each read once: every read of a method on a Cordis service builds a tracing proxy and a
 * context for it, which a call should not pay for again and again. Called with the service as `this`.
 */
export function boundMethods(executor: BashExecutor, tasks: TaskService): Services {
  return {
    bash: {
      resolve: executor.resolve.bind(executor),
      run: executor.run.bind(executor),
      start: executor.start.bind(executor),
    },
    tasks: {
      add: tasks.add.bind(tasks),
      get: tasks.get.bind(tasks),
      list: tasks.list.bind(tasks),
      ownerOf: tasks.ownerOf.bind(tasks),
      readOutput: tasks.readOutput.bind(tasks),
      waitFor: tasks.waitFor.bind(tasks),
      write: tasks.write.bind(tasks),
      kill: tasks.kill.bind(tasks),
    },
  }
}

/**
 * The task a call may touch: it must exist, and a task with an owner belongs to that session alone (an ownerless
 * task, started by a library caller without a session, is anyone's).
 */
export function ownTask(tasks: Tasks, taskId: string, exec: ToolExecution): Task {
  const task = tasks.get(taskId)
  if (!task) throw new TaskError(unknownTaskMessage(taskId), { code: TaskErrorCode.BASH_UNKNOWN_TASK })
  const owner = tasks.ownerOf(taskId)
  if (owner !== undefined && owner !== exec.session?.id)
    throw new TaskError(forbiddenMessage(taskId), { code: TaskErrorCode.BASH_TASK_FORBIDDEN })
  return task
}
