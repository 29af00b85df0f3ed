import { BashError, BashErrorCode, type BashExecutor, type BashTask } from '@deepseek-ai/dsh-bash'
import type { ToolExecution } from '@deepseek-ai/dsh-tools'
import { forbiddenMessage, unknownTaskMessage } from './common-text.ts'

/**
 * The task a call may touch: it must exist, and a task with an owner belongs to that session alone (an ownerless
 * task, started by a library caller without a session, is anyone's).
 */
export function ownTask(executor: BashExecutor, taskId: string, exec: ToolExecution): BashTask {
  const task = executor.get(taskId)
  if (!task) throw new BashError(unknownTaskMessage(taskId), { code: BashErrorCode.BASH_UNKNOWN_TASK })
  const owner = executor.ownerOf(taskId)
  if (owner !== undefined && owner !== exec.session?.id) throw new BashError(forbiddenMessage(taskId), { code: BashErrorCode.BASH_TASK_FORBIDDEN })
  return task
}
