import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, expect, test } from 'vitest'
import type { Context } from 'cordis'
import { createTestContext, type TestContext, sessionFor } from '@deepseek-ai/dsh-testing'
import { HarnessError, type ToolResult } from '@deepseek-ai/dsh-tools'
import { SpillError, SpillStore, type SavedText, type SaveTextRequest } from '@deepseek-ai/dsh-spill'
import LocalSpillStore from '@deepseek-ai/dsh-spill-local'
import TimeoutPolicy from '@deepseek-ai/dsh-timeout-policy'
import SpillPolicy, { Config } from '@deepseek-ai/dsh-spill-policy'

let t: TestContext
let dir: string
const session = sessionFor('session-1', '/')
const big = `${Array.from({ length: 500 }, (_, i) => `row ${i + 1}: ${'é'.repeat(i % 7)}\r`).join('\n')}\n`

beforeEach(async () => {
  t = await createTestContext()
  dir = await mkdtemp(join(tmpdir(), 'spill-policy-'))
})
afterEach(async () => {
  await t.dispose()
  await rm(dir, { recursive: true, force: true })
})

function echo(name = 'echo'): void {
  t.ctx.tools.register({
    name,
    description: 'returns its text',
    parameters: { type: 'object', properties: { text: { type: 'string' } } },
    execute: (args: Record<string, unknown>) => ({ text: String(args.text), value: { kept: true } }),
  })
}

async function withPolicy(config: Partial<Config>, store: 'local' | 'none' = 'local'): Promise<void> {
  if (store === 'local') await t.active(t.ctx.plugin(LocalSpillStore, { root: join(dir, 'root') }))
  await t.active(t.ctx.plugin(SpillPolicy, config))
}

const text = (result: ToolResult) => result.content[0].text
const NOTICE =
  /\n\[Output too long: lines (\d+)-(\d+) of (\d+) are cut here\. The complete output \((\d+) bytes\) is saved at (\S+)\. Page through it with read \(offset and limit\) or search it with grep, passing that path\.\]\n/

test('an oversized text result becomes head + notice + tail within the cap, and the file holds the original byte for byte', async () => {
  await withPolicy({ maxInlineBytes: 1000 })
  echo()
  const result = await t.ctx.tools.execute('echo', { text: big }, { session, callId: 'c-1' })
  expect(result.isError).toBe(false)
  expect(result.value).toEqual({ kept: true })
  expect(Buffer.byteLength(text(result))).toBeLessThanOrEqual(1000)
  const match = NOTICE.exec(text(result))
  expect(match).not.toBeNull()
  const [, , , total, bytes, locator] = match!
  expect(Number(total)).toBe(500)
  expect(Number(bytes)).toBe(Buffer.byteLength(big))
  expect(locator).toBe(join(dir, 'root', session.dirName, 'c-1-echo-output.txt'))
  expect(await readFile(locator!)).toEqual(Buffer.from(big, 'utf8'))
  expect(text(result).startsWith('row 1: \r\nrow 2: é\r\n')).toBe(true)
  expect(text(result).endsWith('row 499: é\r\nrow 500: éé\r\n')).toBe(true)
})

test('the policy is off without maxInlineBytes', async () => {
  await withPolicy({})
  echo()
  const result = await t.ctx.tools.execute('echo', { text: big }, { session })
  expect(text(result)).toBe(big)
  expect(await readdir(dir)).toEqual([])
})

test('a result that fits exactly is left alone', async () => {
  const fits = `${'x'.repeat(999)}é` // 1001 bytes
  await withPolicy({ maxInlineBytes: Buffer.byteLength(fits) })
  echo()
  expect(text(await t.ctx.tools.execute('echo', { text: fits }, { session }))).toBe(fits)
  expect(await readdir(dir)).toEqual([])
})

test('error results are left alone, also a timeout from the timeout policy that runs first', async () => {
  await t.active(t.ctx.plugin(TimeoutPolicy, { overrides: {} }))
  await withPolicy({ maxInlineBytes: 100 })
  t.ctx.tools.register({
    name: 'fails',
    description: 'd',
    parameters: { type: 'object' },
    execute: () => {
      throw new HarnessError('x'.repeat(5000), { code: 'SOME_CODE' })
    },
  })
  t.ctx.tools.register({
    name: 'slow',
    description: 'd',
    parameters: { type: 'object' },
    timeoutMs: 5,
    execute: (_args, exec) =>
      new Promise((resolve) => exec.signal.addEventListener('abort', () => resolve(big), { once: true })),
  })
  const failed = await t.ctx.tools.execute('fails', {}, { session })
  expect(failed).toMatchObject({ isError: true, error: { code: 'SOME_CODE' } })
  expect(text(failed)).toBe(`Error: ${'x'.repeat(5000)}`)
  const slow = await t.ctx.tools.execute('slow', {}, { session })
  expect(slow).toMatchObject({ isError: true, error: { code: 'TOOL_TIMEOUT' } })
  expect(await readdir(dir)).toEqual([])
})

