import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { createTestContext, OTHER_UIDS, runAs } from '@deepseek-ai/dsh-testing'
import LocalSubprocess, { PRUNE_INTERVAL_MS, pruneOutputDirs, pruneStampName } from '../src/index.ts'
import { fixture, until, type Fixture } from './helpers.ts'

/*
 * The suite runs as root; another local user is played with setpriv (`runAs(OTHER_UIDS.attacker, …)`), planting
 * entries in a sticky, world-writable directory that stands in for /tmp and is the provider's `spillDir`.
 */
let base: string
let shared: string
let victimDir: string
let f: Fixture | undefined

const DAY = 86_400_000

beforeEach(() => {
  expect(process.getuid?.(), 'another user is played with setpriv, which needs root').toBe(0)
  base = mkdtempSync(join(tmpdir(), 'output-dir-'))
  chmodSync(base, 0o755)
  shared = join(base, 'tmp')
  mkdirSync(shared)
  chmodSync(shared, 0o1777)
  victimDir = join(base, 'home')
  mkdirSync(victimDir, { mode: 0o700 })
  writeFileSync(join(victimDir, 'keep.txt'), 'precious')
})
afterEach(async () => {
  await f?.cleanup()
  f = undefined
  rmSync(base, { recursive: true, force: true })
})

/** A command whose stdout passes the 16-byte tail, so that its complete output goes to a spill file. */
async function spill(text: string): Promise<string> {
  const handle = await f!.spawn({
    argv: ['printf', '%s', text],
    stdout: { maxBytes: 16, spill: { maxBytes: 1 << 20 } },
  })
  await handle.done
  const path = handle.collected.stdout!.readFrom(0).spillPath
  expect(path, 'the output was kept').toBeDefined()
  return path!
}

const mode = (path: string) => statSync(path).mode & 0o777

test('the first spill makes a private dsh-subprocess-XXXXXX directory; the file is 0600', async () => {
  f = await fixture({ spillDir: shared })
  const path = await spill('a long enough output line\n')
  expect(dirname(path)).toMatch(new RegExp(`^${shared}/dsh-subprocess-[A-Za-z0-9]{6}$`))
  expect(mode(dirname(path))).toBe(0o700)
  expect(mode(path)).toBe(0o600)
  expect(readFileSync(path, 'utf8')).toBe('a long enough output line\n')
})

test('an output directory removed mid-session (a temp cleaner) is made again: later long outputs are still kept', async () => {
  f = await fixture({ spillDir: shared })
  const first = await spill('first long output, kept\n')
  rmSync(dirname(first), { recursive: true })
  const second = await spill('second long output, kept too\n')
  expect(readFileSync(second, 'utf8')).toBe('second long output, kept too\n')
  expect(dirname(second)).not.toBe(dirname(first))
  expect(mode(dirname(second))).toBe(0o700)
})

test('a removed output directory whose name another user then took as a symlink is never written through', async () => {
  f = await fixture({ spillDir: shared })
  const first = await spill('first long output, kept\n')
  rmSync(dirname(first), { recursive: true })
  const planted = runAs(OTHER_UIDS.attacker, ['ln', '-s', victimDir, dirname(first)])
  expect(planted.status, planted.stderr).toBe(0)
  const second = await spill('second long output, kept elsewhere\n')
  expect(dirname(second)).not.toBe(dirname(first))
  expect(readFileSync(second, 'utf8')).toBe('second long output, kept elsewhere\n')
  expect(readdirSync(victimDir)).toEqual(['keep.txt'])
})

test('a spill parent where no private directory can be made loses only the full output: the tail is still collected', async () => {
  const file = join(base, 'a-file')
  writeFileSync(file, '')
  f = await fixture({ spillDir: join(file, 'below') })
  const handle = await f.spawn({
    argv: ['printf', '%s', 'x'.repeat(100)],
    stdout: { maxBytes: 16, spill: { maxBytes: 1 << 20 } },
  })
  await handle.done
  expect(handle.collected.stdout!.readFrom(0)).toMatchObject({ text: 'x'.repeat(16), lossy: true })
  expect(handle.collected.stdout!.readFrom(0).spillPath).toBeUndefined()
})

/** `<parent>/<name>/<file>` with pinned ages (ms); the directory's own age is `dirAge`. */
function aged(parent: string, name: string, files: Record<string, number>, dirAge: number): string {
  const dir = join(parent, name)
  mkdirSync(dir, { mode: 0o700 })
  for (const [file, age] of Object.entries(files)) {
    writeFileSync(join(dir, file), 'x'.repeat(10))
    utimesSync(join(dir, file), new Date(Date.now() - age), new Date(Date.now() - age))
  }
  utimesSync(dir, new Date(Date.now() - dirAge), new Date(Date.now() - dirAge))
  return dir
}

