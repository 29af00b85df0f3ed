import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { createTestContext, type TestContext } from '@deepseek-ai/dsh-testing'
import { createSession, type SessionNotice, type ToolSession } from '@deepseek-ai/dsh-tools'

let t: TestContext
beforeEach(async () => {
  t = await createTestContext()
  t.ctx.tools.register({ name: 'echo', description: 'd', parameters: { type: 'object' }, execute: () => 'ok' })
  t.ctx.tools.register({
    name: 'fail',
    description: 'd',
    parameters: { type: 'object' },
    execute: () => {
      throw new Error('no')
    },
  })
})
afterEach(async () => {
  await t.dispose()
})

let s1: ToolSession
let s2: ToolSession
beforeEach(() => {
  s1 = createSession({ id: 's1', cwd: '/tmp' })
  s2 = createSession({ id: 's2', cwd: '/tmp' })
})
const text = async (name: string, session?: ToolSession) =>
  (await t.ctx.tools.execute(name, {}, session ? { session } : {})).content[0].text

describe('session notices', () => {
  test("a notice is emitted at once and appended once, after a blank line, to the session's next result", async () => {
    const seen: SessionNotice[] = []
    t.ctx.on('tools/session-notice', (notice) => void seen.push(notice))
    t.ctx.tools.notify({ session: s1, text: 'task bash-1 finished' })
    expect(seen).toEqual([{ session: s1, text: 'task bash-1 finished' }])
    expect(await text('echo', s1)).toBe('ok\n\ntask bash-1 finished')
    expect(await text('echo', s1)).toBe('ok')
  })

  test('another session, or a call without a session, never receives it', async () => {
    t.ctx.tools.notify({ session: s1, text: 'n' })
    expect(await text('echo', s2)).toBe('ok')
    expect(await text('echo')).toBe('ok')
    expect(await text('echo', s1)).toBe('ok\n\nn')
  })

  test('notices ride on error results too, one per line in arrival order', async () => {
    t.ctx.tools.notify({ session: s1, text: 'a' })
    t.ctx.tools.notify({ session: s1, text: 'b' })
    const result = await t.ctx.tools.execute('fail', {}, { session: s1 })
    expect(result.isError).toBe(true)
    expect(result.content[0].text).toBe('Error: no\n\na\nb')
  })

  test('a withdrawn notice is not appended', async () => {
    t.ctx.tools.notify({ session: s1, text: 'a', key: 'bash-1' })
    t.ctx.tools.notify({ session: s1, text: 'b', key: 'bash-2' })
    t.ctx.tools.withdrawNotice(s1, 'bash-1')
    expect(await text('echo', s1)).toBe('ok\n\nb')
  })

  test('the queue is bounded: past 20 the oldest are dropped and counted', async () => {
    for (let i = 1; i <= 23; i++) t.ctx.tools.notify({ session: s1, text: `n${i}` })
    const lines = (await text('echo', s1)).split('\n')
    expect(lines.slice(0, 3)).toEqual(['ok', '', '(3 earlier notices dropped)'])
    expect(lines.slice(3)).toEqual(Array.from({ length: 20 }, (_, i) => `n${i + 4}`))
  })

  test("within a tool's maxResultBytes only the notices that fit join its result; the rest wait, in order, for the next", async () => {
    // 'x' × 70 + "\n\n" leaves 28 bytes: "n1 …" (10 bytes) and "\n" + "n2 …" (11) fit, "n3" would not.
    t.ctx.tools.register({
      name: 'full',
      description: 'd',
      parameters: { type: 'object' },
      maxResultBytes: 100,
      execute: () => 'x'.repeat(70),
    })
    t.ctx.tools.register({
      name: 'brim',
      description: 'd',
      parameters: { type: 'object' },
      maxResultBytes: 100,
      execute: () => 'y'.repeat(100),
    })
    for (const n of [1, 2, 3]) t.ctx.tools.notify({ session: s1, text: `n${n} é done` })
    const first = await text('full', s1)
    expect(first).toBe(`${'x'.repeat(70)}\n\nn1 é done\nn2 é done`)
    expect(Buffer.byteLength(first)).toBeLessThanOrEqual(100)
    // A result already at its budget takes none; the notice is not lost.
    expect(await text('brim', s1)).toBe('y'.repeat(100))
    expect(await text('echo', s1)).toBe('ok\n\nn3 é done')
    expect(await text('echo', s1)).toBe('ok')
  })

  test('the count of dropped notices comes first and is said once, also when the notices after it must wait', async () => {
    t.ctx.tools.register({
      name: 'full',
      description: 'd',
      parameters: { type: 'object' },
      maxResultBytes: 60,
      execute: () => 'x'.repeat(20),
    })
    for (let i = 1; i <= 22; i++) t.ctx.tools.notify({ session: s1, text: `notice ${String(i).padStart(2, '0')}` })
    const first = await text('full', s1)
    expect(first).toBe(`${'x'.repeat(20)}\n\n(2 earlier notices dropped)\nnotice 03`)
    expect(Buffer.byteLength(first)).toBeLessThanOrEqual(60)
    const rest = (await text('echo', s1)).split('\n')
    expect(rest).toEqual([
      'ok',
      '',
      ...Array.from({ length: 19 }, (_, i) => `notice ${String(i + 4).padStart(2, '0')}`),
    ])
  })

  test('notices are appended before post-execute, so its listeners see (and may bound) the final text', async () => {
    const seen: string[] = []
    t.ctx.on('tools/post-execute', (call) => {
      seen.push(call.result.content[0].text)
      call.result = { ...call.result, content: [{ type: 'text', text: call.result.content[0].text.toUpperCase() }] }
    })
    t.ctx.tools.notify({ session: s1, text: 'task bash-1 finished' })
    expect(await text('echo', s1)).toBe('OK\n\nTASK BASH-1 FINISHED')
    expect(seen).toEqual(['ok\n\ntask bash-1 finished'])
    expect(await text('echo', s1)).toBe('OK')
  })

  test("dispose() drops the session's undelivered notices and awaits every clean-up it deferred", async () => {
    const ended: string[] = []
    s1.defer(async () => {
      await new Promise((resolve) => setImmediate(resolve))
      ended.push('s1')
    })
    t.ctx.tools.notify({ session: s1, text: 'n' })
    await s1.dispose()
    expect(ended).toEqual(['s1'])
    t.ctx.tools.notify({ session: s1, text: 'late' })
    expect(await text('echo', s1)).toBe('ok')
  })
})

describe('titles and annotations', () => {
  test("schemas() carries a tool's title and annotations when it has them, and omits them otherwise", () => {
    t.ctx.tools.register({
      name: 'look',
      title: 'Look around',
      description: 'd',
      parameters: { type: 'object' },
      annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
      execute: () => '',
    })
    const schemas = t.ctx.tools.schemas()
    expect(schemas.find((s) => s.name === 'look')).toEqual({
      name: 'look',
      title: 'Look around',
      description: 'd',
      parameters: { type: 'object' },
      annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
    })
    expect(Object.keys(schemas.find((s) => s.name === 'echo')!)).toEqual(['name', 'description', 'parameters'])
  })
})
