import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { createTestContext, type TestContext } from '@deepseek-ai/dsh-testing'
import type { ToolDefinition } from '@deepseek-ai/dsh-tools'

// docs/model-surface.md#errors: an unknown argument that is another client's name for one of ours gets an INVALID_ARGS text naming
// what to pass instead. Each tool declares its aliases; the pipeline only words them.
let t: TestContext
beforeEach(async () => {
  t = await createTestContext()
})
afterEach(async () => {
  await t.dispose()
})

const PROBE: ToolDefinition = {
  name: 'probe',
  description: 'd',
  parameters: {
    type: 'object',
    properties: { path: { type: 'string' }, options: { type: 'object', properties: {}, additionalProperties: false } },
    additionalProperties: false,
  },
  aliases: {
    file_path: 'path',
    case_insensitive: { hint: 'start the pattern with (?i) for a case-insensitive search' },
  },
  execute: () => 'ran',
}

async function errorOf(args: Record<string, unknown>): Promise<{ text: string; code: string | undefined }> {
  const result = await t.ctx.tools.execute('probe', args)
  expect(result.isError).toBe(true)
  return { text: result.content[0].text, code: result.error?.code }
}

describe('argument aliases', () => {
  test("another client's name for one of ours names ours", async () => {
    t.ctx.tools.register(PROBE)
    expect(await errorOf({ file_path: 'a.txt' })).toEqual({
      text: 'Error: invalid arguments: unexpected property "file_path": pass "path" instead',
      code: 'INVALID_ARGS',
    })
  })

  test('a hint alias says what to do instead', async () => {
    t.ctx.tools.register(PROBE)
    expect(await errorOf({ path: 'a', case_insensitive: true })).toEqual({
      text: 'Error: invalid arguments: unexpected property "case_insensitive": start the pattern with (?i) for a case-insensitive search',
      code: 'INVALID_ARGS',
    })
  })

  test('an unknown name that is no alias, an alias nested below the top level, and an inherited name get the plain text', async () => {
    t.ctx.tools.register(PROBE)
    expect((await errorOf({ limt: 3 })).text).toBe('Error: invalid arguments: unexpected property "limt"')
    expect((await errorOf({ options: { file_path: 'x' } })).text).toBe(
      'Error: invalid arguments: property "options": unexpected property "file_path"',
    )
    expect((await errorOf({ toString: 'x' })).text).toBe('Error: invalid arguments: unexpected property "toString"')
  })

  test('a tool without aliases words an unknown name as before', async () => {
    const { aliases: _, ...plain } = PROBE
    t.ctx.tools.register(plain)
    expect((await errorOf({ file_path: 'a.txt' })).text).toBe(
      'Error: invalid arguments: unexpected property "file_path"',
    )
  })

  test('aliases that could never apply, or point at no property, are refused at registration', () => {
    expect(() => t.ctx.tools.register({ ...PROBE, aliases: { path: 'options' } })).toThrow(
      'tool "probe": alias "path" is one of the tool\'s own properties',
    )
    expect(() => t.ctx.tools.register({ ...PROBE, aliases: { file_path: 'file' } })).toThrow(
      'tool "probe": alias "file_path" names "file", which is not a property of the tool',
    )
  })
})
