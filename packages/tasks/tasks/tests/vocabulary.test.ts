import { expect, test } from 'vitest'
import { HarnessError } from '@deepseek-ai/dsh-tools'
import { statusLine, TaskError, TaskErrorCode, TaskService, taskDoneNotice } from '../src/index.ts'

test('status lines name the state, the exit code or the signal', () => {
  expect(statusLine({ state: 'running' })).toBe('[status: running]')
  expect(statusLine({ state: 'completed', exitCode: 0 })).toBe('[status: completed, exit code: 0]')
  expect(statusLine({ state: 'completed', exitCode: 3 })).toBe('[status: completed, exit code: 3]')
  expect(statusLine({ state: 'killed', signal: 'SIGTERM' })).toBe('[status: killed by SIGTERM]')
})

test('the completion notice names the task, its status and how to read it', () => {
  expect(taskDoneNotice('bash-7', { state: 'completed', exitCode: 0 })).toBe(
    'background task bash-7 finished [status: completed, exit code: 0]. Read its output with bash_output.',
  )
  expect(taskDoneNotice('bash-1', { state: 'killed', signal: 'SIGKILL' })).toBe(
    'background task bash-1 finished [status: killed by SIGKILL]. Read its output with bash_output.',
  )
})

test('TaskError is a HarnessError with a stable code', () => {
  const error = new TaskError('unknown task bash-2', { code: TaskErrorCode.BASH_UNKNOWN_TASK })
  expect(error).toBeInstanceOf(HarnessError)
  expect(error.name).toBe('TaskError')
  expect(error.code).toBe('BASH_UNKNOWN_TASK')
})

test('the definition provides ctx.tasks and is abstract', () => {
  expect(TaskService.provide).toBe('tasks')
})
