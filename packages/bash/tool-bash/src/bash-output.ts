import type { BashExecutor, BashTask, BashTaskRead, BashWaitOutcome } from '@deepseek-ai/dsh-bash'
import { CoreErrorCode, HarnessError, invalidArgs, type ToolExecution, type ToolOutput } from '@deepseek-ai/dsh-tools'
import { renderList, renderRead, WAIT_DEFAULT_MS, WAIT_MAX_MS, waitLine, type BashOutputArgs } from './bash-output-text.ts'
import { waitAbortedMessage, waitArgsMessage, waitPatternMessage } from './common-text.ts'
import { ownTask } from './tasks.ts'

export type BashOutputValue = BashTaskRead & { wait?: BashWaitOutcome } | { tasks: BashTask[] }

/**
 * `bash_output`: what the task printed since the last read, and its status — after waiting, when asked, for a match
 * in new output, the end or a timeout; without a task id, the session's tasks.
 */
export async function bashOutput(executor: BashExecutor, args: BashOutputArgs, exec: ToolExecution): Promise<ToolOutput<BashOutputValue>> {
  const id = args.task_id
  if (id === undefined) {
    if (args.wait_for !== undefined || args.timeout_ms !== undefined) throw invalidArgs(waitArgsMessage())
    const session = exec.session?.id
    const tasks = executor.list().filter((task) => executor.ownerOf(task.id) === session)
    return { text: renderList(tasks, Date.now()), value: { tasks } }
  }
  let pattern: RegExp | undefined
  if (args.wait_for !== undefined) {
    try {
      pattern = new RegExp(args.wait_for, 'm')
    } catch (error) {
      throw invalidArgs(waitPatternMessage(args.wait_for, (error as Error).message), error)
    }
  }
  ownTask(executor, id, exec)
  let outcome: BashWaitOutcome | undefined
  const timeoutMs = Math.min(args.timeout_ms ?? WAIT_DEFAULT_MS, WAIT_MAX_MS)
  if (pattern !== undefined || args.timeout_ms !== undefined) {
    outcome = await executor.waitFor(id, { ...(pattern ? { pattern } : {}), timeoutMs, signal: exec.signal })
    if (outcome === 'aborted') throw new HarnessError(waitAbortedMessage(), { code: CoreErrorCode.ABORTED })
  }
  const read = executor.readOutput(id)
  const text = renderRead(read, waitLine(outcome, pattern ? 'pattern' : 'end', timeoutMs))
  return { text, value: outcome === undefined ? read : { ...read, wait: outcome } }
}
