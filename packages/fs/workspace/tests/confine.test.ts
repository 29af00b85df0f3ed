import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { createTestContext, type TestContext, sessionFor } from '@deepseek-ai/dsh-testing'
import { SystemPromptService } from '@deepseek-ai/dsh-system-prompt'
import Subprocess from '@deepseek-ai/dsh-subprocess-local'
import ToolFs from '@deepseek-ai/dsh-tool-fs'
import FsSearch from '@deepseek-ai/dsh-tool-fs-search'
import type { ToolResult } from '@deepseek-ai/dsh-tools'
import Workspace, { type Config } from '../src/index.ts'

/*
 * Layout of every test (real files, real ripgrep):
 *   base/work        the session cwd (a root)
 *   base/work/own.txt, base/work/sub/deep.txt
 *   base/work/out-file -> ../secret/key.txt     a symlink inside pointing out
 *   base/work/out-dir  -> ../secret             a directory symlink pointing out
 *   base/secret/key.txt                         outside every root
 *   base/extra/more.txt                         a configured root
 *   base/spill/saved.txt                        a read-only root
 */
let base: string
let t: TestContext

beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-workspace-test-')))
  mkdirSync(join(base, 'work/sub'), { recursive: true })
  mkdirSync(join(base, 'secret'))
  mkdirSync(join(base, 'extra'))
  mkdirSync(join(base, 'spill'))
  writeFileSync(join(base, 'work/own.txt'), 'needle in own\n')
  writeFileSync(join(base, 'work/sub/deep.txt'), 'needle deep\n')
  writeFileSync(join(base, 'secret/key.txt'), 'needle SECRET\n')
  writeFileSync(join(base, 'extra/more.txt'), 'needle extra\n')
  writeFileSync(join(base, 'spill/saved.txt'), 'needle saved\n')
  symlinkSync('../secret/key.txt', join(base, 'work/out-file'))
  symlinkSync('../secret', join(base, 'work/out-dir'))
})

afterEach(async () => {
  await t?.dispose()
  rmSync(base, { recursive: true, force: true })
})

async function load(config: Partial<Config> | undefined): Promise<void> {
  t = await createTestContext()
  await t.ctx.plugin(SystemPromptService)
  await t.active(t.ctx.plugin(Subprocess, { spillDir: join(base, '.spill') }))
  if (config) await t.active(t.ctx.plugin(Workspace, config))
  await t.active(t.ctx.plugin(ToolFs))
  await t.active(t.ctx.plugin(FsSearch))
}

const call = (tool: string, args: Record<string, unknown>): Promise<ToolResult> =>
  t.ctx.tools.execute(tool, args, { session: sessionFor('s1', join(base, 'work')) })

function refused(result: ToolResult): string {
  expect(result.isError).toBe(true)
  expect(result.error?.code).toBe('WORKSPACE_OUTSIDE_ROOTS')
  expect(result.content[0].text).not.toContain('SECRET')
  return result.content[0].text
}

test('read, grep and glob refuse an absolute path outside every root, naming the roots', async () => {
  await load({})
  const work = join(base, 'work')
  expect(refused(await call('read', { path: join(base, 'secret/key.txt') }))).toBe(
    `Error: read refused: "${base}/secret/key.txt" is outside the workspace roots (${work}); use a path inside them`,
  )
  expect(refused(await call('grep', { pattern: 'needle', path: join(base, 'secret') }))).toContain('grep refused:')
  expect(refused(await call('glob', { pattern: '*', path: join(base, 'secret') }))).toContain('glob refused:')
  expect(refused(await call('read', { path: '../secret/key.txt' }))).toContain('is outside the workspace roots')
  expect(refused(await call('read', { path: '/etc/passwd' }))).toContain('"/etc/passwd" is outside')
})

