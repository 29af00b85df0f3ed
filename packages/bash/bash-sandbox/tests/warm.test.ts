import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, expect, test } from 'vitest'
import type { Confinement } from '@deepseek-ai/dsh-confinement'
import { sessionFor } from '@deepseek-ai/dsh-testing'
import type { ToolSession } from '@deepseek-ai/dsh-tools'
import {
  confineRequest,
  type Fixture,
  fixture,
  processesWith,
  recordGroups,
  startConfined,
  uniqueSleep,
  until,
} from './helpers.ts'
import SandboxBashExecutor from '../src/index.ts'

/*
 * The warm sandbox of a session's searches (src/warm.ts): it serves a call only while the call's own masks are
 * exactly the ones it was made with. Each attack below changes what must be hidden after it started, then reads
 * through ctx.confinement with `cat` (what ripgrep would read): a warm sandbox that served the call anyway would
 * print the canary. Every call runs the same program, bash (a warm sandbox runs one program, as search runs rg).
 */

const BASH = '/bin/bash'

/** `bash -c script` through the confinement, in the session. */
function bash(script: string, session: ToolSession, signal?: AbortSignal) {
  return startConfined(
    f!.t.ctx.get('confinement') as Confinement,
    confineRequest(f!.root, BASH, ['-c', script], session, signal),
  )
}

let f: Fixture | undefined
afterEach(async () => {
  await f?.cleanup()
  f = undefined
})

/** A fixture whose sandbox hides `home/.aws` (absent at first), and its confinement. */
async function setUp(): Promise<{ groups: number[]; session: ToolSession }> {
  f = await fixture(({ home }) => ({ workspace: {}, config: { denyRead: [join(home, '.aws')] } }))
  writeFileSync(join(f.root, 'plain.txt'), 'plain\n')
  const confinement = f.t.ctx.get('confinement') as Confinement
  await (await confinement.start(confineRequest(f.root, BASH, ['-c', 'true']))).done // the sandbox's probe, once
  return { groups: recordGroups(f.t), session: sessionFor('s1', f.root) }
}

/** `cat path` through the confinement, in the session: what it printed. */
async function cat(session: ToolSession, path: string): Promise<string> {
  return (await bash(`cat -- '${path}' 2>&1`, session)).output()
}

/** This fixture's warm sandboxes (their bwrap: the roots and the runner's fd 7 on its command line). */
function warmSandboxes(): number[] {
  const runners = processesWith('/proc/self/fd/7')
  return processesWith(f!.root).filter((pid) => runners.includes(pid))
}

/** Calls until one is served without a launch of its own: the session's warm sandbox serves it. */
async function warmUp(groups: number[], session: ToolSession): Promise<void> {
  await until(async () => {
    const launched = groups.length
    expect(await cat(session, join(f!.root, 'plain.txt'))).toBe('plain\n')
    return groups.length === launched
  }, 'a call is served by the warm sandbox')
}

test('a warm sandbox serves a session from its third call on; a single call never starts one', async () => {
  const { groups, session } = await setUp()
  const plain = join(f!.root, 'plain.txt')
  expect(await cat(session, plain)).toBe('plain\n')
  expect(groups).toHaveLength(1)
  expect(await cat(session, plain)).toBe('plain\n')
  // The second call with the same masks started the warm one beside its own launch.
  expect(groups).toHaveLength(3)
  await warmUp(groups, session)
  const warm = groups.length
  for (let i = 0; i < 3; i++) expect(await cat(session, plain)).toBe('plain\n')
  expect(groups).toHaveLength(warm)
})

test('attack: a hidden directory created after the warm sandbox started is masked for the next call', async () => {
  const { groups, session } = await setUp()
  await warmUp(groups, session)
  const aws = join(f!.home, '.aws')
  mkdirSync(aws)
  writeFileSync(join(aws, 'credentials'), 'CANARY-AWS\n')
  expect(await cat(session, join(aws, 'credentials'))).not.toContain('CANARY')
})

test('attack: a hidden directory replaced by another one (rename) after it started is masked where it is now', async () => {
  const { groups, session } = await setUp()
  const aws = join(f!.home, '.aws')
  mkdirSync(aws)
  writeFileSync(join(aws, 'credentials'), 'OLD-CANARY\n')
  await warmUp(groups, session)
  // Same path, same mounts, another directory: the warm sandbox's mask sits on the one moved away.
  renameSync(aws, join(f!.home, 'moved'))
  mkdirSync(aws)
  writeFileSync(join(aws, 'credentials'), 'NEW-CANARY\n')
  expect(await cat(session, join(aws, 'credentials'))).not.toContain('CANARY')
})

