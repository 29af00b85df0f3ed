import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, expect, test } from 'vitest'
import { createSession } from '../src/index.ts'

let dir: string | undefined
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true })
  dir = undefined
})

test('a session pins its root: renamed, or replaced by a link, the root fails WORKSPACE_ROOT_MOVED; fdPath still names it', async () => {
  dir = mkdtempSync(join(tmpdir(), 'dsh-session-'))
  const root = join(dir, 'sub')
  mkdirSync(root)
  const session = createSession({ id: 'y', cwd: root })
  expect(session.cwd).toBe(root)
  expect(() => session.root?.check('write')).not.toThrow()
  renameSync(root, join(dir, 'sub.real'))
  symlinkSync('/etc', root)
  expect(() => session.root?.check('write')).toThrow(expect.objectContaining({ code: 'WORKSPACE_ROOT_MOVED' }))
  mkdirSync(join(session.root!.fdPath, 'made-through-fd'))
  expect(() => mkdirSync(join(dir!, 'sub.real', 'made-through-fd'))).toThrow(/EEXIST/)
  await session.dispose()
})

test('directory names are random, not derived from the id; slots are per session; dispose runs clean-ups once, last first', async () => {
  dir = mkdtempSync(join(tmpdir(), 'dsh-session-'))
  const a = createSession({ id: 'same', cwd: dir })
  const b = createSession({ id: 'same', cwd: dir })
  expect(a.dirName).toMatch(/^[0-9a-f]{24}$/)
  expect(a.dirName).not.toBe(b.dirName)
  const key = Symbol('k')
  expect(a.slot(key, () => 1)).toBe(1)
  expect(a.slot(key, () => 2)).toBe(1)
  expect(b.slot(key, () => 3)).toBe(3)
  const order: string[] = []
  a.defer(() => order.push('first'))
  a.defer(() => order.push('second'))
  await Promise.all([a.dispose(), a.dispose()])
  expect(order).toEqual(['second', 'first'])
  expect(a.disposed).toBe(true)
  await b.dispose()
})
