import { readdirSync, readFileSync } from 'node:fs'
import { afterEach, expect, test } from 'vitest'
import { sessionFor } from '@deepseek-ai/dsh-testing'
import type { Confined, Confinement } from '@deepseek-ai/dsh-confinement'
import { type Fixture, fixture, processesWith, uniqueSleep, until } from './helpers.ts'

/*
 * ctx.confinement (the search tools' ripgrep) with the real bubblewrap: the program is the namespace's pid 1, so its
 * process group ends with it — stopped by the group's signal, and with nothing left behind when it exits by itself.
 */

let f: Fixture | undefined
afterEach(async () => {
  await f?.cleanup()
  f = undefined
})

/** Processes whose process group is `pgid`, zombies included. */
function groupMembers(pgid: number): string[] {
  const members: string[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'latin1')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      if (Number(fields[2]) === pgid) members.push(`${entry} ${fields[0]}`)
    } catch {
      // gone meanwhile
    }
  }
  return members
}

/** Spawns a confined argv as the search tools do: output piped and drained. */
async function spawnConfined(run: Confined, signal?: AbortSignal) {
  const handle = await f!.t.ctx.subprocess.spawn({
    argv: run.argv,
    cwd: run.cwd,
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
    graceMs: 60_000,
    ...(signal ? { signal } : {}),
  })
  handle.stdout?.resume()
  handle.stderr?.resume()
  return handle
}

async function confined(program: string, args: string[]) {
  f = await fixture()
  const confinement = f.t.ctx.get('confinement') as Confinement
  return confinement.confine({
    argv: [program, ...args],
    cwd: f.root,
    session: sessionFor('s1', f.root),
    access: 'read',
  })
}

test('a confined program that exits leaves no process of its group, not even a zombie init', async () => {
  const run = await confined('/usr/bin/true', [])
  for (let i = 0; i < 5; i++) {
    const handle = await spawnConfined(run)
    const exit = run.status(await handle.exited)
    expect(exit).toEqual({ exitCode: 0, signal: null })
    expect(groupMembers(handle.pid)).toEqual([])
  }
})

test('aborting a confined program stops it (a pid 1 ignores SIGTERM from outside: bwrap dies, and kills it)', async () => {
  const sleep = uniqueSleep()
  const run = await confined('/usr/bin/sleep', [sleep.marker])
  const controller = new AbortController()
  const handle = await spawnConfined(run, controller.signal)
  await until(() => processesWith(sleep.marker).length > 0, 'the confined sleep runs')
  controller.abort()
  // Within the grace: the group's SIGTERM did it, not the SIGKILL a minute later.
  await handle.done
  await until(() => processesWith(sleep.marker).length === 0, 'the confined sleep is gone')
  expect(groupMembers(handle.pid)).toEqual([])
})
