export const BASH_KILL_DESCRIPTION = 'Stop a background task (started by bash with run_in_background) and every process it started. Its output stays readable with bash_output.'

export function renderKill(taskId: string, killed: boolean): string {
  return killed ? `killed background task ${taskId}` : `task ${taskId} had already finished`
}
