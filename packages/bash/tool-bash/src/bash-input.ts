import type { TaskRead } from '@deepseek-ai/dsh-tasks'
import { CoreErrorCode, HarnessError, type ToolExecution, type ToolOutput } from '@deepseek-ai/dsh-tools'
import type { ResultLimits } from './bash.ts'
import { joinReads, respond, waitPattern, type BashOutputValue } from './bash-output.ts'
import { WAIT_DEFAULT_MS, WAIT_MAX_MS } from './bash-output-text.ts'
import { INPUT_QUIET_MS, noOutputLine, stillComingLine, type BashInputArgs } from './bash-input-text.ts'
import { waitAbortedMessage } from './common-text.ts'
import { ownTask, type Tasks } from './tasks.ts'

/** Any output at all. */
const ANY = /[^]/

/**
 * `bash_input`: types `text` into an interactive task, then answers with the output that follows — with `wait_for`
 * as bash_output does; without it, once the output has paused for INPUT_QUIET_MS (or timeout_ms passed).
 */
export async function bashInput(
  tasks: Tasks,
  args: BashInputArgs,
  exec: ToolExecution,
  limits: ResultLimits,
): Promise<ToolOutput<BashOutputValue>> {
  const pattern = waitPattern(args.wait_for)
  ownTask(tasks, args.task_id)
  const id = args.task_id
  const timeoutMs = Math.min(args.timeout_ms ?? WAIT_DEFAULT_MS, WAIT_MAX_MS)
  await tasks.write(id, args.text)
  if (pattern) return respond(tasks, id, exec, limits, { pattern, timeoutMs })
  const deadline = Date.now() + timeoutMs
  const wait = async (ms: number) => {
    const outcome = await tasks.waitFor(id, { pattern: ANY, timeoutMs: ms, signal: exec.signal })
    if (outcome === 'aborted') throw new HarnessError(waitAbortedMessage(), { code: CoreErrorCode.ABORTED })
    return outcome
  }
  let earlier: TaskRead | undefined
  let outcome = await wait(timeoutMs)
  let rounds = 0
  while (outcome === 'matched') {
    earlier = joinReads(earlier, tasks.readOutput(id))
    rounds++
    const left = deadline - Date.now()
    if (left <= 0) break
    outcome = await wait(Math.min(INPUT_QUIET_MS, left))
  }
  const note =
    rounds === 0 && outcome === 'timeout'
      ? noOutputLine(timeoutMs)
      : outcome === 'matched'
        ? stillComingLine(timeoutMs)
        : undefined
  return respond(tasks, id, exec, limits, undefined, earlier, note)
}
