import type { BashExecutor, BashTaskRead } from '@deepseek-ai/dsh-bash'
import type { ToolExecution, ToolOutput } from '@deepseek-ai/dsh-tools'
import { renderRead, type TaskIdArgs } from './bash-output-text.ts'
import { ownTask } from './tasks.ts'

/** `bash_output`: what the task printed since the last read, and its status. */
export function bashOutput(executor: BashExecutor, args: TaskIdArgs, exec: ToolExecution): ToolOutput<BashTaskRead> {
  ownTask(executor, args.task_id, exec)
  const read = executor.readOutput(args.task_id)
  return { text: renderRead(read), value: read }
}
