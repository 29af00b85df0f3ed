import { resolve } from 'node:path'
import { BashError, BashErrorCode, MAX_COMMAND_BYTES, type BashRunResult, type BashTask } from '@deepseek-ai/dsh-bash'
import { CoreErrorCode, HarnessError, invalidArgs, type ToolExecution, type ToolOutput } from '@deepseek-ai/dsh-tools'
import { renderRun, renderStarted, unkeptCuts, type BashArgs } from './bash-text.ts'
import { abortedMessage, notStartedMessage, nulMessage, tooLongMessage, workdirMessage } from './common-text.ts'
import type { Keep } from './keep.ts'
import type { Executor } from './tasks.ts'

/** What a bash call needs besides its executor: the result budget and a way to keep output it cannot show whole. */
export interface ResultLimits {
  readonly maxResultBytes: number
  readonly keep: Keep
}

/**
 * `bash`: a foreground command (the call lasts as long as it runs, its signal kills it) or a background task
 * (the call returns its id at once). A non-zero exit or a timeout is a result, not an error.
 */
export async function bash(executor: Executor, args: BashArgs, exec: ToolExecution, limits: ResultLimits): Promise<ToolOutput<BashRunResult | BashTask>> {
  if (args.command.includes('\0')) throw invalidArgs(nulMessage())
  const bytes = Buffer.byteLength(args.command, 'utf8')
  if (bytes > MAX_COMMAND_BYTES) throw invalidArgs(tooLongMessage(bytes, MAX_COMMAND_BYTES))
  if (args.workdir?.includes('\0')) throw invalidArgs(workdirMessage(args.workdir, 'a path cannot contain a NUL byte'))
  const cwd = exec.session?.cwd ?? process.cwd()
  const request = {
    command: args.command,
    workdir: args.workdir === undefined ? cwd : resolve(cwd, args.workdir),
    ...(exec.session ? { owner: exec.session.id } : {}),
  }
  try {
    if (args.run_in_background) {
      // No signal: the task outlives this call; bash_kill stops it.
      const task = await executor.start(executor.resolve(request))
      return { text: renderStarted(task.id), value: task }
    }
    const spec = executor.resolve({ ...request, signal: exec.signal, ...(args.timeoutMs === undefined ? {} : { timeoutMs: args.timeoutMs }) })
    const result = await keepWhole(await executor.run(spec), exec, limits)
    if (result.aborted) throw new HarnessError(abortedMessage(result.leftRunning), { code: CoreErrorCode.ABORTED })
    return { text: renderRun(result, limits.maxResultBytes), value: result }
  } catch (error) {
    throw explain(error, args, request.workdir)
  }
}

/** A stream the result must cut but that no file holds yet is saved first, so the cut marker can name it. */
async function keepWhole(result: BashRunResult, exec: ToolExecution, limits: ResultLimits): Promise<BashRunResult> {
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
  if (error.code === BashErrorCode.BASH_INVALID_WORKDIR && args.workdir !== undefined) return invalidArgs(workdirMessage(args.workdir, error.message, absolute), error)
  if (error.code === BashErrorCode.BASH_ABORTED) return new HarnessError(notStartedMessage(), { code: CoreErrorCode.ABORTED, cause: error })
  return error
}
