import type { BashRunResult } from '@deepseek-ai/dsh-bash'
import type { StrayProcess } from '@deepseek-ai/dsh-tasks'

/**
 * A foreground run as the tool renders it: what still runs has become the task `adoptedTaskId` — its leftovers, or,
 * when `backgroundedAfterMs` is set, the command itself, still running after that long.
 */
export type RunOutcome = Omit<BashRunResult, 'continuing'> & {
  readonly adoptedTaskId: string | undefined
  readonly backgroundedAfterMs?: number
}
import { clip, QUOTE_MAX_BYTES, tildeHint } from '@deepseek-ai/dsh-text'

/*
 * Texts the three tools share. Pure functions of their arguments: each exact text is a unit test.
 */

/**
 * `value` (a task id, a wait_for pattern, a workdir) as an error text quotes it: JSON-quoted, its escaped form cut to
 * QUOTE_MAX_BYTES (with `…`). Error results are neither paged nor spilled, so a 100 KB argument must not come back
 * whole (docs/model-surface.md#budgets's budget).
 */
export function quoted(value: string): string {
  return `"${clip(JSON.stringify(value).slice(1, -1), QUOTE_MAX_BYTES)}"`
}

/**
 * A system message that repeats `value` (a path, a regex source), JSON-quoted or as it is, with every copy bounded
 * as `quoted` bounds it.
 */
export function boundedReason(reason: string, value: string): string {
  return reason.split(JSON.stringify(value)).join(quoted(value)).split(value).join(clip(value, QUOTE_MAX_BYTES))
}

export function unknownTaskMessage(taskId: string): string {
  return [
    `unknown task id ${quoted(taskId)}: this process has no background task with that id.`,
    "Use an id that bash returned (for run_in_background, or named as still running), or call bash_output without task_id to list this session's tasks.",
    'Background tasks do not outlive the process that started them: a one-shot `dsh call` stops its tasks when it exits.',
  ].join(' ')
}

export function waitArgsMessage(): string {
  return 'wait_for and timeout_ms need a task_id: pass the id of the task to wait for (bash_output without any argument lists the tasks)'
}

export function waitPatternMessage(pattern: string, reason: string): string {
  return `invalid wait_for ${quoted(pattern)}: ${boundedReason(reason, pattern)}; pass a JavaScript regular expression, e.g. "Listening on|ready"`
}

export function waitAbortedMessage(): string {
  return 'bash_output cancelled while waiting: the task was not touched'
}

export function abortedMessage(leftRunning: readonly StrayProcess[] = []): string {
  const text = 'bash command aborted: the call was cancelled and the command was killed'
  return leftRunning.length === 0 ? text : `${text} ${leftRunningLine(leftRunning, 'command')}`
}

export function notStartedMessage(): string {
  return 'bash command not started: the call was cancelled'
}

export function nulMessage(): string {
  return 'command contains a NUL byte, which no shell command can hold'
}

export function tooLongMessage(bytes: number, max: number): string {
  return `command is ${bytes} bytes long, but the shell takes at most ${max} bytes (one program argument): write long content to a file in parts, over several calls each under that size, then run it`
}

/** `reason` may name the resolved directory (`absolute`): it is bounded there too. */
export function workdirMessage(given: string, reason: string, absolute = given): string {
  return `invalid workdir ${quoted(given)}: ${boundedReason(reason, absolute)}${tildeHint(given)}; pass an existing directory, absolute or relative to the working directory`
}

/** The line before an increment whose start was lost. */
export function droppedLine(spillPath: string | undefined): string {
  if (spillPath !== undefined) return `[earlier output was dropped; full output: ${spillPath}]`
  return '[earlier output was dropped; the full output was not kept]'
}

/** The marker for a foreground command's leftovers that became a background task. */
export function adoptedLine(taskId: string): string {
  return `[background processes still running: task ${taskId}]`
}

/** The last line of a foreground command moved to the background because it ran long. */
export function backgroundedLine(taskId: string, afterMs: number): string {
  return `[still running after ${afterMs}ms: it continues as background task ${taskId}. Wait for it with bash_output {"task_id":"${taskId}","wait_for":"<regex for a line it prints>"} (or timeout_ms alone to wait for its end); bash_kill stops it]`
}

/** The marker for processes that left the process group, hold the output and were not stopped (`whose`: command, task). */
export function leftRunningLine(processes: readonly StrayProcess[], whose: 'command' | 'task'): string {
  const list = processes.map((p) => (p.command === '' ? `pid ${p.pid}` : `pid ${p.pid} (${p.command})`)).join(', ')
  return `[still running outside the ${whose}'s process group, not stopped: ${list}]`
}

/** What a foreground command left behind, as the last lines of its result. */
export function leftoverLines(
  result: Pick<RunOutcome, 'adoptedTaskId' | 'backgroundedAfterMs' | 'leftRunning'>,
): string[] {
  const lines: string[] = []
  if (result.adoptedTaskId !== undefined) {
    lines.push(
      result.backgroundedAfterMs === undefined
        ? adoptedLine(result.adoptedTaskId)
        : backgroundedLine(result.adoptedTaskId, result.backgroundedAfterMs),
    )
  }
  if (result.leftRunning.length > 0) lines.push(leftRunningLine(result.leftRunning, 'command'))
  return lines
}
