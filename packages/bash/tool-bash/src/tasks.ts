import type { BashExecutor } from '@deepseek-ai/dsh-bash'
import { TaskError, TaskErrorCode, type SessionTasks, type Task, type TaskService } from '@deepseek-ai/dsh-tasks'
import type { ToolSession } from '@deepseek-ai/dsh-tools'
import { unknownTaskMessage } from './common-text.ts'

/** What the tools call on `ctx.bash`. */
export type Executor = Pick<BashExecutor, 'resolve' | 'run' | 'start'>

/** What the tools call on `ctx.tasks`. */
export type Tasks = SessionTasks

/** The two services the tools use. */
export interface Services {
  readonly bash: Executor
  /** The calling session's tasks (kept in the session: ids per session, another session's unknown). */
  readonly tasks: (session: ToolSession | undefined) => Tasks
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
    tasks: tasks.of.bind(tasks),
  }
}

/** The task a call may touch: one of its session's (a task of another session is unknown, as is a made-up id). */
export function ownTask(tasks: Tasks, taskId: string): Task {
  const task = tasks.get(taskId)
  if (!task) throw new TaskError(unknownTaskMessage(taskId), { code: TaskErrorCode.BASH_UNKNOWN_TASK })
  return task
}
