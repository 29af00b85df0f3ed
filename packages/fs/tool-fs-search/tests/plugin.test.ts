import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, expect, test } from 'vitest'
import { createTestContext, type TestContext } from '@deepseek-ai/dsh-testing'
import { SystemPromptService } from '@deepseek-ai/dsh-system-prompt'
import FsSearch, { Config } from '../src/index.ts'
import { GLOB_PROMPT, GlobParameters, globDescription } from '../src/glob-text.ts'
import { GREP_PROMPT, GrepParameters, grepDescription } from '../src/grep-text.ts'
import { Subprocess } from './helpers.ts'

let t: TestContext
afterEach(async () => {
  await t?.dispose()
})

async function load(config: Partial<Config> = {}): Promise<void> {
  t = await createTestContext()
  await t.ctx.plugin(SystemPromptService)
  await t.ctx.plugin(Subprocess)
  await t.active(t.ctx.plugin(FsSearch, config))
}

test('the default export is the plugin: name, inject, Config, apply', () => {
  expect(FsSearch.name).toBe('tool-fs-search')
  expect(FsSearch.inject).toEqual(['tools', 'systemPrompt', 'subprocess'])
  expect(typeof FsSearch.apply).toBe('function')
})

test('the config defaults are positive integers and rgPath is optional', () => {
  expect(Config({})).toEqual({
    globMaxResults: 100,
    grepMaxMatches: 250,
    grepMaxLineBytes: 2000,
    maxResultBytes: 30_000,
    rawOutputMaxBytes: 20_000_000,
    savedResultMaxBytes: 1_073_741_824,
    rgMaxMemoryBytes: 1_073_741_824,
    timeoutMs: 30_000,
    graceMs: 3000,
    stderrMaxBytes: 65_536,
  })
  expect(() => Config({ globMaxResults: 0 })).toThrow(/globMaxResults/)
  expect(() => Config({ grepMaxMatches: 1.5 })).toThrow(/grepMaxMatches/)
  expect(() => Config({ timeoutMs: -1 })).toThrow(/timeoutMs/)
})

test('registers glob and grep with their budgets, and their prompt sections at 103 and 104', async () => {
  await load({ timeoutMs: 1234 })
  expect(t.ctx.tools.list().map((tool) => [tool.name, tool.timeoutMs])).toEqual([
    ['glob', 1234],
    ['grep', 1234],
  ])
  expect(t.ctx.systemPrompt.list()).toEqual([
    { id: 'tool:glob', order: 103, text: GLOB_PROMPT },
    { id: 'tool:grep', order: 104, text: GREP_PROMPT },
  ])
})

test('the schemas are byte-stable JSON Schemas without extra properties', async () => {
  await load()
  const first = JSON.stringify(t.ctx.tools.schemas())
  await t.dispose()
  await load()
  expect(JSON.stringify(t.ctx.tools.schemas())).toBe(first)
  const [glob, grep] = t.ctx.tools.schemas()
  expect(glob?.parameters).toMatchObject({ type: 'object', required: ['pattern'], additionalProperties: false })
  expect(Object.keys(glob?.parameters.properties as object)).toEqual(['pattern', 'path', 'respect_gitignore'])
  expect(grep?.parameters).toMatchObject({ type: 'object', required: ['pattern'], additionalProperties: false })
  expect(Object.keys(grep?.parameters.properties as object)).toEqual([
    'pattern',
    'path',
    'include',
    'type',
    'output_mode',
    'context',
    'before',
    'after',
    'case_insensitive',
    'multiline',
    'head_limit',
    'offset',
  ])
})

test('disposing the plugin removes the tools and the prompt sections', async () => {
  t = await createTestContext()
  await t.ctx.plugin(SystemPromptService)
  await t.ctx.plugin(Subprocess)
  const fiber = t.ctx.plugin(FsSearch, {})
  await t.active(fiber)
  await fiber.dispose()
  expect(t.ctx.tools.list()).toEqual([])
  expect(t.ctx.systemPrompt.list()).toEqual([])
})

test('schema problems are reported by the registry as INVALID_ARGS', async () => {
  await load()
  const result = await t.ctx.tools.execute('grep', { pattern: '', paht: 'x' })
  expect(result.error?.code).toBe('INVALID_ARGS')
  expect(result.content[0].text).toBe(
    'Error: invalid arguments: unexpected property "paht"; property "pattern" must not be shorter than 1 characters',
  )
})

test('the README states the exact prompt texts, descriptions and parameter descriptions', async () => {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
  expect(readme).toContain(`\`\`\`\n${GLOB_PROMPT}\n\`\`\``)
  expect(readme).toContain(`\`\`\`\n${GREP_PROMPT}\n\`\`\``)
  expect(readme).toContain(`\`\`\`\n${globDescription({ maxResults: 100, maxResultBytes: 30_000 })}\n\`\`\``)
  expect(readme).toContain(
    `\`\`\`\n${grepDescription({ maxMatches: 250, maxLineBytes: 2000, maxResultBytes: 30_000 })}\n\`\`\``,
  )
  for (const schema of [GlobParameters, GrepParameters]) {
    for (const [key, property] of Object.entries(schema.properties)) {
      const fields = Object.entries(property).map(([name, value]) => `"${name}": ${JSON.stringify(value)}`)
      expect(readme).toContain(`"${key}": { ${fields.join(', ')} }`)
    }
  }
})

test('no import circle inside the package: the value types live apart, so parser and renderer never import each other', () => {
  const dir = join(dirname(fileURLToPath(import.meta.url)), '..', 'src')
  const imports = new Map<string, string[]>()
  for (const file of readdirSync(dir).filter((name) => name.endsWith('.ts'))) {
    const source = readFileSync(join(dir, file), 'utf8')
    imports.set(
      file,
      [...source.matchAll(/^import[^'"]*['"]\.\/([\w-]+\.ts)['"]/gm)].map((match) => match[1] as string),
    )
  }
  const circles: string[] = []
  const visit = (file: string, path: string[]): void => {
    if (path.includes(file)) {
      circles.push([...path.slice(path.indexOf(file)), file].join(' → '))
      return
    }
    for (const next of imports.get(file) ?? []) visit(next, [...path, file])
  }
  for (const file of imports.keys()) visit(file, [])
  expect(circles).toEqual([])
  expect(imports.get('records.ts')).not.toContain('grep-text.ts')
})
