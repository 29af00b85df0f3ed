import { afterEach, beforeEach, expect, test } from 'vitest'
import { createTestContext, type TestContext } from '@deepseek-ai/dsh-testing'

// An argument that takes one of several shapes (bash's command: a string or an argv array) is refused in the words
// of the shape the value has, or in one text naming every shape: never in one text per branch of the union.
let t: TestContext
beforeEach(async () => {
  t = await createTestContext()
  t.ctx.tools.register({
    name: 'probe',
    description: 'd',
    parameters: {
      type: 'object',
      properties: {
        command: {
          anyOf: [
            { type: 'string', minLength: 1 },
            { type: 'array', items: { type: 'string' }, minItems: 1 },
          ],
        },
        either: { anyOf: [{ type: 'integer' }, { type: 'array' }] },
      },
      additionalProperties: false,
    },
    execute: () => 'ran',
  })
})
afterEach(async () => {
  await t.dispose()
})

const text = async (args: Record<string, unknown>) => (await t.ctx.tools.execute('probe', args)).content[0].text

test("a value of no branch's type is one problem naming every branch", async () => {
  const both = 'property "command" must be a non-empty string or a non-empty array of strings'
  expect(await text({ command: 3 })).toBe(`Error: invalid arguments: ${both}`)
  expect(await text({ command: { argv: [] } })).toBe(`Error: invalid arguments: ${both}`)
  expect(await text({ either: 'x' })).toBe('Error: invalid arguments: property "either" must be an integer or an array')
})

test("a value of one branch's type gets that branch's problems, as if it were the only one", async () => {
  expect(await text({ command: '' })).toBe(
    'Error: invalid arguments: property "command" must not be shorter than 1 characters',
  )
  expect(await text({ command: [] })).toBe(
    'Error: invalid arguments: property "command" must not have fewer than 1 items',
  )
  expect(await text({ command: ['ls', 1] })).toBe('Error: invalid arguments: property "command.1" must be a string')
  expect(await text({ command: ['ls'], either: [1] })).toBe('ran')
})
