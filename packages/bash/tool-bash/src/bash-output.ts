import type { Task, TaskRead, TaskWaitOutcome } from '@deepseek-ai/dsh-tasks'
import { CoreErrorCode, HarnessError, invalidArgs, type ToolExecution, type ToolOutput } from '@deepseek-ai/dsh-tools'
import type { ResultLimits } from './bash.ts'
import { renderList, renderRead, unkeptReadCuts, WAIT_DEFAULT_MS, WAIT_MAX_MS, waitLine, type BashOutputArgs } from './bash-output-text.ts'
import { waitAbortedMessage, waitArgsMessage, waitPatternMessage } from './common-text.ts'
import { ownTask, type Tasks } from './tasks.ts'

export type BashOutputValue = TaskRead & { wait?: TaskWaitOutcome } | { tasks: Task[] }

/**
 * `bash_output`: what the task printed since the last read, and its status — after waiting, when asked, for a match
 * in new output, the end or a timeout; without a task id, the session's tasks. Within the result budget.
 */
export async function bashOutput(tasks: Tasks, args: BashOutputArgs, exec: ToolExecution, limits: ResultLimits): Promise<ToolOutput<BashOutputValue>> {
  const id = args.task_id
  if (id === undefined) {
    if (args.wait_for !== undefined || args.timeout_ms !== undefined) throw invalidArgs(waitArgsMessage())
    const session = exec.session?.id
    const mine = tasks.list().filter((task) => tasks.ownerOf(task.id) === session)
    return { text: renderList(mine, Date.now(), limits.maxResultBytes), value: { tasks: mine } }
  }
  let pattern: RegExp | undefined
  if (args.wait_for !== undefined) {
    try {
      pattern = new RegExp(args.wait_for, 'm')
    } catch (error) {
      throw invalidArgs(waitPatternMessage(args.wait_for, (error as Error).message), error)
    }
  }
  ownTask(tasks, id, exec)
  let outcome: TaskWaitOutcome | undefined
  const timeoutMs = Math.min(args.timeout_ms ?? WAIT_DEFAULT_MS, WAIT_MAX_MS)
  if (pattern !== undefined || args.timeout_ms !== undefined) {
    outcome = await tasks.waitFor(id, { ...(pattern ? { pattern } : {}), timeoutMs, signal: exec.signal })
    if (outcome === 'aborted') throw new HarnessError(waitAbortedMessage(), { code: CoreErrorCode.ABORTED })
  }
  let read = tasks.readOutput(id)
  const wait = waitLine(outcome, pattern ? 'pattern' : 'end', timeoutMs)
  // An increment too long to show whole, of a stream no file holds: keep it, or its middle is gone for good.
  for (const name of unkeptReadCuts(read, limits.maxResultBytes, wait)) {
    const spillPath = await limits.keep(exec, `${id}-${name}.txt`, read[name].text)
    if (spillPath !== undefined) read = { ...read, [name]: { ...read[name], spillPath } }
  }
  const text = renderRead(read, limits.maxResultBytes, wait)
  return { text, value: outcome === undefined ? read : { ...read, wait: outcome } }
}
