import { sessionFor } from '@deepseek-ai/dsh-testing'
import type { Message } from 'cordis'
import { afterEach, expect, test } from 'vitest'
import { createTestContext, type TestContext } from '@deepseek-ai/dsh-testing'
import LocalSubprocess from '@deepseek-ai/dsh-subprocess-local'
import { CHILD_ENV, Config } from '../src/index.ts'
import { fixture, LocalBashExecutor, type Fixture } from './helpers.ts'

let f: Fixture | undefined
afterEach(async () => {
  await f?.cleanup()
  f = undefined
})

test('the config defaults are the documented ones', () => {
  expect(Config({})).toEqual({
    timeoutMs: 120_000,
    maxTimeoutMs: 600_000,
    maxOutputBytes: 64_000,
    spillMaxBytes: 67_108_864,
    graceMs: 3000,
    shell: 'bash',
  })
})

test('an invalid config value is rejected, naming the key', () => {
  expect(() => Config({ timeoutMs: 0 })).toThrow(/timeoutMs/)
  expect(() => Config({ maxOutputBytes: 1.5 })).toThrow(/maxOutputBytes/)
  expect(() => Config({ shell: '' })).toThrow(/shell/)
  expect(() => Config({ graceMs: -1 })).toThrow(/graceMs/)
})

test('loading with an invalid config fails and the logged error names the key', async () => {
  let t: TestContext | undefined = await createTestContext({ withTools: false })
  try {
    await t.ctx.plugin(LocalSubprocess)
    const fiber = t.ctx.plugin(LocalBashExecutor, { maxTimeoutMs: -5 } as never)
    await expect(t.active(fiber)).rejects.toThrow(/LocalBashExecutor/)
    const logged = t.problems.map((m) => m.args.map(String).join(' ')).join('\n')
    expect(logged).toMatch(/maxTimeoutMs/)
    expect(t.ctx.get('bash')).toBeUndefined()
    ;(t.problems as Message[]).length = 0
    await t.dispose()
    t = undefined
  } finally {
    await t?.ctx.fiber.dispose()
  }
})

test('resolve applies the defaults: timeout, workdir = the process cwd, the child env additions', async () => {
  f = await fixture()
  const spec = f.t.ctx.bash.resolve({ command: 'true' })
  expect(spec).toEqual({
    command: 'true',
    workdir: process.cwd(),
    timeoutMs: 120_000,
    backgroundAfterMs: undefined,
    signal: undefined,
    owner: undefined,
    stdin: undefined,
    interactive: false,
    env: CHILD_ENV,
  })
  expect(CHILD_ENV).toEqual({
    NO_COLOR: '1',
    TERM: 'dumb',
    PAGER: 'cat',
    GIT_PAGER: 'cat',
    GIT_TERMINAL_PROMPT: '0',
    DEBIAN_FRONTEND: 'noninteractive',
    GIT_EDITOR: 'true',
    EDITOR: 'true',
    PYTHONUNBUFFERED: '1',
    SHLVL: '1',
    SSH_CLIENT: undefined,
    SSH_CONNECTION: undefined,
    SSH2_CLIENT: undefined,
  })
})

test('resolve clamps a timeout over the maximum, keeps one within, and raises one below 1', async () => {
  f = await fixture({ timeoutMs: 1000, maxTimeoutMs: 5000 })
  const { bash } = f.t.ctx
  expect(bash.resolve({ command: 'x', timeoutMs: 10_000_000 }).timeoutMs).toBe(5000)
  expect(bash.resolve({ command: 'x', timeoutMs: 4999 }).timeoutMs).toBe(4999)
  expect(bash.resolve({ command: 'x', timeoutMs: 0 }).timeoutMs).toBe(1)
  expect(bash.resolve({ command: 'x' }).timeoutMs).toBe(1000)
})

test('resolve keeps backgroundAfterMs only for a request without timeoutMs: an explicit timeout kills', async () => {
  f = await fixture()
  expect(f.t.ctx.bash.resolve({ command: 'x', backgroundAfterMs: 2000 }).backgroundAfterMs).toBe(2000)
  expect(
    f.t.ctx.bash.resolve({ command: 'x', backgroundAfterMs: 2000, timeoutMs: 5000 }).backgroundAfterMs,
  ).toBeUndefined()
})

test('a default timeout above the maximum is lowered to it', async () => {
  f = await fixture({ timeoutMs: 9000, maxTimeoutMs: 5000 })
  expect(f.t.ctx.bash.resolve({ command: 'x' }).timeoutMs).toBe(5000)
})

test('resolve makes a relative workdir absolute, keeps the session and lets request env win', async () => {
  f = await fixture()
  const signal = new AbortController().signal
  const session = sessionFor(' odd owner\n✓ ', process.cwd())
  const spec = f.t.ctx.bash.resolve({
    command: 'x',
    workdir: 'sub/dir',
    session,
    stdin: 'data',
    signal,
    env: { TERM: undefined, A: 'b' },
  })
  expect(spec.workdir).toBe(`${process.cwd()}/sub/dir`)
  expect(spec.session).toBe(session)
  expect(spec.stdin).toBe('data')
  expect(spec.signal).toBe(signal)
  expect(spec.env).toEqual({ ...CHILD_ENV, TERM: undefined, A: 'b' })
})
