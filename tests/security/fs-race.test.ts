import { spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { fakeHome, mcp, type FakeHome } from './fs-helpers.ts'

/*
 * Attack #4 (docs/security.md#boundary "open, then check"): a background process flips a symbolic link, as fast as it
 * can, between a file inside the workspace and a fake secret outside it (a directory link likewise). Hundreds of
 * `read` and `grep` calls through the real dsh must never show the secret: each call either reads the inside
 * file or is refused. (The old check-then-open leaked 17 reads in 300.)
 */
let h: FakeHome
let flipper: ChildProcess | undefined
beforeAll(() => {
  h = fakeHome()
  mkdirSync(join(h.work, 'sub'))
  writeFileSync(join(h.work, 'sub/in.txt'), 'CANARY-NOT inside\n')
  symlinkSync('inside.txt', join(h.work, 'link'))
  symlinkSync('sub', join(h.work, 'dlink'))
}, 120_000)
afterAll(() => {
  flipper?.kill('SIGKILL')
  h?.cleanup()
})

/** Renames a fresh link over `name` in a loop, alternating its target: each rename is atomic. */
function flip(name: string, inside: string, secret: string): ChildProcess {
  const script = `cd '${h.work}'; while :; do ln -sfn '${inside}' .${name}.a; mv -Tf .${name}.a ${name}; ln -sfn '${secret}' .${name}.b; mv -Tf .${name}.b ${name}; done`
  return spawn('bash', ['-c', script], { stdio: 'ignore' })
}

test('attack #4: a symlink flipped between an inside file and a secret by a background process: 300 reads and 100 greps, zero leaks', async () => {
  const session = await mcp(['--cwd', h.work, '--sandbox'], h)
  try {
    flipper = flip('link', 'inside.txt', join(h.outside, 'secret.txt'))
    const reads = { ok: 0, refused: 0, leaked: 0 }
    for (let i = 0; i < 300; i++) {
      const result = await session.call('read', { path: 'link' })
      if (result.text.includes('CANARY-OUTSIDE')) reads.leaked++
      else if (result.isError) reads.refused++
      else reads.ok++
    }
    flipper.kill('SIGKILL')
    flipper = flip('dlink', 'sub', h.outside)
    const greps = { ok: 0, refused: 0, leaked: 0 }
    for (let i = 0; i < 100; i++) {
      const result = await session.call('grep', { pattern: 'CANARY', path: 'dlink' })
      if (result.text.includes('CANARY-OUTSIDE')) greps.leaked++
      else if (result.isError) greps.refused++
      else greps.ok++
    }
    flipper.kill('SIGKILL')
    expect({ reads: reads.leaked, greps: greps.leaked }).toEqual({ reads: 0, greps: 0 })
    // The race was really run: both targets were met.
    expect(reads.ok).toBeGreaterThan(0)
    expect(reads.refused).toBeGreaterThan(0)
    expect(greps.ok + greps.refused).toBe(100)
  } finally {
    await session.close()
  }
}, 240_000)
