/*
 * Texts the three tools share. Pure functions of their arguments: each exact text is a unit test.
 */

export function forbiddenMessage(taskId: string): string {
  return `task ${taskId} belongs to another session`
}

export function unknownTaskMessage(taskId: string): string {
  return `unknown task id ${JSON.stringify(taskId)}: use an id that bash returned for a command run with run_in_background, such as bash-1`
}

export function abortedMessage(): string {
  return 'bash command aborted: the call was cancelled and the command was killed'
}

export function notStartedMessage(): string {
  return 'bash command not started: the call was cancelled'
}

export function nulMessage(): string {
  return 'command contains a NUL byte, which no shell command can hold'
}

export function workdirMessage(given: string, reason: string): string {
  return `invalid workdir ${JSON.stringify(given)}: ${reason}; pass an existing directory, absolute or relative to the working directory`
}

/** The line before an increment whose start was lost. */
export function droppedLine(spillPath: string | undefined): string {
  if (spillPath !== undefined) return `[earlier output was dropped; full output: ${spillPath}]`
  return '[earlier output was dropped; the full output was not kept]'
}
