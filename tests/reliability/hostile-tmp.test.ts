import { chmodSync, chownSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { OTHER_UIDS, runAs } from '@deepseek-ai/dsh-testing'
import { BIN, temp, type Temp } from './helpers.ts'

/*
 * `dsh call` as a non-root victim (OTHER_UIDS.victim, through setpriv) in a shared sticky temp dir (TMPDIR), with
 * another local user (OTHER_UIDS.attacker) planting entries there first. The suite runs as root, which sets up
 * both users' files; neither user has an account.
 */
const { attacker, victim } = OTHER_UIDS
let box: Temp
let shared: string
let victimDir: string
let ws: string
let config: string

beforeEach(() => {
  expect(process.getuid?.(), 'the users are played with setpriv, which needs root').toBe(0)
  box = temp('hostile-tmp')
  chmodSync(box.dir, 0o755)
  shared = join(box.dir, 'tmp')
  mkdirSync(shared)
  chmodSync(shared, 0o1777)
  // A directory of the victim's own: it passes every owner and mode check, so only refusing the link protects it.
  victimDir = join(box.dir, 'victim-home')
  mkdirSync(victimDir, { mode: 0o700 })
  writeFileSync(join(victimDir, 'keep.txt'), 'precious')
  ws = join(box.dir, 'ws')
  mkdirSync(ws)
  for (let i = 0; i < 30; i++) writeFileSync(join(ws, `f${String(i).padStart(2, '0')}.txt`), 'needle\n')
  config = join(box.dir, 'config.json')
  writeFileSync(config, JSON.stringify({ 'tool-fs-search': { globMaxResults: 5 } }))
  for (const path of [victimDir, join(victimDir, 'keep.txt')]) chownSync(path, victim, victim)
})
afterEach(() => box.cleanup())

function globAsVictim(): { status: number | null; stdout: string; stderr: string } {
  return runAs(
    victim,
    [process.execPath, BIN, 'call', 'glob', '{"pattern":"*.txt"}', '--cwd', ws, '--config', config],
    {
      env: { PATH: process.env.PATH, TMPDIR: shared, HOME: victimDir },
    },
  )
}

test('dsh as a non-root user saves a capped result in its own private root under the shared temp dir', () => {
  const result = globAsVictim()
  expect(result.stderr).toBe('')
  const locator = /saved at (\S+)\./.exec(result.stdout)?.[1]
  expect(locator, result.stdout).toMatch(new RegExp(`^${shared}/dsh-spill-${victim}/cli/`))
  const root = join(shared, `dsh-spill-${victim}`)
  expect(statSync(root)).toMatchObject({ uid: victim, mode: 0o40700 })
  expect(statSync(locator!)).toMatchObject({ uid: victim, mode: 0o100600 })
})

test('a spill root planted by another user as a symlink to a directory of the victim: the result says it could not be saved, and nothing is written there', () => {
  const planted = runAs(attacker, ['ln', '-s', victimDir, join(shared, `dsh-spill-${victim}`)])
  expect(planted.status, planted.stderr).toBe(0)
  const result = globAsVictim()
  expect(result.status).toBe(0)
  expect(result.stdout).toContain('Showing 5 of 30 files')
  expect(result.stdout).toContain('could not be saved')
  expect(result.stdout).toContain('it is a symbolic link')
  expect(readdirSync(victimDir)).toEqual(['keep.txt'])
})

test('a spill root a temp cleaner removed between two dsh calls is made again, private', () => {
  expect(globAsVictim().stdout).toContain('saved at')
  rmSync(join(shared, `dsh-spill-${victim}`), { recursive: true })
  expect(globAsVictim().stdout).toContain('saved at')
  expect(statSync(join(shared, `dsh-spill-${victim}`))).toMatchObject({ uid: victim, mode: 0o40700 })
})
