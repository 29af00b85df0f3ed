import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { createTestContext, type TestContext } from '@deepseek-ai/dsh-testing'
import type { ToolDefinition } from '@deepseek-ai/dsh-tools'

// docs/model-surface.md#tools: an argument name that another client uses for exactly one of ours is renamed to ours before
// validation, silently; a name the tool ignores is dropped; a name whose meaning differs gets an INVALID_ARGS text
// saying what to pass instead. Each tool declares its aliases; the pipeline applies and words them.
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
    properties: {
      path: { type: 'string' },
      pattern: { type: 'string' },
      options: { type: 'object', properties: {}, additionalProperties: false },
    },
    additionalProperties: false,
  },
  aliases: {
    file_path: 'path',
    filePath: 'path',
    '-n': { ignore: true },
    case_insensitive: { hint: 'start the pattern with (?i) for a case-insensitive search' },
  },
  execute: (args) => JSON.stringify(args),
}

async function errorOf(args: Record<string, unknown>): Promise<{ text: string; code: string | undefined }> {
  const result = await t.ctx.tools.execute('probe', args)
  expect(result.isError).toBe(true)
  return { text: result.content[0].text, code: result.error?.code }
}

async function ran(args: Record<string, unknown>): Promise<unknown> {
  const result = await t.ctx.tools.execute('probe', args)
  expect(result.isError).toBe(false)
  return JSON.parse(result.content[0].text)
}

describe('argument aliases', () => {
  test("another client's name for one of ours is taken as ours, silently", async () => {
    t.ctx.tools.register(PROBE)
    expect(await ran({ file_path: 'a.txt' })).toEqual({ path: 'a.txt' })
    expect(await ran({ filePath: 'a.txt', pattern: 'x' })).toEqual({ path: 'a.txt', pattern: 'x' })
  })

  test('an alias given with the same value as our name is taken once; with another value it is INVALID_ARGS', async () => {
    t.ctx.tools.register(PROBE)
    expect(await ran({ path: 'a.txt', file_path: 'a.txt' })).toEqual({ path: 'a.txt' })
    expect(await errorOf({ path: 'a.txt', file_path: 'b.txt' })).toEqual({
      text: 'Error: invalid arguments: "path" and "file_path" name the same argument but differ: pass only "path"',
      code: 'INVALID_ARGS',
    })
    expect((await errorOf({ file_path: 'a.txt', filePath: 'b.txt' })).text).toBe(
      'Error: invalid arguments: "file_path" and "filePath" name the same argument but differ: pass only "path"',
    )
    expect((await errorOf({ path: 'a', file_path: 'b', filePath: 'a' })).text).toBe(
      'Error: invalid arguments: "path", "file_path" and "filePath" name the same argument but differ: pass only "path"',
    )
  })

  test('a renamed argument that fails the schema is named as the caller passed it', async () => {
    t.ctx.tools.register(PROBE)
    expect((await errorOf({ file_path: 5 })).text).toBe(
      'Error: invalid arguments: property "path" (passed as "file_path") must be a string',
    )
  })

  test('an ignored name is dropped before the tool sees the arguments', async () => {
    t.ctx.tools.register(PROBE)
    expect(await ran({ pattern: 'x', '-n': true })).toEqual({ pattern: 'x' })
    expect(await ran({ pattern: 'x', '-n': false })).toEqual({ pattern: 'x' })
  })

  test("the caller's arguments object is never changed", async () => {
    t.ctx.tools.register(PROBE)
    const args = { file_path: 'a.txt', '-n': true }
    await ran(args)
    expect(args).toEqual({ file_path: 'a.txt', '-n': true })
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
    expect(() => t.ctx.tools.register({ ...PROBE, aliases: { pattern: { ignore: true } } })).toThrow(
      'tool "probe": alias "pattern" is one of the tool\'s own properties',
    )
  })
})
