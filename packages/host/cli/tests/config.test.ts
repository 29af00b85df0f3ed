import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Schema from 'schemastery'
import { afterEach, describe, expect, test } from 'vitest'
import { CONFIG_KEYS, DshErrorCode, readConfigFile, resolveConfig } from '../src/index.ts'
import { unknownKey } from '../src/config.ts'

async function rejection(promise: Promise<unknown>): Promise<{ message: string; code: string }> {
  try {
    await promise
  } catch (error) {
    return { message: (error as Error).message, code: (error as { code: string }).code }
  }
  throw new Error('expected a rejection')
}

let dir: string | undefined
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true })
  dir = undefined
})

describe('--config', () => {
  test("the keys are the configurable plugins' short names, then the host's own mcp section", () => {
    expect(CONFIG_KEYS).toEqual([
      'tools',
      'timeout-policy',
      'subprocess-local',
      'tasks-local',
      'bash-local',
      'bash-sandbox',
      'tool-bash',
      'spill-local',
      'spill-policy',
      'workspace',
      'tool-fs',
      'tool-fs-search',
      'mcp',
    ])
  })

  test('the mcp section sets the HTTP server limits, with defaults; an unknown key or a zero is refused', async () => {
    const config = await resolveConfig({ mcp: { maxSessions: 2 } })
    expect(config.mcp).toEqual({ maxSessions: 2, sessionIdleMs: 1_800_000, headersTimeoutMs: 10_000 })
    await expect(resolveConfig({ mcp: { maxSesions: 2 } })).rejects.toMatchObject({
      code: DshErrorCode.DSH_CONFIG_INVALID,
      message: expect.stringContaining('unknown key "mcp.maxSesions"'),
    })
    await expect(resolveConfig({ mcp: { sessionIdleMs: 0 } })).rejects.toMatchObject({
      code: DshErrorCode.DSH_CONFIG_INVALID,
    })
  })

  test("a section gets its plugin's defaults; absent sections stay absent", async () => {
    const config = await resolveConfig({ 'tool-fs-search': { globMaxResults: 200 }, 'timeout-policy': {} })
    expect(config['tool-fs-search']).toMatchObject({ globMaxResults: 200, grepMaxMatches: 250, timeoutMs: 30_000 })
    expect(config['timeout-policy']).toEqual({ overrides: {} })
    expect(Object.keys(config).sort()).toEqual(['timeout-policy', 'tool-fs-search'])
  })

  test('an unknown top-level key is rejected, naming it and the known keys', async () => {
    expect(await rejection(resolveConfig({ 'tool-fs-serch': {} }))).toEqual({
      code: DshErrorCode.DSH_CONFIG_INVALID,
      message: `unknown key "tool-fs-serch" (known keys: ${CONFIG_KEYS.join(', ')})`,
    })
  })

  test('an unknown key inside a section is rejected, naming its full path and the keys known there', async () => {
    const { message, code } = await rejection(resolveConfig({ 'tool-fs-search': { globMaxResult: 5 } }))
    expect(code).toBe(DshErrorCode.DSH_CONFIG_INVALID)
    expect(message).toMatch(/^unknown key "tool-fs-search\.globMaxResult" \(known keys there: globMaxResults, .*\)$/)
  })

  test('an invalid value is rejected, naming its full path and what was expected', async () => {
    expect(await rejection(resolveConfig({ 'tool-fs-search': { globMaxResults: 0 } }))).toEqual({
      code: DshErrorCode.DSH_CONFIG_INVALID,
      message: 'invalid value at "tool-fs-search.globMaxResults": expected number >= 1 but got 0',
    })
    expect((await rejection(resolveConfig({ 'tool-fs-search': { rgPath: 7 } }))).message).toBe(
      'invalid value at "tool-fs-search.rgPath": expected string but got 7',
    )
    expect((await rejection(resolveConfig({ 'timeout-policy': { overrides: { glob: -1 } } }))).message).toBe(
      'invalid value at "timeout-policy.overrides.glob": expected number >= 0 but got -1',
    )
  })

  test('a dict section accepts any key of its own (tool names in timeout-policy overrides)', async () => {
    const config = await resolveConfig({ 'timeout-policy': { overrides: { glob: 5, anything_else: 0 } } })
    expect(config['timeout-policy']).toEqual({ overrides: { glob: 5, anything_else: 0 } })
  })

  test('a plugin without settings accepts only an empty section', async () => {
    expect(await resolveConfig({ tools: {} })).toEqual({ tools: {} })
    expect((await rejection(resolveConfig({ tools: { strict: true } }))).message).toBe(
      'unknown key "tools.strict" (plugin tools takes no settings)',
    )
  })

  test('the whole config and every section must be JSON objects', async () => {
    expect((await rejection(resolveConfig([]))).message).toBe(
      'the config must be a JSON object of plugin sections, e.g. {"tool-fs-search": {"globMaxResults": 200}}, got an array',
    )
    expect((await rejection(resolveConfig({ 'spill-policy': 5 }))).message).toBe(
      '"spill-policy" must be an object of that plugin\'s settings, got a number',
    )
    expect((await rejection(resolveConfig({ 'spill-policy': null }))).message).toBe(
      '"spill-policy" must be an object of that plugin\'s settings, got null',
    )
  })

  test('a missing file and a file that is not JSON are config errors naming the file', async () => {
    dir = await mkdtemp(join(tmpdir(), 'dsh-config-test-'))
    const missing = join(dir, 'nope.json')
    expect(await rejection(readConfigFile(missing))).toEqual({
      code: DshErrorCode.DSH_CONFIG_INVALID,
      message: `cannot read ${missing}: no such file`,
    })
    const broken = join(dir, 'broken.json')
    await writeFile(broken, '{ "tools": ')
    const { message } = await rejection(readConfigFile(broken))
    expect(message).toMatch(new RegExp(`^${broken.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is not valid JSON: `))
  })

  test('unknown keys are found in nested objects, intersections, dicts and arrays', () => {
    const schema = Schema.intersect([
      Schema.object({ a: Schema.object({ b: Schema.number() }) }),
      Schema.object({
        list: Schema.array(Schema.object({ x: Schema.string() })),
        map: Schema.dict(Schema.object({ y: Schema.number() })),
      }),
    ])
    expect(unknownKey(schema, { a: { b: 1 }, list: [{ x: 'v' }], map: { k: { y: 2 } } }, 'p')).toBeUndefined()
    expect(unknownKey(schema, { a: { c: 1 } }, 'p')).toEqual({ path: 'p.a.c', known: ['b'] })
    expect(unknownKey(schema, { list: [{ x: 'v' }, { z: 1 }] }, 'p')).toEqual({ path: 'p.list[1].z', known: ['x'] })
    expect(unknownKey(schema, { map: { k: { q: 1 } } }, 'p')).toEqual({ path: 'p.map.k.q', known: ['y'] })
    expect(unknownKey(schema, { other: 1 }, 'p')).toEqual({ path: 'p.other', known: ['a', 'list', 'map'] })
  })
})
