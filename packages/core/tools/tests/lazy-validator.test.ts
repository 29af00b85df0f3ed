import { execFileSync } from 'node:child_process'
import { expect, test } from 'vitest'

// Runs against the built package (npm test builds first), in a fresh Node process: ajv is CommonJS, so whether it
// was loaded shows in the CommonJS module cache that ESM imports of CommonJS share.
const script = `
import { createRequire } from 'node:module'
import { Context } from 'cordis'
import { HarnessError, ToolsService } from '@deepseek-ai/dsh-tools'
const ajvLoaded = () => Object.keys(createRequire(import.meta.url).cache).some((path) => path.includes('/node_modules/ajv/'))
const seen = { atImport: ajvLoaded() }
const ctx = new Context()
await ctx.plugin(ToolsService)
ctx.tools.register({ name: 'probe', description: 'd', parameters: { type: 'object', properties: { a: { type: 'string' } } }, execute: () => 'ok' })
seen.afterRegister = ajvLoaded()
seen.result = (await ctx.tools.execute('probe', { a: 1 })).content[0].text
seen.afterCall = ajvLoaded()
seen.harnessError = new HarnessError('m', { code: 'C' }).code
process.stdout.write(JSON.stringify(seen))
await ctx.fiber.dispose()
`

test('importing the package (for HarnessError) or registering a tool loads no validator; the first call does', () => {
  const seen = JSON.parse(
    execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: import.meta.dirname,
      encoding: 'utf8',
    }),
  )
  expect(seen).toEqual({
    atImport: false,
    afterRegister: false,
    result: 'Error: invalid arguments: property "a" must be a string',
    afterCall: true,
    harnessError: 'C',
  })
})