test('a symlink inside a root that points out is refused by every fs tool, and says where it leads', async () => {
  await load({})
  const work = join(base, 'work')
  expect(refused(await call('read', { path: 'out-file' }))).toBe(
    `Error: read refused: "${work}/out-file" resolves through a symbolic link to "${base}/secret/key.txt", which is outside the workspace roots (${work}); use a path inside them`,
  )
  expect(refused(await call('read', { path: 'out-dir/key.txt' }))).toContain('resolves through a symbolic link')
  expect(refused(await call('grep', { pattern: 'needle', path: 'out-dir' }))).toContain('grep refused:')
  expect(refused(await call('grep', { pattern: 'needle', path: 'out-file' }))).toContain('grep refused:')
  expect(refused(await call('glob', { pattern: '*', path: 'out-dir' }))).toContain('glob refused:')
})

test('a walk of the root neither follows nor reads the symlinks that point out', async () => {
  await load({})
  const grep = await call('grep', { pattern: 'needle' })
  expect(grep.isError).toBe(false)
  expect(grep.content[0].text).toBe(
    'Found 2 matches\n\nown.txt\nLine 1: needle in own\n\nsub/deep.txt\nLine 1: needle deep',
  )
  const glob = await call('glob', { pattern: '**' })
  expect(glob.isError).toBe(false)
  expect(glob.content[0].text.split('\n').sort()).toEqual(['own.txt', 'sub/deep.txt'])
})

test('inside the roots everything works: the cwd, configured roots, read-only roots', async () => {
  await load({ roots: [join(base, 'extra')], readOnly: [join(base, 'spill')] })
  expect((await call('read', { path: 'own.txt' })).content[0].text).toContain('1: needle in own')
  expect((await call('read', { path: join(base, 'extra/more.txt') })).content[0].text).toContain('1: needle extra')
  expect((await call('read', { path: join(base, 'spill/saved.txt') })).content[0].text).toContain('1: needle saved')
  expect((await call('grep', { pattern: 'needle', path: join(base, 'extra') })).content[0].text).toContain(
    'Line 1: needle extra',
  )
  expect((await call('glob', { pattern: '*.txt', path: join(base, 'spill') })).content[0].text).toBe(
    `${base}/spill/saved.txt`,
  )
  expect(refused(await call('read', { path: join(base, 'secret/key.txt') }))).toContain(
    `(${base}/work, ${base}/extra; read-only: ${base}/spill)`,
  )
})

test('a missing file inside a root is still "not found", a missing one outside is refused', async () => {
  await load({})
  const missing = await call('read', { path: 'no/such/file.txt' })
  expect(missing.error?.code).toBe('FS_NOT_FOUND')
  refused(await call('read', { path: join(base, 'secret/nothing.txt') }))
})

test('a path through a symbolic link loop is refused (fail closed) with a text that says the links loop, not that it lies outside', async () => {
  symlinkSync('loop', join(base, 'work/loop'))
  await load({})
  for (const tool of ['read', 'grep', 'glob']) {
    const text = refused(await call(tool, tool === 'read' ? { path: 'loop/x' } : { path: 'loop/x', pattern: 'x' }))
    expect(text).toBe(
      `Error: ${tool} refused: "${base}/work/loop/x" cannot be resolved: its symbolic links loop (or chain more than 40 deep), so it cannot be shown to lie inside the workspace roots (${base}/work); use a path inside them`,
    )
  }
})

test('a symlink inside pointing to another place inside is followed', async () => {
  symlinkSync('sub/deep.txt', join(base, 'work/in-link'))
  await load({})
  expect((await call('read', { path: 'in-link' })).content[0].text).toContain('1: needle deep')
})

test('a root reached through a symlink counts by its real path', async () => {
  symlinkSync(join(base, 'extra'), join(base, 'extra-link'))
  await load({ roots: [join(base, 'extra-link')] })
  expect((await call('read', { path: join(base, 'extra/more.txt') })).content[0].text).toContain('1: needle extra')
})

test('without the workspace service nothing is confined (roots are off)', async () => {
  await load(undefined)
  expect((await call('read', { path: join(base, 'secret/key.txt') })).content[0].text).toContain('1: needle SECRET')
})

test('addReadOnly adds a root until its disposer runs', async () => {
  await load({})
  const remove = t.ctx.workspace.addReadOnly(join(base, 'spill'))
  expect((await call('read', { path: join(base, 'spill/saved.txt') })).isError).toBe(false)
  remove()
  refused(await call('read', { path: join(base, 'spill/saved.txt') }))
})
