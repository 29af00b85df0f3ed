import { sessionFor } from '@deepseek-ai/dsh-testing'
import { afterAll, beforeAll, expect, test } from 'vitest'
import {
  assertWellFormed,
  host,
  openFds,
  peakRssMiB,
  processesWith,
  temp,
  textOf,
  uniqueSleep,
  until,
  type Temp,
} from './helpers.ts'

let ws: Temp
beforeAll(() => {
  const files: Record<string, string> = {}
  for (let i = 0; i < 20; i++) files[`src/f${i}.ts`] = `export const v${i} = ${i} // TODO ${i}\n`
  files['notes.txt'] = Array.from({ length: 100 }, (_, i) => `line ${i + 1}`).join('\n')
  ws = temp('load', files)
})
afterAll(() => ws?.cleanup())

const CYCLES = 200

test(`${CYCLES} timeout / abort / dispose cycles leave zero orphans`, async () => {
  // Every sleep of every cycle shares one marker: a single /proc scan per cycle finds any survivor.
  const { command, marker } = uniqueSleep()
  const config = { 'bash-local': { graceMs: 200 } }
  let dsh = await host(config)
  const session = sessionFor('load', ws.dir)
  const counts = { timeout: 0, abort: 0, dispose: 0 }
  try {
    for (let cycle = 0; cycle < CYCLES; cycle++) {
      const kind = (['timeout', 'abort', 'dispose'] as const)[cycle % 3]!
      if (kind === 'timeout') {
        const result = await dsh.ctx.tools.execute(
          'bash',
          { command, description: 'timeout', timeoutMs: 1 },
          { session },
        )
        expect(textOf(result)).toContain('[timed out after 1ms]')
      } else if (kind === 'abort') {
        const controller = new AbortController()
        const pending = dsh.ctx.tools.execute(
          'bash',
          { command, description: 'abort' },
          { session, signal: controller.signal },
        )
        await until(() => processesWith(marker).length > 0, 'the sleep started', 5000)
        controller.abort()
        expect((await pending).error?.code).toBe('ABORTED')
      } else {
        const bg = await dsh.ctx.tools.execute(
          'bash',
          { command, description: 'bg', run_in_background: true },
          { session },
        )
        expect(bg.isError).toBe(false)
        const fg = dsh.ctx.tools.execute('bash', { command, description: 'fg' }, { session })
        await until(() => processesWith(marker).length === 2, 'both sleeps started', 5000)
        await dsh.dispose()
        assertWellFormed(await fg)
        expect(dsh.problems).toEqual([])
        dsh = await host(config)
      }
      counts[kind]++
      expect(processesWith(marker), `cycle ${cycle} (${kind})`).toEqual([])
    }
  } finally {
    await dsh.dispose()
  }
  expect(counts).toEqual({ timeout: 67, abort: 67, dispose: 66 })
  expect(processesWith(marker)).toEqual([])
  expect(dsh.problems).toEqual([])
}, 120_000)

