import { renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, expect, test } from 'vitest'
import { fakeHome, mcp, type FakeHome } from './fs-helpers.ts'

/*
 * Attack #5 (docs/security.md#boundary "hidden stays hidden"): a parent of a hidden directory is renamed after dsh
 * started — here by the host, which no sandbox can stop (inside bwrap the rename itself fails) — and the next calls
 * read, grep and glob it under its new name. The hidden directory keeps its identity (dev:ino), so it stays hidden.
 */
let h: FakeHome
afterEach(() => h?.cleanup())

test('attack #5: denyRead "cfg" inside the workspace, then `mv cfg cfg.moved`: read, grep and glob of it are refused or leave it out', async () => {
  h = fakeHome({ 'home/proj/cfg/secrets/key.txt': 'CANARY-CFG\n', 'home/proj/cfg/readme.txt': 'plain\n' })
  writeFileSync(join(h.base, 'deny.json'), JSON.stringify({ workspace: { denyRead: ['cfg'] } }))
  const session = await mcp(['--cwd', h.work, '--sandbox', '--config', join(h.base, 'deny.json')], h)
  try {
    expect(await session.call('read', { path: 'cfg/secrets/key.txt' })).toMatchObject({
      isError: true,
      code: 'WORKSPACE_HIDDEN',
    })
    renameSync(join(h.work, 'cfg'), join(h.work, 'cfg.moved'))
    const read = await session.call('read', { path: 'cfg.moved/secrets/key.txt' })
    expect(read).toMatchObject({ isError: true, code: 'WORKSPACE_HIDDEN' })
    expect(read.text).toContain('renamed or linked from')
    expect(await session.call('grep', { pattern: 'CANARY', path: 'cfg.moved' })).toMatchObject({
      isError: true,
      code: 'WORKSPACE_HIDDEN',
    })
    const grep = await session.call('grep', { pattern: 'CANARY' })
    expect(grep.text).not.toContain('CANARY-CFG')
    const glob = await session.call('glob', { pattern: '**' })
    expect(glob.text).toContain('inside.txt')
    expect(glob.text).not.toContain('cfg.moved')
  } finally {
    await session.close()
  }
}, 120_000)

test('attack #5: cwd = $HOME (allowed), then `mv ~/.config ~/.config.x`: ~/.config.x/gh/hosts.yml stays hidden', async () => {
  h = fakeHome({ 'broad.json': JSON.stringify({ workspace: { allowBroadRoots: true } }) })
  const session = await mcp(['--cwd', h.home, '--sandbox', '--config', join(h.base, 'broad.json')], h)
  try {
    expect(await session.call('read', { path: '.bashrc' })).toMatchObject({ isError: false })
    renameSync(join(h.home, '.config'), join(h.home, '.config.x'))
    const read = await session.call('read', { path: '.config.x/gh/hosts.yml' })
    expect(read).toMatchObject({ isError: true, code: 'WORKSPACE_HIDDEN' })
    expect(read.text).not.toContain('CANARY')
    expect(await session.call('grep', { pattern: 'CANARY', path: '.config.x/gh' })).toMatchObject({
      isError: true,
      code: 'WORKSPACE_HIDDEN',
    })
    const glob = await session.call('glob', { pattern: '**' })
    expect(glob.text).toContain('.bashrc')
    expect(glob.text).not.toContain('.config.x/gh')
    expect(glob.text).not.toContain('.config.x/git/credentials')
  } finally {
    await session.close()
  }
}, 120_000)
