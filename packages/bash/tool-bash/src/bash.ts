import { resolve } from 'node:path'
import { BashError, BashErrorCode, MAX_COMMAND_BYTES, type BashExecSpec } from '@deepseek-ai/dsh-bash'
import type { Task } from '@deepseek-ai/dsh-tasks'
import { CoreErrorCode, HarnessError, invalidArgs, type ToolExecution, type ToolOutput } from '@deepseek-ai/dsh-tools'
import { interactiveArgsMessage, renderRun, renderStarted, unkeptCuts, type BashArgs } from './bash-text.ts'
import {
  abortedMessage,
  notStartedMessage,
  nulMessage,
  tooLongMessage,
  workdirMessage,
  type RunOutcome,
} from './common-text.ts'
import type { Keep } from './keep.ts'
import type { Services } from './tasks.ts'

/** What a bash call needs besides its executor: the result budget and a way to keep output it cannot show whole. */
export interface ResultLimits {
  readonly maxResultBytes: number
  readonly keep: Keep
  /** A foreground call without timeoutMs still running after this many ms becomes a task; 0: never. */
  readonly backgroundAfterMs: number
}

/**
 * `bash`: a foreground command (the call lasts as long as it runs, its signal kills it) or a background task
 * (the call returns its id at once). A non-zero exit or a timeout is a result, not an error. What a foreground
 * command leaves running becomes a task of the session.
 */
export async function bash(
  services: Services,
  args: BashArgs,
  exec: ToolExecution,
  limits: ResultLimits,
): Promise<ToolOutput<RunOutcome | Task>> {
  const executor = services.bash
  const tasks = services.tasks(exec.session)
  if (args.command.includes('\0')) throw invalidArgs(nulMessage())
  const bytes = Buffer.byteLength(args.command, 'utf8')
  if (bytes > MAX_COMMAND_BYTES) throw invalidArgs(tooLongMessage(bytes, MAX_COMMAND_BYTES))
  if (args.workdir?.includes('\0')) throw invalidArgs(workdirMessage(args.workdir, 'a path cannot contain a NUL byte'))
  if (args.interactive && !args.run_in_background) throw invalidArgs(interactiveArgsMessage())
  const cwd = exec.session?.cwd ?? process.cwd()
  const request = {
    command: args.command,
    workdir: args.workdir === undefined ? cwd : resolve(cwd, args.workdir),
    ...(exec.session ? { session: exec.session } : {}),
  }
  try {
    if (args.run_in_background) {
      // No signal: the task outlives this call; bash_kill stops it.
      const spec = executor.resolve({ ...request, ...(args.interactive ? { interactive: true } : {}) })
      const task = tasks.add({ ...taskOf(spec), process: await executor.start(spec) })
      return { text: renderStarted(task.id, task.interactive), value: task }
    }
    const spec = executor.resolve({
      ...request,
      signal: exec.signal,
      ...(args.timeoutMs === undefined ? {} : { timeoutMs: args.timeoutMs }),
      ...(limits.backgroundAfterMs > 0 ? { backgroundAfterMs: limits.backgroundAfterMs } : {}),
    })
    const startedAt = Date.now()
    const run = await executor.run(spec)
    const { continuing, ...rest } = run
    const adoptedTaskId =
      continuing &&
      tasks.add({ ...taskOf(spec), process: continuing.process, offsets: continuing.offsets, startedAt }).id
    const backgrounded =
      continuing?.reason === 'still-running'
        ? { backgroundedAfterMs: spec.backgroundAfterMs ?? limits.backgroundAfterMs }
        : {}
    const result = await keepWhole({ ...rest, adoptedTaskId, ...backgrounded }, exec, limits)
    if (result.aborted) throw new HarnessError(abortedMessage(result.leftRunning), { code: CoreErrorCode.ABORTED })
    return { text: renderRun(result, limits.maxResultBytes), value: result }
  } catch (error) {
    throw explain(error, args, request.workdir)
  }
}

/** What a task of `spec` is listed as. */
function taskOf(spec: BashExecSpec): { command: string; workdir: string } {
  return { command: spec.command, workdir: spec.workdir }
}

/** A stream the result must cut but that no file holds yet is saved first, so the cut marker can name it. */
async function keepWhole(result: RunOutcome, exec: ToolExecution, limits: ResultLimits): Promise<RunOutcome> {
  let kept = result
  for (const name of unkeptCuts(result, limits.maxResultBytes)) {
    const spillPath = await limits.keep(exec, `bash-${name}.txt`, result[name].text)
    if (spillPath !== undefined) kept = { ...kept, [name]: { ...kept[name], spillPath } }
  }
  return kept
}

/** Executor rejections in the model's terms: its own workdir is an argument error, a cancelled start an abort. */
function explain(error: unknown, args: BashArgs, absolute: string): unknown {
  if (!(error instanceof BashError)) return error
  if (error.code === BashErrorCode.BASH_INVALID_WORKDIR && args.workdir !== undefined)
    return invalidArgs(workdirMessage(args.workdir, error.message, absolute), error)
  if (error.code === BashErrorCode.BASH_ABORTED)
    return new HarnessError(notStartedMessage(), { code: CoreErrorCode.ABORTED, cause: error })
  return error
}
