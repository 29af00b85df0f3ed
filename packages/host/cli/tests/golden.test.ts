import { describe, expect, test } from 'vitest'
import { dsh } from './helpers.ts'

/**
 * The whole model-facing surface in one reviewed file (docs/architecture.md#house-rules): every tool declaration as `dsh tools
 * --json` prints it (what MCP's tools/list carries), then the system prompt as `dsh prompt` prints it. Any change
 * to a description, schema, title, annotation or prompt line shows up in review as a diff of this file. After an
 * intended change: `npx vitest run packages/host/cli/tests/golden.test.ts -u`, and read the diff.
 */
describe('the model-facing surface', () => {
  test('dsh tools --json and dsh prompt match the golden file', async () => {
    const [tools, prompt] = await Promise.all([dsh(['tools', '--json']), dsh(['prompt'])])
    expect(tools.code).toBe(0)
    expect(prompt.code).toBe(0)
    const surface = `$ dsh tools --json\n${tools.stdout}\n$ dsh prompt\n${prompt.stdout}`
    await expect(surface).toMatchFileSnapshot('./golden/model-surface.txt')
  })
})
