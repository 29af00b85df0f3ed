import { readdirSync, readFileSync } from 'node:fs'
import { afterEach, expect, test } from 'vitest'
import type { Confinement } from '@deepseek-ai/dsh-confinement'
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

async function confinement(): Promise<Confinement> {
  f = await fixture()
  return f.t.ctx.get('confinement') as Confinement
}

test('a confined program that exits leaves no process of its group, not even a zombie init', async () => {
  const service = await confinement()
  const groups = recordGroups(f!.t)
  for (let i = 0; i < 5; i++) {
    const { run } = await startConfined(service, confineRequest(f!.root, '/usr/bin/true', []))
    expect(await run.done).toEqual({ exitCode: 0, signal: null })
    expect(groupMembers(groups.at(-1) as number)).toEqual([])
  }
})

test('aborting a confined program stops it (a pid 1 ignores SIGTERM from outside: bwrap dies, and kills it)', async () => {
  const service = await confinement()
  const sleep = uniqueSleep()
  const groups = recordGroups(f!.t)
  const controller = new AbortController()
  const { run } = await startConfined(
    service,
    confineRequest(f!.root, '/usr/bin/sleep', [sleep.marker], undefined, controller.signal),
  )
  // The program itself, not only its launchers (their command lines hold the marker too): bwrap's child asks to die
  // with bwrap before it execs, and a SIGTERM to the group before that ask leaves it to the SIGKILL after the grace.
  await until(
    () =>
      processesWith(sleep.marker).some((pid) => {
        try {
          return readFileSync(`/proc/${pid}/cmdline`, 'latin1').startsWith('/proc/self/fd/6\0')
        } catch {
          return false
        }
      }),
    'the confined sleep runs',
  )
  controller.abort()
  // Within the grace: the group's SIGTERM did it, not the SIGKILL a minute later.
  await run.done
  await until(() => processesWith(sleep.marker).length === 0, 'the confined sleep is gone')
  // Killed by bwrap's death, the namespace's pid 1 is reaped by the host's init, a moment later.
  await until(() => groupMembers(groups.at(-1) as number).length === 0, 'nothing of its group is left')
})