test('read is excluded by default, and exclude names other tools', async () => {
  await withPolicy({ maxInlineBytes: 400, exclude: ['read', 'grep'] })
  echo('read')
  echo('grep')
  echo('glob')
  expect(text(await t.ctx.tools.execute('read', { text: big }, { session }))).toBe(big)
  expect(text(await t.ctx.tools.execute('grep', { text: big }, { session }))).toBe(big)
  expect(text(await t.ctx.tools.execute('glob', { text: big }, { session }))).toMatch(NOTICE)
})

test('the default exclude is read', () => {
  expect(Config({ maxInlineBytes: 10 })).toEqual({ maxInlineBytes: 10, headRatio: 0.5, exclude: ['read'] })
  expect(Config({})).toEqual({ headRatio: 0.5, exclude: ['read'] })
  expect(() => Config({ maxInlineBytes: 0 })).toThrow()
  expect(() => Config({ maxInlineBytes: 1.5 })).toThrow()
  expect(() => Config({ headRatio: 2 })).toThrow()
})

test('without a spill store the result is kept unchanged, and nothing is reported as a problem', async () => {
  await withPolicy({ maxInlineBytes: 100 }, 'none')
  echo()
  const result = await t.ctx.tools.execute('echo', { text: big }, { session })
  expect(result).toEqual({ content: [{ type: 'text', text: big }], isError: false, value: { kept: true } })
})

test('without a session the result is kept unchanged', async () => {
  await withPolicy({ maxInlineBytes: 100 })
  echo()
  const result = await t.ctx.tools.execute('echo', { text: big })
  expect(text(result)).toBe(big)
  expect(result.isError).toBe(false)
  expect(await readdir(dir)).toEqual([])
})

/** A store whose every save fails: the fault is forced. */
class FailingStore extends SpillStore {
  calls = 0
  async saveText(): Promise<SavedText> {
    this.calls++
    throw new SpillError('disk full', { code: 'SPILL_WRITE_FAILED' })
  }
}

test('a failed save (forced by a failing store) keeps the original and never makes the call an error', async () => {
  await t.active(t.ctx.plugin(FailingStore))
  await withPolicy({ maxInlineBytes: 100 }, 'none')
  echo()
  const result = await t.ctx.tools.execute('echo', { text: big }, { session })
  expect(result).toEqual({ content: [{ type: 'text', text: big }], isError: false, value: { kept: true } })
  expect((t.ctx.spillStore as FailingStore).calls).toBe(1)
})

/** A second provider, in memory: the policy works with any store (the seam). */
class MemoryStore extends SpillStore {
  readonly saved: SaveTextRequest[] = []
  constructor(ctx: Context) {
    super(ctx)
  }
  async saveText(request: SaveTextRequest): Promise<SavedText> {
    this.saved.push(request)
    return {
      locator: `mem://${this.saved.length}`,
      bytes: Buffer.byteLength(request.content),
      retrievalHint: 'Ask for it.',
    }
  }
}

test('any spill store provider serves the policy: the request names the session, tool and call', async () => {
  await t.active(t.ctx.plugin(MemoryStore))
  await withPolicy({ maxInlineBytes: 400 }, 'none')
  echo()
  const result = await t.ctx.tools.execute('echo', { text: big }, { session, callId: 'c-9' })
  expect(text(result)).toMatch(
    /\n\[Output too long: lines \d+-\d+ of 500 are cut here\. The complete output \(\d+ bytes\) is saved at mem:\/\/1\. Ask for it\.\]\n/,
  )
  const store = t.ctx.spillStore as MemoryStore
  expect(store.saved).toEqual([
    {
      owner: session,
      source: { toolName: 'echo', callId: 'c-9' },
      suggestedName: 'echo-output.txt',
      content: big,
    },
  ])
})

test('the policy is gone with its plugin', async () => {
  await t.active(t.ctx.plugin(LocalSpillStore, { root: join(dir, 'root') }))
  const fiber = t.ctx.plugin(SpillPolicy, { maxInlineBytes: 100 })
  await t.active(fiber)
  echo()
  await fiber.dispose()
  expect(text(await t.ctx.tools.execute('echo', { text: big }, { session }))).toBe(big)
})