test('500 tool calls of every kind leak no file descriptor', async () => {
  const dsh = await host({ 'spill-policy': { maxInlineBytes: 2000 }, 'tool-fs-search': { globMaxResults: 5 } })
  const session = sessionFor('fds', ws.dir)
  const { command: sleep, marker } = uniqueSleep()
  const kinds: (() => Promise<void>)[] = [
    async () => {
      expect((await dsh.ctx.tools.execute('glob', { pattern: '**/*.ts' }, { session })).isError).toBe(false)
    },
    async () => {
      expect((await dsh.ctx.tools.execute('grep', { pattern: 'TODO \\d+' }, { session })).isError).toBe(false)
    },
    async () => {
      expect(
        (await dsh.ctx.tools.execute('read', { path: 'notes.txt', offset: 5, limit: 10 }, { session })).isError,
      ).toBe(false)
    },
    async () => {
      expect((await dsh.ctx.tools.execute('read', { path: 'missing.txt' }, { session })).error?.code).toBe(
        'FS_NOT_FOUND',
      )
    },
    async () => {
      expect(
        textOf(
          await dsh.ctx.tools.execute(
            'bash',
            { command: 'echo out; echo err >&2; exit 3', description: 'x' },
            { session },
          ),
        ),
      ).toContain('[exit code: 3]')
    },
    // Over the inline cap: the spill policy writes a file (and must close it).
    async () => {
      expect(
        textOf(await dsh.ctx.tools.execute('bash', { command: 'seq 1 5000', description: 'spill' }, { session })),
      ).toContain('5000')
    },
    async () => {
      expect(
        textOf(await dsh.ctx.tools.execute('bash', { command: sleep, description: 't', timeoutMs: 1 }, { session })),
      ).toContain('[timed out')
    },
    async () => {
      const started = textOf(
        await dsh.ctx.tools.execute(
          'bash',
          { command: sleep, description: 'bg', run_in_background: true },
          { session },
        ),
      )
      const id = /bash-\d+/.exec(started)![0]
      await dsh.ctx.tools.execute('bash_output', { task_id: id }, { session })
      expect(textOf(await dsh.ctx.tools.execute('bash_kill', { task_id: id }, { session }))).toBe(
        `killed background task ${id}`,
      )
    },
    async () => {
      expect((await dsh.ctx.tools.execute('grep', { pattern: '(' }, { session })).error?.code).toBe(
        'SEARCH_INVALID_PATTERN',
      )
    },
    async () => {
      expect((await dsh.ctx.tools.execute('glob', { pattern: '*', path: 'nope' }, { session })).error?.code).toBe(
        'SEARCH_FAILED',
      )
    },
  ]
  try {
    // Warm up: Node opens some descriptors lazily (the signal pipe of the first child, the spill directory, …).
    for (const kind of kinds) await kind()
    await new Promise((done) => setImmediate(done))
    const before = openFds()
    let calls = 0
    for (let round = 0; round < 50; round++) {
      await Promise.all(kinds.map((kind) => kind()))
      calls += kinds.length
    }
    expect(calls).toBe(500)
    // Pipes close a turn after their streams end: wait (bounded) for the count to settle back.
    await until(() => openFds().length <= before.length, 'open descriptors settle back', 250)
    expect(openFds().length, `before:\n${before.join('\n')}\nafter:\n${openFds().join('\n')}`).toBeLessThanOrEqual(
      before.length,
    )
    expect(processesWith(marker)).toEqual([])
  } finally {
    await dsh.dispose()
  }
  expect(dsh.problems).toEqual([])
}, 120_000)

test('a 1 GiB output bomb through bash: a bounded, truncated result and no survivor', async () => {
  const dsh = await host()
  const { command: sleep, marker } = uniqueSleep()
  try {
    const peakBefore = peakRssMiB()
    // The sleep in the background of the same group must die with it.
    const result = await dsh.ctx.tools.execute(
      'bash',
      { command: `(${sleep}) & head -c 1073741824 /dev/zero ; kill $!`, description: 'bomb' },
      { session: sessionFor('bomb', ws.dir) },
    )
    const peakAfter = peakRssMiB()
    expect(result.isError).toBe(false)
    const text = textOf(result)
    expect(text).toContain('[output cut: ')
    expect(text).toContain('1073741824 bytes')
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(30_000)
    console.log(`1 GiB bomb: peak RSS ${peakBefore.toFixed(1)} MiB → ${peakAfter.toFixed(1)} MiB`)
    // The tail is 64 000 bytes: growth is Node's read buffers awaiting collection, never the stream itself.
    expect(peakAfter - peakBefore).toBeLessThan(256)
    await until(() => processesWith(marker).length === 0, 'the background sleep is gone')
  } finally {
    await dsh.dispose()
  }
  expect(processesWith(marker)).toEqual([])
  expect(dsh.problems).toEqual([])
}, 120_000)
