import { afterEach, beforeEach, expect, test } from 'vitest'
import { createTestContext, type TestContext } from '@deepseek-ai/dsh-testing'
import { SystemPromptService } from '@deepseek-ai/dsh-system-prompt'

let t: TestContext
beforeEach(async () => {
  t = await createTestContext({ withTools: false })
  await t.ctx.plugin(SystemPromptService)
})
afterEach(async () => {
  await t.dispose()
})

test('assemble() joins sections by ascending order with a blank line between them', () => {
  t.ctx.systemPrompt.register({ id: 'tool:grep', order: 104, text: 'Use grep.' })
  t.ctx.systemPrompt.register({ id: 'tool:read', order: 100, text: 'Use read.\n' })
  t.ctx.systemPrompt.register({ id: 'tool:bash', order: 105, text: 'Use bash.' })
  expect(t.ctx.systemPrompt.assemble()).toBe('Use read.\n\nUse grep.\n\nUse bash.')
})

test('sections of equal order are ordered by id, so load order never changes the text', () => {
  t.ctx.systemPrompt.register({ id: 'b', order: 1, text: 'B' })
  t.ctx.systemPrompt.register({ id: 'a', order: 1, text: 'A' })
  expect(t.ctx.systemPrompt.assemble()).toBe('A\n\nB')
})

test('a duplicate id is rejected', () => {
  t.ctx.systemPrompt.register({ id: 'x', order: 1, text: 'one' })
  expect(() => t.ctx.systemPrompt.register({ id: 'x', order: 2, text: 'two' })).toThrow(
    'a prompt section with id "x" is already registered',
  )
})

test('a section registered by a plugin is gone after that plugin is disposed', async () => {
  t.ctx.systemPrompt.register({ id: 'base', order: 0, text: 'Base.' })
  const fiber = t.ctx.plugin({
    name: 'tool-x',
    inject: ['systemPrompt'],
    apply: (ctx) => {
      ctx.systemPrompt.register({ id: 'tool:x', order: 110, text: 'X.' })
    },
  })
  await t.active(fiber)
  expect(t.ctx.systemPrompt.assemble()).toBe('Base.\n\nX.')
  await fiber.dispose()
  expect(t.ctx.systemPrompt.assemble()).toBe('Base.')
})

test('an empty prompt assembles to the empty string', () => {
  expect(t.ctx.systemPrompt.assemble()).toBe('')
})
