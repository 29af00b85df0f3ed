import { afterEach, expect, test } from 'vitest'
import ToolBash, { BASH_PROMPT, Config } from '../src/index.ts'
import { harness, type Harness } from './helpers.ts'

let h: Harness
afterEach(async () => {
  await h?.cleanup()
})

test('the default export is the plugin: name, inject, Config, apply', () => {
  expect(ToolBash.name).toBe('tool-bash')
  expect(ToolBash.inject).toEqual(['tools', 'systemPrompt', 'bash', 'tasks'])
  expect(ToolBash.Config).toBe(Config)
  expect(typeof ToolBash.apply).toBe('function')
  expect(Config({})).toEqual({ maxResultBytes: 30_000, backgroundAfterMs: 45_000 })
  expect(() => Config({ maxResultBytes: 1023 })).toThrow()
})

test('registers bash, bash_input, bash_output and bash_kill without a time budget (bash owns its timeout)', async () => {
  h = await harness()
  expect(h.ctx.tools.list().map((tool) => [tool.name, tool.timeoutMs])).toEqual([
    ['bash', undefined],
    ['bash_input', undefined],
    ['bash_kill', undefined],
    ['bash_output', undefined],
  ])
})

test('the tool:bash prompt section sits at order 105 and tells the model to read the exit-code marker', async () => {
  h = await harness()
  expect(h.ctx.systemPrompt.list()).toEqual([{ id: 'tool:bash', order: 105, text: BASH_PROMPT }])
  expect(BASH_PROMPT).toContain('Always read the markers')
  expect(BASH_PROMPT).toContain('"[exit code: N]" means the command exited with status N')
})

test("the bash description states the executor's own timeout bounds", async () => {
  h = await harness({ timeoutMs: 1234, maxTimeoutMs: 5678 })
  expect(h.ctx.tools.get('bash')?.description).toContain(
    'timeoutMs (default 1234, at most 5678; larger values are lowered to it)',
  )
})

test('the schemas are byte-stable JSON Schemas without extra properties', async () => {
  h = await harness()
  const first = JSON.stringify(h.ctx.tools.schemas())
  await h.cleanup()
  h = await harness()
  expect(JSON.stringify(h.ctx.tools.schemas())).toBe(first)
  const [bash, input, kill, output] = h.ctx.tools.schemas()
  expect(bash?.parameters).toMatchObject({
    type: 'object',
    required: ['command'],
    additionalProperties: false,
  })
  expect(Object.keys(bash?.parameters.properties as object)).toEqual([
    'command',
    'description',
    'timeoutMs',
    'workdir',
    'run_in_background',
    'interactive',
  ])
  expect(input?.parameters).toMatchObject({
    type: 'object',
    required: ['task_id', 'text'],
    additionalProperties: false,
  })
  expect(Object.keys(input?.parameters.properties as object)).toEqual(['task_id', 'text', 'wait_for', 'timeout_ms'])
  expect(JSON.parse(JSON.stringify(kill?.parameters))).toEqual({
    type: 'object',
    additionalProperties: false,
    required: ['task_id'],
    properties: {
      task_id: { type: 'string', minLength: 1, description: 'The task id that bash returned, e.g. "bash-1".' },
    },
  })
  expect(output?.parameters).toMatchObject({ type: 'object', additionalProperties: false })
  expect(output?.parameters.required).toBeUndefined()
  expect(Object.keys(output?.parameters.properties as object)).toEqual(['task_id', 'wait_for', 'timeout_ms'])
})

test('disposing the plugin removes the tools and the prompt section', async () => {
  h = await harness()
  await h.tool.dispose()
  expect(h.ctx.tools.list()).toEqual([])
  expect(h.ctx.systemPrompt.list()).toEqual([])
})
