import { type ChildProcess, spawn } from 'node:child_process'
import { mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, expect, test } from 'vitest'
import { attack, leaked, until, type Attack } from './helpers.ts'

/*
 * Row 1 of "Search inside the boundary" in docs/security.md: while a process exchanges a directory of the workspace with a symbolic link to a
 * credential store, over and over (renameat2 RENAME_EXCHANGE: both names always exist), grep walks that directory.
 * ripgrep walking on the host opened `race/d` just as it had become the link and printed ~/.ssh/id_rsa (15 of 30
 * calls). Under --sandbox ripgrep runs in the session's sandbox, where the link leads to the same empty mask that
 * `cat` meets: no call may print a canary.
 */
let a: Attack | undefined
let racer: ChildProcess | undefined
afterEach(async () => {
  racer?.kill('SIGKILL')
  racer = undefined
  await a?.cleanup()
  a = undefined
})

/**
 * Exchanges `dir` and `link` (same directory) in a loop until killed, `pause` seconds apart (none: as fast as it
 * can); prints "go" once the first exchange worked.
 */
const EXCHANGE = `
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
a, b = (os.fsencode(p) for p in sys.argv[1:3])
pause = float(sys.argv[3]) if len(sys.argv) > 3 else 0
said = False
while True:
    if pause:
        time.sleep(pause)
    if libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) != 0:
        sys.exit('renameat2: ' + os.strerror(ctypes.get_errno()))
    if not said:
        print('go', flush=True)
        said = True
`

async function race(x: Attack, dir: string, link: string, target: string, pause = 0): Promise<void> {
  mkdirSync(join(x.project, dir), { recursive: true })
  writeFileSync(join(x.project, dir, 'decoy.txt'), 'nothing here\n')
  symlinkSync(target, join(x.project, link))
  const child = spawn('python3', ['-c', EXCHANGE, join(x.project, dir), join(x.project, link), String(pause)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  racer = child
  let started = false
  child.stdout?.on('data', () => {
    started = true
  })
  await until(() => started || child.exitCode !== null, 'the exchange loop to start')
  expect(child.exitCode).toBe(null)
}

test('grep under --sandbox while a directory is exchanged with a link to ~/.ssh, 100 times: no canary, ever', async () => {
  a = await attack()
  await race(a, 'race/d', 'race/l', join(a.home, '.ssh'))
  const seen = { leaks: [] as string[], ok: 0, errors: [] as string[] }
  for (let i = 0; i < 100; i++) {
    const result = await a.call('grep', { pattern: 'CANARY', path: 'race' })
    const found = leaked(result.text)
    if (found.length > 0) seen.leaks.push(result.text)
    else if (result.isError) seen.errors.push(result.text)
    else seen.ok++
  }
  expect(seen.leaks).toEqual([])
  // Every call answered (nothing found: the decoy has no canary), none failed.
  expect(seen.errors).toEqual([])
  expect(seen.ok).toBe(100)
}, 240_000)

test('without --sandbox (roots on) the real-path check keeps what lies inside: nested matches and listings are all there', async () => {
  a = await attack({ sandbox: false, config: () => ({ workspace: {} }) })
  mkdirSync(join(a.project, 'sub/deep'), { recursive: true })
  writeFileSync(join(a.project, 'sub/deep/a.txt'), 'needle\n')
  writeFileSync(join(a.project, 'b.txt'), 'needle\n')
  symlinkSync(join(a.home, '.ssh'), join(a.project, 'keys'))
  expect((await a.call('grep', { pattern: 'needle|CANARY' })).text).toBe(
    'Found 2 matches\n\nb.txt\nLine 1: needle\n\nsub/deep/a.txt\nLine 1: needle',
  )
  const glob = await a.call('glob', { pattern: '**/*.txt' })
  expect(glob.text.split('\n').sort()).toEqual(['b.txt', 'sub/deep/a.txt'])
})

test("a session's root exchanged with a link to a directory outside, under --sandbox: no write of its commands lands there", async () => {
  a = await attack()
  // Session Y claims `sub` (pinned); the racer swaps it with a link to `outside` without pause. The sandbox's one
  // writable bind is made from the root's descriptor: whatever the path names when bwrap mounts it (the claimed
  // directory, or the link), what becomes writable is the claimed directory, never the link's target. (Reads of
  // files that are not hidden are the sandbox's to allow anywhere; hidden ones under a swap: the test above.)
  const sub = join(a.project, 'sub')
  mkdirSync(sub)
  expect((await a.call('bash', { command: 'true', description: 'claim' }, 'Y', sub)).isError).toBe(false)
  // A few milliseconds apart: about the time from the call's check of the root to bwrap's mount.
  await race(a, 'sub', 'l', a.outside, 0.003)
  const seen = { ran: 0, refused: new Set<string>() }
  for (let i = 0; i < 60; i++) {
    const result = await a.call('bash', { command: `echo PWNED > x${i}.txt; true`, description: 'write' }, 'Y', sub)
    if (result.isError) seen.refused.add(result.code ?? result.text)
    else seen.ran++
  }
  racer?.kill('SIGKILL')
  expect(readdirSync(a.outside)).toEqual([])
  // Both outcomes happen (the race is real), and every refusal is a coded one: the root moved, or bwrap could not
  // mount onto the link that the path had become.
  expect(seen.ran).toBeGreaterThan(0)
  expect(
    [...seen.refused].filter(
      (code) => !['WORKSPACE_ROOT_MOVED', 'WORKSPACE_OUTSIDE_ROOTS', 'BASH_SANDBOX_UNAVAILABLE'].includes(code),
    ),
  ).toEqual([])
}, 240_000)
