import type { ToolOutput } from '@deepseek-ai/dsh-tools'
import type { TaskIdArgs } from './bash-output-text.ts'
import { renderKill } from './bash-kill-text.ts'
import { ownTask, type Tasks } from './tasks.ts'

/** `bash_kill`: stops (`tasks` are the calling session's) the task's whole process tree and returns once it is gone. */
export async function bashKill(tasks: Tasks, args: TaskIdArgs): Promise<ToolOutput<{ killed: boolean }>> {
  ownTask(tasks, args.task_id)
  const killed = await tasks.kill(args.task_id)
  const leftRunning = tasks.get(args.task_id)?.leftRunning ?? []
  return { text: renderKill(args.task_id, killed, leftRunning), value: { killed } }
}
