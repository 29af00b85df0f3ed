import { spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { fakeHome, mcp, SECRETS, type FakeHome } from './fs-helpers.ts'

/*
 * docs/security.md#boundary, docs/model-surface.md#tools against write and edit: a background process flips a symbolic link (and a directory link) between
 * a target inside the workspace and one outside it, as fast as it can, while a session writes and edits through
 * them; and the credential stores of $HOME are attacked directly with cwd = a project inside $HOME. Whatever each
 * call answers, nothing outside the roots and no hidden file changes, and no file appears outside.
 */
let h: FakeHome
let flipper: ChildProcess | undefined
beforeAll(() => {
  h = fakeHome()
  mkdirSync(join(h.work, 'sub'))
  writeFileSync(join(h.work, 'target.txt'), 'inside v0\n')
  symlinkSync('target.txt', join(h.work, 'link'))
  symlinkSync('sub', join(h.work, 'dlink'))
}, 120_000)
afterAll(() => {
  flipper?.kill('SIGKILL')
  h?.cleanup()
})

function flip(name: string, inside: string, outside: string): ChildProcess {
  const script = `cd '${h.work}'; while :; do ln -sfn '${inside}' .${name}.a; mv -Tf .${name}.a ${name}; ln -sfn '${outside}' .${name}.b; mv -Tf .${name}.b ${name}; done`
  return spawn('bash', ['-c', script], { stdio: 'ignore' })
}

test('write and edit through links flipped in and out of the roots by a background process: nothing outside changes, nothing appears there', async () => {
  const session = await mcp(['--cwd', h.work, '--sandbox'], h)
  try {
    flipper = flip('link', 'target.txt', join(h.outside, 'secret.txt'))
    const outcomes = { ok: 0, refused: 0 }
    for (let i = 0; i < 150; i++) {
      await session.call('read', { path: 'link' })
      const result =
        i % 2
          ? await session.call('write', { path: 'link', content: `PWNED ${i}\n` })
          : await session.call('edit', { path: 'link', old_string: 'v', new_string: 'PWNED v' })
      outcomes[result.isError ? 'refused' : 'ok']++
    }
    flipper.kill('SIGKILL')
    flipper = flip('dlink', 'sub', h.outside)
    for (let i = 0; i < 100; i++) await session.call('write', { path: `dlink/new-${i}.txt`, content: 'PWNED\n' })
    flipper.kill('SIGKILL')
    expect(readFileSync(join(h.outside, 'secret.txt'), 'utf8')).toBe('CANARY-OUTSIDE\n')
    expect(readdirSync(h.outside)).toEqual(['secret.txt'])
    // The race was really run: some calls met the inside target, some the outside one.
    expect(outcomes.ok).toBeGreaterThan(0)
    expect(outcomes.refused).toBeGreaterThan(0)
    expect(readdirSync(join(h.work, 'sub')).length).toBeGreaterThan(0)
  } finally {
    await session.close()
  }
}, 240_000)

test('with cwd = $HOME under --sandbox, write and edit never change a credential store nor create a file in one', async () => {
  // $HOME as a root needs the explicit opt-in (docs/security.md#boundary "roots a user meant"); the stores stay hidden even then.
  writeFileSync(join(h.base, 'broad-write.json'), JSON.stringify({ workspace: { allowBroadRoots: true } }))
  const session = await mcp(['--cwd', h.home, '--sandbox', '--config', join(h.base, 'broad-write.json')], h)
  try {
    expect(await session.call('write', { path: 'notes.txt', content: 'fine\n' })).toMatchObject({ isError: false })
    for (const path of Object.keys(SECRETS)) {
      await session.call('read', { path })
      const written = await session.call('write', { path, content: 'PWNED\n' })
      const edited = await session.call('edit', { path, old_string: 'CANARY', new_string: 'PWNED' })
      for (const result of [written, edited])
        expect({ path, code: result.code }).toEqual({ path, code: 'WORKSPACE_HIDDEN' })
      expect(readFileSync(join(h.home, path), 'utf8')).toBe(SECRETS[path])
    }
    // A store that is a directory takes no new file either, however deep.
    for (const store of ['.ssh', '.aws', '.config/gh', '.claude', '.codex']) {
      for (const path of [`${store}/planted`, `${store}/deeper/planted`]) {
        expect({ path, code: (await session.call('write', { path, content: 'PWNED\n' })).code }).toEqual({
          path,
          code: 'WORKSPACE_HIDDEN',
        })
      }
      expect(readdirSync(join(h.home, store)).filter((name) => name.includes('planted') || name === 'deeper')).toEqual(
        [],
      )
    }
  } finally {
    await session.close()
  }
}, 240_000)
