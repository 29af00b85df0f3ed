import { sessionFor } from '@deepseek-ai/dsh-testing'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { createDefaultContext, type DefaultContext } from 'dsh-agent-tools'

/*
 * docs/model-surface.md#tools: bash named its timeout timeoutMs, bash_output and bash_input timeout_ms; a model that learnt one name
 * passes it everywhere. Every tool of the shipped composition that takes a timeout in milliseconds takes it by both
 * names, through the real pipeline: a tool added later with a timeout and without the other name fails here.
 */
const NAMES = ['timeoutMs', 'timeout_ms'] as const

let host: DefaultContext
beforeAll(async () => {
  host = await createDefaultContext({ log: () => {} })
})
afterAll(async () => {
  await host?.dispose()
})

test('every tool that takes a timeout takes it as timeoutMs and as timeout_ms', async () => {
  const checked: string[] = []
  for (const tool of host.ctx.tools.list()) {
    const properties = Object.keys((tool.parameters.properties ?? {}) as object)
    const ours = NAMES.find((name) => properties.includes(name))
    if (ours === undefined) continue
    const other = NAMES.find((name) => name !== ours) as string
    // An invalid value by the other name is refused in words about ours: the name was taken as ours.
    const result = await host.ctx.tools.execute(tool.name, { [other]: 0 }, { session: sessionFor('s', process.cwd()) })
    expect(result.error?.code, tool.name).toBe('INVALID_ARGS')
    expect(result.content[0].text, tool.name).toContain(`property "${ours}" (passed as "${other}") must be >= 1`)
    checked.push(tool.name)
  }
  expect(checked.sort()).toEqual(['bash', 'bash_input', 'bash_output'])
})
