import type { StrayProcess } from '@deepseek-ai/dsh-tasks'
import { leftRunningLine } from './common-text.ts'

export const BASH_KILL_DESCRIPTION =
  'Stop a background task (started by bash with run_in_background) and every process it started. Its output stays readable with bash_output.'

export function renderKill(taskId: string, killed: boolean, leftRunning: readonly StrayProcess[] = []): string {
  const text = killed ? `killed background task ${taskId}` : `task ${taskId} had already finished`
  return killed && leftRunning.length > 0 ? `${text}\n${leftRunningLine(leftRunning, 'task')}` : text
}
