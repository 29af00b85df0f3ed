import type { BashExecutor, BashTaskRead } from '@deepseek-ai/dsh-bash'
import type { ToolExecution, ToolOutput } from '@deepseek-ai/dsh-tools'
import type { ResultLimits } from './bash.ts'
import { renderRead, unkeptReadCuts, type TaskIdArgs } from './bash-output-text.ts'
import { ownTask } from './tasks.ts'

/** `bash_output`: what the task printed since the last read, and its status, within the result budget. */
export async function bashOutput(executor: BashExecutor, args: TaskIdArgs, exec: ToolExecution, limits: ResultLimits): Promise<ToolOutput<BashTaskRead>> {
  ownTask(executor, args.task_id, exec)
  let read = executor.readOutput(args.task_id)
  // An increment too long to show whole, of a stream no file holds: keep it, or its middle is gone for good.
  for (const name of unkeptReadCuts(read, limits.maxResultBytes)) {
    const spillPath = await limits.keep(exec, `${args.task_id}-${name}.txt`, read[name].text)
    if (spillPath !== undefined) read = { ...read, [name]: { ...read[name], spillPath } }
  }
  return { text: renderRead(read, limits.maxResultBytes), value: read }
}
