import { afterEach, beforeEach, expect, test } from 'vitest'
import { createTestContext, type TestContext } from '@deepseek-ai/dsh-testing'
import type { ToolDefinition } from '@deepseek-ai/dsh-tools'
import TimeoutPolicy from '@deepseek-ai/dsh-timeout-policy'

let t: TestContext
beforeEach(async () => {
  t = await createTestContext()
  await t.active(t.ctx.plugin(TimeoutPolicy, { overrides: { overridden: 5 } }))
})
afterEach(async () => {
  await t.dispose()
})

/**
 * A cooperative tool: it works until its signal aborts, then takes one more turn to wind down and records that it
 * finished. `finished` proves the pipeline awaited it rather than racing it.
 */
function cooperative(
  name: string,
  timeoutMs?: number,
): ToolDefinition & { finished: boolean; sawSignal?: AbortSignal } {
  const tool: ToolDefinition & { finished: boolean; sawSignal?: AbortSignal } = {
    name,
    description: 'waits for its signal',
    parameters: { type: 'object' },
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    finished: false,
    execute: (_args, exec) => {
      tool.sawSignal = exec.signal
      return new Promise((resolve) => {
        exec.signal.addEventListener(
          'abort',
          () =>
            setImmediate(() => {
              tool.finished = true
              resolve('stopped')
            }),
          { once: true },
        )
      })
    },
  }
  return tool
}

test('when the budget fires first, TOOL_TIMEOUT replaces the result after the tool has finished', async () => {
  const tool = cooperative('slow', 20)
  t.ctx.tools.register(tool)
  const result = await t.ctx.tools.execute('slow', {})
  expect(tool.finished).toBe(true)
  expect(result).toEqual({
    content: [{ type: 'text', text: 'Error: tool call timed out after 20ms' }],
    isError: true,
    error: { message: 'tool call timed out after 20ms', name: 'HarnessError', code: 'TOOL_TIMEOUT' },
  })
})

test('when the caller aborts first, the abort is kept, not turned into a timeout', async () => {
  const controller = new AbortController()
  t.ctx.tools.register({
    name: 'abortable',
    description: 'd',
    parameters: { type: 'object' },
    timeoutMs: 60_000,
    execute: (_args, exec) =>
      new Promise((_resolve, reject) => {
        exec.signal.addEventListener('abort', () => reject(new Error('cancelled')), { once: true })
        controller.abort()
      }),
  })
  const result = await t.ctx.tools.execute('abortable', {}, { signal: controller.signal })
  expect(result.error?.code).toBe('ABORTED')
})

test("a tool without timeoutMs gets the caller's own signal and an untouched result", async () => {
  const controller = new AbortController()
  let seen: AbortSignal | undefined
  t.ctx.tools.register({
    name: 'plain',
    description: 'd',
    parameters: { type: 'object' },
    execute: (_a, exec) => {
      seen = exec.signal
      return 'done'
    },
  })
  const result = await t.ctx.tools.execute('plain', {}, { signal: controller.signal })
  expect(seen).toBe(controller.signal)
  expect(result).toEqual({ content: [{ type: 'text', text: 'done' }], isError: false })
})

test('a tool that finishes within its budget keeps its result', async () => {
  t.ctx.tools.register({
    name: 'quick',
    description: 'd',
    parameters: { type: 'object' },
    timeoutMs: 60_000,
    execute: () => 'fast',
  })
  expect((await t.ctx.tools.execute('quick', {})).content[0].text).toBe('fast')
})

test("a configured override replaces the tool's own budget", async () => {
  const tool = cooperative('overridden', 60_000)
  t.ctx.tools.register(tool)
  expect((await t.ctx.tools.execute('overridden', {})).content[0].text).toBe('Error: tool call timed out after 5ms')
})

test('the tool sees the budget its signal enforces as exec.budgetMs: its own timeoutMs, an override, none without a budget', async () => {
  const budgets: Record<string, number | undefined> = {}
  const recording = (name: string, timeoutMs?: number): ToolDefinition => ({
    name,
    description: 'd',
    parameters: { type: 'object' },
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    execute: (_args, exec) => {
      budgets[name] = exec.budgetMs
      return 'x'
    },
  })
  for (const tool of [recording('own', 60_000), recording('overridden', 60_000), recording('unbudgeted')])
    t.ctx.tools.register(tool)
  for (const name of ['own', 'overridden', 'unbudgeted']) await t.ctx.tools.execute(name, {})
  expect(budgets).toEqual({ own: 60_000, overridden: 5, unbudgeted: undefined })
})

test('the policy is gone with its plugin: a disposed policy budgets nothing', async () => {
  const local = await createTestContext()
  try {
    const fiber = local.ctx.plugin(TimeoutPolicy, { overrides: {} })
    await local.active(fiber)
    await fiber.dispose()
    let seen: AbortSignal | undefined
    local.ctx.tools.register({
      name: 'q',
      description: 'd',
      parameters: { type: 'object' },
      timeoutMs: 1,
      execute: (_a, exec) => {
        seen = exec.signal
        return 'x'
      },
    })
    const controller = new AbortController()
    await local.ctx.tools.execute('q', {}, { signal: controller.signal })
    expect(seen).toBe(controller.signal)
  } finally {
    await local.dispose()
  }
})
