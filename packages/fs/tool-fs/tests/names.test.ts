import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { createTestContext, sessionFor, type TestContext } from '@deepseek-ai/dsh-testing'
import { SystemPromptService } from '@deepseek-ai/dsh-system-prompt'
import type { ToolResult } from '@deepseek-ai/dsh-tools'
import ToolFs from '@deepseek-ai/dsh-tool-fs'

// docs/model-surface.md#tools: Claude Code's and Gemini CLI's `file_path`, opencode's `filePath`, `oldString`, `newString` and
// `replaceAll` mean exactly what read's, write's and edit's own names mean: a call by those names runs as ours.
let t: TestContext
let dir: string
beforeEach(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), 'tool-fs-names-')))
  t = await createTestContext()
  await t.ctx.plugin(SystemPromptService)
  await t.active(t.ctx.plugin(ToolFs, {}))
})
afterEach(async () => {
  await t.dispose()
  await rm(dir, { recursive: true, force: true })
})

const call = (name: string, args: Record<string, unknown>) =>
  t.ctx.tools.execute(name, args, { session: sessionFor('s', dir) })
const ok = (result: ToolResult) => {
  expect(result.error).toBeUndefined()
  return result.content[0].text
}

test("write, read and edit take other clients' names for their arguments", async () => {
  ok(await call('write', { file_path: 'a.txt', content: 'one\ntwo\n' }))
  expect(ok(await call('read', { file_path: 'a.txt' }))).toBe(ok(await call('read', { path: 'a.txt' })))
  expect(ok(await call('read', { filePath: join(dir, 'a.txt'), limit: 1 }))).toMatch(/^1: one\n/)
  ok(await call('edit', { file_path: 'a.txt', old_string: 'one', new_string: 'uno' }))
  ok(await call('edit', { filePath: 'a.txt', oldString: 'o', newString: '0', replaceAll: true }))
  expect(await readFile(join(dir, 'a.txt'), 'utf8')).toBe('un0\ntw0\n')
  ok(await call('write', { filePath: 'b.txt', content: 'b\n' }))
  expect(await readFile(join(dir, 'b.txt'), 'utf8')).toBe('b\n')
})

test('a path given twice, differently, is INVALID_ARGS that says which name to keep', async () => {
  const result = await call('write', { path: 'a.txt', file_path: 'b.txt', content: '' })
  expect(result.error?.code).toBe('INVALID_ARGS')
  expect(result.content[0].text).toBe(
    'Error: invalid arguments: "path" and "file_path" name the same argument but differ: pass only "path"',
  )
})
