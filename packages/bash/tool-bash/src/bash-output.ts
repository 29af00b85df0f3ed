import type { OutputIncrement, Task, TaskRead, TaskWaitOutcome } from '@deepseek-ai/dsh-tasks'
import { CoreErrorCode, HarnessError, invalidArgs, type ToolExecution, type ToolOutput } from '@deepseek-ai/dsh-tools'
import type { ResultLimits } from './bash.ts'
import {
  renderList,
  renderRead,
  unkeptReadCuts,
  WAIT_DEFAULT_MS,
  WAIT_MAX_MS,
  waitLine,
  type BashOutputArgs,
} from './bash-output-text.ts'
import { waitAbortedMessage, waitArgsMessage, waitPatternMessage } from './common-text.ts'
import { ownTask, type Tasks } from './tasks.ts'

export type BashOutputValue = (TaskRead & { wait?: TaskWaitOutcome }) | { tasks: Task[] }

/**
 * `bash_output`: what the task printed since the last read, and its status — after waiting, when asked, for a match
 * in new output, the end or a timeout; without a task id, the session's tasks. Within the result budget.
 */
export async function bashOutput(
  tasks: Tasks,
  args: BashOutputArgs,
  exec: ToolExecution,
  limits: ResultLimits,
): Promise<ToolOutput<BashOutputValue>> {
  const id = args.task_id
  if (id === undefined) {
    if (args.wait_for !== undefined || args.timeout_ms !== undefined) throw invalidArgs(waitArgsMessage())
    const mine = tasks.list()
    return { text: renderList(mine, Date.now(), limits.maxResultBytes), value: { tasks: mine } }
  }
  const pattern = waitPattern(args.wait_for)
  ownTask(tasks, id)
  const timeoutMs = Math.min(args.timeout_ms ?? WAIT_DEFAULT_MS, WAIT_MAX_MS)
  return respond(
    tasks,
    id,
    exec,
    limits,
    pattern !== undefined || args.timeout_ms !== undefined ? { pattern, timeoutMs } : undefined,
  )
}

/** A `wait_for` argument as a regular expression, or an INVALID_ARGS error saying how to write one. */
export function waitPattern(waitFor: string | undefined): RegExp | undefined {
  if (waitFor === undefined) return undefined
  try {
    return new RegExp(waitFor, 'm')
  } catch (error) {
    throw invalidArgs(waitPatternMessage(waitFor, (error as Error).message), error)
  }
}

/**
 * After a wait, when asked for (a match in new output, the end, a timeout), the task's new output and status within
 * the result budget; `earlier` is output already read for this answer (bash_input's), shown first.
 */
export async function respond(
  tasks: Tasks,
  id: string,
  exec: ToolExecution,
  limits: ResultLimits,
  waiting: { pattern: RegExp | undefined; timeoutMs: number } | undefined,
  earlier?: TaskRead,
  note?: string,
): Promise<ToolOutput<BashOutputValue>> {
  let outcome: TaskWaitOutcome | undefined
  const pattern = waiting?.pattern
  const timeoutMs = waiting?.timeoutMs ?? WAIT_DEFAULT_MS
  if (waiting) {
    outcome = await tasks.waitFor(id, { ...(pattern ? { pattern } : {}), timeoutMs, signal: exec.signal })
    if (outcome === 'aborted') throw new HarnessError(waitAbortedMessage(), { code: CoreErrorCode.ABORTED })
  }
  let read = joinReads(earlier, tasks.readOutput(id))
  const wait = note ?? waitLine(outcome, pattern ? 'pattern' : 'end', timeoutMs)
  // An increment too long to show whole, of a stream no file holds: keep it, or its middle is gone for good.
  for (const name of unkeptReadCuts(read, limits.maxResultBytes, wait)) {
    const spillPath = await limits.keep(exec, `${id}-${name}.txt`, read[name].text)
    if (spillPath !== undefined) read = { ...read, [name]: { ...read[name], spillPath } }
  }
  const text = renderRead(read, limits.maxResultBytes, wait)
  return { text, value: outcome === undefined ? read : { ...read, wait: outcome } }
}

/** Two reads of one task as one: the texts joined, lossy if either was, the later status and spill path. */
export function joinReads(earlier: TaskRead | undefined, later: TaskRead): TaskRead {
  if (!earlier) return later
  const join = (name: 'stdout' | 'stderr'): OutputIncrement => {
    const a = earlier[name]
    const b = later[name]
    const spillPath = b.spillPath ?? a.spillPath
    const joined = { text: a.text + b.text, lossy: a.lossy || b.lossy }
    return spillPath === undefined ? joined : { ...joined, spillPath }
  }
  return { stdout: join('stdout'), stderr: join('stderr'), status: later.status }
}
