import { afterEach, beforeEach, expect, test } from 'vitest'
import { fixture, type Fixture } from './helpers.ts'

let f: Fixture
const planted = [
  'DSH_SECRET_TEST_API_KEY',
  'dsh_test_token',
  'DSH_TEST_PASSWORD',
  'DSH_MANAGED',
  'DSH_TEST_PLAIN_A',
  'Dsh_Test_Secret',
]
beforeEach(async () => {
  f = await fixture()
  for (const name of planted) process.env[name] = `value of ${name}`
})
afterEach(async () => {
  for (const name of planted) delete process.env[name]
  await f.cleanup()
})

async function childEnvironment(env?: Record<string, string | undefined>): Promise<Map<string, string>> {
  const result = await f.run(['env', '-0'], env ? { env } : {})
  return new Map(
    result.stdout
      .split('\0')
      .filter(Boolean)
      .map((entry) => {
        const at = entry.indexOf('=')
        return [entry.slice(0, at), entry.slice(at + 1)]
      }),
  )
}

test('credential-looking names and DSH_* are scrubbed; PATH is kept', async () => {
  process.env.TEST_KEEP_ME = 'kept'
  process.env.GH_TOKEN_LIKE = 'x'
  process.env.my_api_key = 'x'
  process.env.DB_Password = 'x'
  process.env.CLIENT_SECRET = 'x'
  try {
    const env = await childEnvironment()
    expect(env.get('PATH')).toBe(process.env.PATH)
    expect(env.get('TEST_KEEP_ME')).toBe('kept')
    for (const name of [
      'GH_TOKEN_LIKE',
      'my_api_key',
      'DB_Password',
      'CLIENT_SECRET',
      'DSH_MANAGED',
      'DSH_TEST_PLAIN_A',
      'dsh_test_token',
    ]) {
      expect(env.has(name), name).toBe(false)
    }
  } finally {
    for (const name of ['TEST_KEEP_ME', 'GH_TOKEN_LIKE', 'my_api_key', 'DB_Password', 'CLIENT_SECRET'])
      delete process.env[name]
  }
})

test('an explicit entry wins, even for a scrubbed name', async () => {
  const env = await childEnvironment({ DSH_MANAGED: 'explicit', GITHUB_TOKEN: 'given on purpose', NEW_NAME: 'new' })
  expect(env.get('DSH_MANAGED')).toBe('explicit')
  expect(env.get('GITHUB_TOKEN')).toBe('given on purpose')
  expect(env.get('NEW_NAME')).toBe('new')
})

test('an explicit undefined removes a name', async () => {
  process.env.TEST_REMOVE_ME = 'present'
  try {
    expect((await childEnvironment()).get('TEST_REMOVE_ME')).toBe('present')
    expect((await childEnvironment({ TEST_REMOVE_ME: undefined })).has('TEST_REMOVE_ME')).toBe(false)
  } finally {
    delete process.env.TEST_REMOVE_ME
  }
})

test('a NUL byte or "=" in an env entry is an invalid request', async () => {
  await expect(f.spawn({ argv: ['true'], env: { A: 'x\0y' } })).rejects.toMatchObject({
    code: 'SUBPROCESS_INVALID_REQUEST',
    message: 'invalid subprocess request: env A must be a string without NUL bytes',
  })
  await expect(f.spawn({ argv: ['true'], env: { 'A=B': 'x' } })).rejects.toMatchObject({
    code: 'SUBPROCESS_INVALID_REQUEST',
    message: 'invalid subprocess request: env name "A=B" is not a valid variable name',
  })
})
