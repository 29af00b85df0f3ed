import { expect, test } from 'vitest'
import { HarnessError } from '@deepseek-ai/dsh-tools'
import { BashError, BashErrorCode, BashExecutor } from '../src/index.ts'

test('BashError is a HarnessError with a stable code', () => {
  const error = new BashError('working directory "x" does not exist', { code: BashErrorCode.BASH_INVALID_WORKDIR })
  expect(error).toBeInstanceOf(HarnessError)
  expect(error.name).toBe('BashError')
  expect(error.code).toBe('BASH_INVALID_WORKDIR')
  expect(Object.values(BashErrorCode).every((code) => code.startsWith('BASH_'))).toBe(true)
})

test('the definition provides ctx.bash and is abstract', () => {
  expect(BashExecutor.provide).toBe('bash')
})
