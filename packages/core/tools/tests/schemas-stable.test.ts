import { execFileSync } from 'node:child_process'
import { expect, test } from 'vitest'

// Runs against the built package (npm test builds first): a fresh Node process each time, registering the same
// tools in a different order, with a TypeBox schema as tools do.
const script = `
import { Context } from 'cordis'
import { Type } from '@sinclair/typebox'
import { ToolsService } from '@deepseek-ai/dsh-tools'
const ctx = new Context()
await ctx.plugin(ToolsService)
const make = (name) => ({
  name, description: 'tool ' + name, timeoutMs: 1000,
  parameters: Type.Object({ pattern: Type.String({ description: 'p' }), limit: Type.Optional(Type.Integer({ minimum: 1 })) }, { additionalProperties: false }),
  execute: () => '',
})
const names = process.argv[2] === 'reverse' ? ['b', 'a', 'c'] : ['a', 'b', 'c']
for (const name of names) ctx.tools.register(make(name))
process.stdout.write(JSON.stringify(ctx.tools.schemas()))
await ctx.fiber.dispose()
`

function schemasFromFreshProcess(order: string): string {
  return execFileSync(process.execPath, ['--input-type=module', '-e', script, order], {
    cwd: import.meta.dirname,
    encoding: 'utf8',
  })
}

test('schemas() is byte-identical across two fresh processes, whatever the registration order', () => {
  const first = schemasFromFreshProcess('forward')
  const second = schemasFromFreshProcess('reverse')
  expect(second).toBe(first)
  expect(JSON.parse(first).map((s: { name: string }) => s.name)).toEqual(['a', 'b', 'c'])
  expect(first).not.toContain('timeoutMs')
})
