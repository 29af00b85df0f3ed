import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { fakeHome, mcp, SECRETS, type FakeHome } from './fs-helpers.ts'

/*
 * Attack #3 and the file-tool side of #8 (docs/security.md#boundary): with --sandbox, the file tools obey the same
 * hidden paths as bash — from a cwd of $HOME (allowed explicitly), through `read`, `grep` and `glob`, and for a
 * `denyRead` entry inside the workspace. Real dsh, real ripgrep, fake secrets in a fake HOME.
 */
let h: FakeHome
beforeAll(() => {
  h = fakeHome({
    'broad.json': JSON.stringify({ workspace: { allowBroadRoots: true } }),
    'home/proj/secrets/key.txt': 'CANARY-DENY\n',
    'home/proj/notes.txt': 'notes CANARY-FREE\n',
  })
  writeFileSync(join(h.work, 'dsh.json'), JSON.stringify({ workspace: { denyRead: ['secrets'] } }))
}, 120_000)
afterAll(() => h?.cleanup())

test('attack #3/#8: cwd = $HOME under --sandbox: read, grep and glob never show a credential store, and say it is hidden', async () => {
  const session = await mcp(['--cwd', h.home, '--sandbox', '--config', join(h.base, 'broad.json')], h)
  try {
    for (const path of Object.keys(SECRETS)) {
      const read = await session.call('read', { path })
      expect(read, path).toMatchObject({ isError: true, code: 'WORKSPACE_HIDDEN' })
      expect(read.text).not.toContain('CANARY')
      expect(read.text).toContain('is hidden')
    }
    const grepDir = await session.call('grep', { pattern: 'CANARY', path: '.aws' })
    expect(grepDir).toMatchObject({ isError: true, code: 'WORKSPACE_HIDDEN' })
    const grepAll = await session.call('grep', { pattern: 'CANARY', include: '*' })
    expect(grepAll.text).not.toMatch(/CANARY-(SSH|AWS|GH|CLAUDE|CODEX|CARGO|PG|GIT)/)
    // glob lists hidden (dot) files too: none of the credential stores may be among them.
    const glob = await session.call('glob', { pattern: '**' })
    expect(glob.isError).toBe(false)
    expect(glob.text).toContain('proj/inside.txt')
    expect(glob.text).toContain('.bashrc')
    for (const path of Object.keys(SECRETS)) expect(glob.text).not.toContain(path)
    expect(glob.text).not.toContain('.ssh')
    // What is not hidden stays readable.
    expect(await session.call('read', { path: '.bashrc' })).toMatchObject({
      isError: false,
      text: expect.stringContaining('1: # rc'),
    })
  } finally {
    await session.close()
  }
}, 120_000)

test("attack #3: denyRead inside the workspace hides it from read, grep and glob; dsh's own --config file is hidden too", async () => {
  const session = await mcp(['--cwd', h.work, '--sandbox', '--config', join(h.work, 'dsh.json')], h)
  try {
    const read = await session.call('read', { path: 'secrets/key.txt' })
    expect(read).toMatchObject({ isError: true, code: 'WORKSPACE_HIDDEN' })
    expect(read.text).not.toContain('CANARY')
    expect(await session.call('grep', { pattern: 'CANARY', path: 'secrets' })).toMatchObject({
      isError: true,
      code: 'WORKSPACE_HIDDEN',
    })
    const grep = await session.call('grep', { pattern: 'CANARY' })
    expect(grep.text).toContain('notes.txt')
    expect(grep.text).not.toContain('CANARY-DENY')
    const glob = await session.call('glob', { pattern: '**' })
    expect(glob.text).toContain('inside.txt')
    expect(glob.text).not.toContain('secrets')
    expect(glob.text).not.toContain('dsh.json')
    expect(await session.call('read', { path: 'dsh.json' })).toMatchObject({ isError: true, code: 'WORKSPACE_HIDDEN' })
  } finally {
    await session.close()
  }
}, 120_000)
