import fc from 'fast-check'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { createTestContext, type TestContext } from '@deepseek-ai/dsh-testing'

// Error texts are read by a model with a finite context: whatever the caller sends, the pipeline's own texts
// quote at most 200 characters of any name or property path, once, and list at most 10 problems.
let t: TestContext
beforeEach(async () => {
  t = await createTestContext()
})
afterEach(async () => {
  await t.dispose()
})

const BIG = 'x'.repeat(300_000)
const HEAD = 'x'.repeat(200)

function register(): void {
  t.ctx.tools.register({
    name: 'probe',
    description: 'd',
    parameters: {
      type: 'object',
      properties: {
        pattern: { type: 'string' },
        options: { type: 'object', properties: { depth: { type: 'integer' } }, additionalProperties: false },
      },
      required: ['pattern'],
      additionalProperties: false,
    },
    execute: () => 'ran',
  })
}

async function errorText(name: string, args: unknown): Promise<string> {
  const result = await t.ctx.tools.execute(name, args)
  expect(result.isError).toBe(true)
  return result.content[0].text
}

describe('error texts are bounded', () => {
  test('an unknown 300 000-character tool name is quoted by its first 200 characters and its length', async () => {
    register()
    const text = await errorText(BIG, {})
    expect(text).toBe(`Error: unknown tool "${HEAD}…" (300000 characters) (available: probe)`)
  })

  test('a 300 000-character unexpected property is quoted once, bounded', async () => {
    register()
    const text = await errorText('probe', { pattern: 'p', [BIG]: 1 })
    expect(text).toBe(`Error: invalid arguments: unexpected property "${HEAD}…" (300000 characters)`)
  })

  test('a huge key deep in the arguments is bounded in the property path too', async () => {
    register()
    expect(await errorText('probe', { pattern: 'p', options: { [BIG]: true } })).toBe(
      `Error: invalid arguments: property "options": unexpected property "${HEAD}…" (300000 characters)`,
    )
    expect(await errorText('probe', { pattern: 'p', [BIG]: Number.NaN })).toBe(
      `Error: invalid arguments: property "${HEAD}…" (300000 characters) must be a JSON value, got NaN`,
    )
  })

  test('a call with thousands of problems lists ten and counts the rest', async () => {
    register()
    const args: Record<string, number> = { pattern: 1 }
    for (let i = 0; i < 5000; i++) args[`extra${i}`] = i
    const text = await errorText('probe', args)
    const listed = text.replace('Error: invalid arguments: ', '').split('; ')
    expect(listed).toHaveLength(11)
    expect(listed[10]).toBe('and 4991 more problems')
  })

  test('a cut never ends inside a surrogate pair', async () => {
    register()
    const name = `${'a'.repeat(199)}${'😀'.repeat(10)}`
    const text = await errorText(name, {})
    expect(text).toBe(`Error: unknown tool "${'a'.repeat(199)}…" (${name.length} characters) (available: probe)`)
  })

  test('whatever the keys and values, an INVALID_ARGS text stays under 6 000 characters', async () => {
    register()
    const key = fc.oneof(fc.string(), fc.string({ minLength: 190, maxLength: 3000 }), fc.constant(BIG))
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(key, fc.oneof(fc.anything(), fc.constant(Number.NaN)), { maxKeys: 40 }),
        async (args) => {
          const result = await t.ctx.tools.execute('probe', { pattern: 3, ...args })
          expect(result.error?.code).toBe('INVALID_ARGS')
          expect(result.content[0].text.length).toBeLessThan(6000)
        },
      ),
      { numRuns: 200 },
    )
  })
})