test('at start-up, full-output files older than pruneAfterDays (default 7) go; recent ones, other names, other users and symlinks stay', async () => {
  aged(shared, 'dsh-subprocess-Old123', { '1-10-stdout.log': 9 * DAY }, 9 * DAY)
  aged(shared, 'dsh-subprocess-Mix456', { '1-11-stdout.log': 9 * DAY, '2-12-stderr.log': DAY }, DAY)
  aged(shared, 'dsh-subprocess-test-x', { 'f.log': 9 * DAY }, 9 * DAY)
  const theirs = aged(shared, 'dsh-subprocess-Thr789', { '1-13-stdout.log': 9 * DAY }, 9 * DAY)
  chownSync(theirs, OTHER_UIDS.attacker, OTHER_UIDS.attacker)
  writeFileSync(join(victimDir, 'ancient.log'), 'keep')
  utimesSync(join(victimDir, 'ancient.log'), new Date(Date.now() - 30 * DAY), new Date(Date.now() - 30 * DAY))
  symlinkSync(victimDir, join(shared, 'dsh-subprocess-Lnk000'))
  f = await fixture({ spillDir: shared })
  await until(() => !existsSync(join(shared, 'dsh-subprocess-Old123')), 'the old directory is pruned')
  await until(() => !existsSync(join(shared, 'dsh-subprocess-Mix456', '1-11-stdout.log')), 'the old file is pruned')
  expect(readdirSync(shared).sort()).toEqual([
    pruneStampName(),
    'dsh-subprocess-Lnk000',
    'dsh-subprocess-Mix456',
    'dsh-subprocess-Thr789',
    'dsh-subprocess-test-x',
  ])
  expect(readdirSync(join(shared, 'dsh-subprocess-Mix456'))).toEqual(['2-12-stderr.log'])
  expect(readdirSync(theirs)).toEqual(['1-13-stdout.log'])
  expect(readdirSync(join(shared, 'dsh-subprocess-test-x'))).toEqual(['f.log'])
  expect(readdirSync(victimDir).sort()).toEqual(['ancient.log', 'keep.txt'])
})

test('a parent this user pruned within the hour is not scanned again: the stamp is its own file, 0600, renewed when it prunes', async () => {
  const old = () => aged(shared, 'dsh-subprocess-Old123', { '1-10-stdout.log': 9 * DAY }, 9 * DAY)
  const before = Date.now() - 7 * DAY
  old()
  expect(await pruneOutputDirs(shared, before, { unlessWithinMs: PRUNE_INTERVAL_MS })).toEqual({
    files: 1,
    directories: 1,
    bytes: 10,
  })
  const stamp = join(shared, pruneStampName())
  expect(mode(stamp)).toBe(0o600)
  old()
  expect(await pruneOutputDirs(shared, before, { unlessWithinMs: PRUNE_INTERVAL_MS })).toEqual({
    files: 0,
    directories: 0,
    bytes: 0,
  })
  expect(existsSync(join(shared, 'dsh-subprocess-Old123'))).toBe(true)
  // An hour later it is due again, and stamped anew.
  utimesSync(
    stamp,
    new Date(Date.now() - PRUNE_INTERVAL_MS - 60_000),
    new Date(Date.now() - PRUNE_INTERVAL_MS - 60_000),
  )
  expect((await pruneOutputDirs(shared, before, { unlessWithinMs: PRUNE_INTERVAL_MS })).files).toBe(1)
  expect(Date.now() - statSync(stamp).mtimeMs).toBeLessThan(PRUNE_INTERVAL_MS)
})

test("a stamp that is not ours — another user's fresh file, or a symlink to a fresh file — is not trusted, and neither touched nor followed", async () => {
  const before = Date.now() - 7 * DAY
  const stamp = join(shared, pruneStampName())
  expect(runAs(OTHER_UIDS.attacker, ['touch', stamp]).status).toBe(0)
  aged(shared, 'dsh-subprocess-Old123', { '1-10-stdout.log': 9 * DAY }, 9 * DAY)
  expect((await pruneOutputDirs(shared, before, { unlessWithinMs: PRUNE_INTERVAL_MS })).files).toBe(1)
  expect(statSync(stamp).uid).toBe(OTHER_UIDS.attacker)
  rmSync(stamp)
  const target = join(victimDir, 'fresh')
  writeFileSync(target, 'x')
  // Half an hour old: trusted through the link, it would skip the pruning; touched, it would be new.
  const halfAnHour = new Date(Date.now() - PRUNE_INTERVAL_MS / 2)
  utimesSync(target, halfAnHour, halfAnHour)
  symlinkSync(target, stamp)
  aged(shared, 'dsh-subprocess-Old456', { '1-10-stdout.log': 9 * DAY }, 9 * DAY)
  expect((await pruneOutputDirs(shared, before, { unlessWithinMs: PRUNE_INTERVAL_MS })).files).toBe(1)
  expect(Math.round(statSync(target).mtimeMs)).toBe(halfAnHour.getTime())
})

test('pruneAfterDays: 0 prunes nothing; pruneOutputDirs counts what it removed', async () => {
  const dir = aged(shared, 'dsh-subprocess-Old123', { '1-10-stdout.log': 9 * DAY }, 9 * DAY)
  const other = aged(base, 'dsh-subprocess-Ref000', { '1-10-stdout.log': 9 * DAY }, 9 * DAY)
  // A second provider pruning another parent at the same time: once it is done, the first had its chance too.
  const t = await createTestContext({ withTools: false })
  try {
    f = await fixture({ spillDir: shared, pruneAfterDays: 0 })
    await t.active(t.ctx.plugin(LocalSubprocess, { spillDir: base, pruneAfterDays: 1 }))
    await until(() => !existsSync(other), 'the other parent is pruned')
  } finally {
    await t.dispose()
  }
  expect(readdirSync(dir)).toEqual(['1-10-stdout.log'])
  expect(await pruneOutputDirs(shared, Date.now() - 7 * DAY)).toEqual({ files: 1, directories: 1, bytes: 10 })
  expect(await pruneOutputDirs(join(base, 'missing'), Date.now())).toEqual({ files: 0, directories: 0, bytes: 0 })
  expect(basename(dir)).toBe('dsh-subprocess-Old123')
})