test('sessions apart: one session never runs in the warm sandbox of another', async () => {
  const { groups, session } = await setUp()
  await warmUp(groups, session)
  // What s1's commands leave in their private /tmp, which s1's warm sandbox shows read-only.
  await f!.bash('echo S1-PRIVATE > /tmp/s1.txt')
  expect(await cat(session, '/tmp/s1.txt')).toBe('S1-PRIVATE\n')
  const other = sessionFor('s2', f!.root)
  const launched = groups.length
  expect(await cat(other, join(f!.root, 'plain.txt'))).toBe('plain\n')
  expect(groups).toHaveLength(launched + 1)
  for (let i = 0; i < 4; i++) expect(await cat(other, '/tmp/s1.txt')).not.toContain('S1-PRIVATE')
})

test('the warm sandbox ends with its session, and what runs in it', async () => {
  const { groups, session } = await setUp()
  await warmUp(groups, session)
  const sleep = uniqueSleep()
  const { run } = await bash(`exec ${sleep.command}`, session)
  await until(() => processesWith(sleep.marker).length > 0, 'the sleep runs')
  const runner = warmSandboxes()
  expect(runner.length).toBeGreaterThan(0)
  await session.dispose()
  await run.done
  await until(() => processesWith(sleep.marker).length === 0, 'the sleep is gone')
  await until(() => runner.every((pid) => !warmSandboxes().includes(pid)), 'the runner is gone')
})

test('a run is stopped by its signal and reports its memory; a dead runner fails its runs, and the next call runs', async () => {
  const { groups, session } = await setUp()
  await warmUp(groups, session)
  const sleep = uniqueSleep()
  const controller = new AbortController()
  const started = await bash(`exec ${sleep.command}`, session, controller.signal)
  const launched = groups.length
  await until(() => started.run.residentBytes() > 0, 'its resident memory is read')
  controller.abort()
  expect(await started.run.done).toEqual({ exitCode: null, signal: 'SIGTERM' })
  // The runner killed from outside (a fault forced): the run in it fails, saying so; the next call runs anyway.
  const again = uniqueSleep()
  const doomed = await bash(`exec ${again.command}`, session)
  expect(groups).toHaveLength(launched)
  await until(() => processesWith(again.marker).length > 0, 'the second sleep runs')
  for (const pid of warmSandboxes()) process.kill(pid, 'SIGKILL')
  await doomed.run.done
  expect(doomed.run.failure('')).toMatch(/^the warm sandbox ended/)
  expect(await cat(session, join(f!.root, 'plain.txt'))).toBe('plain\n')
})

test('the warm sandboxes end with the provider', async () => {
  const { groups, session } = await setUp()
  await warmUp(groups, session)
  const runner = warmSandboxes()
  expect(runner.length).toBeGreaterThan(0)
  await f!.t.ctx.registry.delete(SandboxBashExecutor)
  await until(() => warmSandboxes().length === 0, 'the warm sandbox is gone')
})

test('output read straight from the program arrives whole, byte for byte, and nothing of the nonce that ends it', async () => {
  const { groups, session } = await setUp()
  await warmUp(groups, session)
  const big = Buffer.alloc(3_000_000)
  for (let i = 0; i < big.length; i++) big[i] = (i * 7919) % 251
  writeFileSync(join(f!.root, 'big.bin'), big)
  const launched = groups.length
  for (const size of [0, 1, 15, 16, 17, 65_536, big.length]) {
    writeFileSync(join(f!.root, 'part.bin'), big.subarray(0, size))
    const { run } = await bash(`cat -- '${join(f!.root, 'part.bin')}'`, session)
    const chunks: Buffer[] = []
    run.stdout.on('data', (chunk: Buffer) => chunks.push(chunk))
    expect(await run.done).toEqual({ exitCode: 0, signal: null })
    expect(Buffer.concat(chunks).equals(big.subarray(0, size))).toBe(true)
  }
  expect(groups).toHaveLength(launched)
})

test('a call that finds the warm sandbox busy runs in a fresh one, and both answer', async () => {
  const { groups, session } = await setUp()
  await warmUp(groups, session)
  const launched = groups.length
  const sleep = uniqueSleep()
  const sleeping = () =>
    processesWith(sleep.marker).filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'latin1').startsWith('sleep\0')
      } catch {
        return false // gone meanwhile
      }
    })
  const slow = await bash(`${sleep.command}; echo slow`, session)
  await until(() => sleeping().length > 0, 'the first call runs in the warm sandbox')
  const quick = await bash('echo quick', session)
  expect(await quick.output()).toBe('quick\n')
  for (const pid of sleeping()) process.kill(pid, 'SIGTERM')
  expect(await slow.output()).toBe('slow\n')
  expect(groups).toHaveLength(launched + 1)
})
