import { createSession } from '@deepseek-ai/dsh-tools'
import { existsSync } from 'node:fs'
import {
  chmod,
  chown,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rm,
  stat,
  symlink,
  utimes,
  writeFile,
} from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, dirname, isAbsolute, join } from 'node:path'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import fc from 'fast-check'
import { createTestContext, OTHER_UIDS, runAs, until, type TestContext } from '@deepseek-ai/dsh-testing'
import { SpillError, type SaveTextRequest } from '@deepseek-ai/dsh-spill'
import LocalSpillStore, {
  Config,
  PRUNE_INTERVAL_MS,
  PRUNE_STAMP,
  pruneSpillRoot,
  RETRIEVAL_HINT,
  spillFileName,
} from '@deepseek-ai/dsh-spill-local'

/** The one session of these cases (its directory name is random). */
const S1 = createSession({ id: 'session-1', cwd: tmpdir() })

let t: TestContext
let dir: string
let root: string

beforeEach(async () => {
  t = await createTestContext({ withTools: false })
  dir = await mkdtemp(join(tmpdir(), 'spill-local-'))
  root = join(dir, 'root')
})
afterEach(async () => {
  await t.dispose()
  await rm(dir, { recursive: true, force: true })
})

async function load(config: Config = { root }): Promise<LocalSpillStore> {
  await t.active(t.ctx.plugin(LocalSpillStore, config))
  return t.ctx.spillStore as LocalSpillStore
}

function request(overrides: Partial<SaveTextRequest> = {}): SaveTextRequest {
  return {
    owner: S1,
    source: { toolName: 'bash', callId: 'call-1' },
    suggestedName: 'output.txt',
    content: 'hello\n',
    ...overrides,
  }
}

const mode = async (path: string) => (await stat(path)).mode & 0o777

test('saveText keeps the content byte for byte at an absolute path in the session directory', async () => {
  const store = await load()
  const content = 'ünïcødé 🎉\r\nline two\n\u0000tail without newline'
  const saved = await store.saveText(request({ content }))
  expect(isAbsolute(saved.locator)).toBe(true)
  expect(saved.locator).toBe(join(root, S1.dirName, 'call-1-output.txt'))
  expect(saved.bytes).toBe(Buffer.byteLength(content))
  expect(await readFile(saved.locator)).toEqual(Buffer.from(content, 'utf8'))
  expect(saved.retrievalHint).toBe(
    'Page through it with read (offset and limit) or search it with grep, passing that path.',
  )
  expect(saved.retrievalHint).toBe(RETRIEVAL_HINT)
})

test('the root and each session directory are 0700 and files 0600', async () => {
  const store = await load()
  const saved = await store.saveText(request())
  expect(await mode(root)).toBe(0o700)
  expect(await mode(dirname(saved.locator))).toBe(0o700)
  expect(await mode(saved.locator)).toBe(0o600)
})

test('hostile suggested names stay inside the session directory and never fail', async () => {
  const store = await load()
  const names = [
    '../../etc/passwd',
    'a/b',
    '..',
    '.',
    '',
    '/',
    '\\..\\x',
    'a\u0000b',
    'ctl\n\r\t\u001b[31m',
    'x'.repeat(300),
    `${'y'.repeat(300)}.txt`,
    '🎉'.repeat(100),
    '.hidden',
    '-rf',
  ]
  const sessionDir = join(root, S1.dirName)
  const locators = new Set<string>()
  for (const suggestedName of names) {
    const saved = await store.saveText(request({ suggestedName, content: suggestedName }))
    expect(dirname(saved.locator)).toBe(sessionDir)
    expect(Buffer.byteLength(basename(saved.locator))).toBeLessThanOrEqual(255)
    expect(basename(saved.locator)).toMatch(/^[A-Za-z0-9][A-Za-z0-9._-]*$/)
    expect(await readFile(saved.locator, 'utf8')).toBe(suggestedName)
    locators.add(saved.locator)
  }
  expect(locators.size).toBe(names.length)
  expect((await readdir(sessionDir)).length).toBe(names.length)
  expect(await readdir(root)).toEqual([S1.dirName])
  expect(basename([...locators][0]!)).toBe('call-1-etc_passwd')
  expect(basename([...locators][10]!)).toMatch(/^call-1-y+\.txt$/)
})

test('two saves of one name never overwrite each other, also when concurrent', async () => {
  const store = await load()
  const first = await store.saveText(request({ content: 'first' }))
  const second = await store.saveText(request({ content: 'second' }))
  expect(basename(first.locator)).toBe('call-1-output.txt')
  expect(basename(second.locator)).toBe('call-1-output-2.txt')
  const concurrent = await Promise.all(
    Array.from({ length: 20 }, (_, i) => store.saveText(request({ content: `c${i}` }))),
  )
  expect(new Set(concurrent.map((s) => s.locator)).size).toBe(20)
  for (const [i, saved] of concurrent.entries()) expect(await readFile(saved.locator, 'utf8')).toBe(`c${i}`)
  expect(await readFile(first.locator, 'utf8')).toBe('first')
  expect(await readFile(second.locator, 'utf8')).toBe('second')
})

test('sessions are kept apart in directories of random names directly under the root, whatever their ids', async () => {
  const store = await load()
  const ids = ['../escape', '..', '.', '', '/', 'A', 'a', 'a/b', 'a_b', '@a_b', 'x'.repeat(500), 'tab\there']
  const dirs = new Set<string>()
  for (const sessionId of ids) {
    const saved = await store.saveText(request({ owner: createSession({ id: sessionId, cwd: tmpdir() }) }))
    expect(dirname(dirname(saved.locator))).toBe(root)
    dirs.add(dirname(saved.locator))
  }
  expect(dirs.size).toBe(ids.length)
  expect((await readdir(root)).length).toBe(ids.length)
  expect(await readdir(dir)).toEqual(['root'])
})

test('a planted symlink where a spill file would go is never followed', async () => {
  const store = await load()
  const target = join(dir, 'target.txt')
  await writeFile(target, 'precious')
  await mkdir(join(root, S1.dirName), { recursive: true, mode: 0o700 })
  await symlink(target, join(root, S1.dirName, 'call-1-output.txt'))
  const saved = await store.saveText(request({ content: 'spilled' }))
  expect(basename(saved.locator)).toBe('call-1-output-2.txt')
  expect(await readFile(target, 'utf8')).toBe('precious')
})

test('a session directory that is a symlink is refused with SPILL_WRITE_FAILED', async () => {
  const store = await load()
  await mkdir(root, { mode: 0o700 })
  await mkdir(join(dir, 'elsewhere'))
  await symlink(join(dir, 'elsewhere'), join(root, S1.dirName))
  const error = await store.saveText(request()).catch((e: unknown) => e)
  expect(error).toBeInstanceOf(SpillError)
  expect(error).toMatchObject({
    code: 'SPILL_WRITE_FAILED',
    message: `cannot use the session directory ${join(root, S1.dirName)}: it is a symbolic link to ${join(dir, 'elsewhere')}, and a private directory is never reached through one`,
  })
  expect(await readdir(join(dir, 'elsewhere'))).toEqual([])
})

test('a session directory removed between saves is made again', async () => {
  const store = await load()
  const first = await store.saveText(request())
  await rm(dirname(first.locator), { recursive: true })
  const second = await store.saveText(request({ content: 'again' }))
  expect(second.locator).toBe(first.locator)
  expect(await readFile(second.locator, 'utf8')).toBe('again')
  expect(await mode(dirname(second.locator))).toBe(0o700)
})

test('a root that is a file rejects with SPILL_WRITE_FAILED naming the root, and works once repaired', async () => {
  await writeFile(root, 'not a directory')
  const store = await load()
  const error = await store.saveText(request()).catch((e: unknown) => e)
  expect(error).toBeInstanceOf(SpillError)
  expect((error as SpillError).code).toBe('SPILL_WRITE_FAILED')
  expect((error as SpillError).message).toBe(`spill root ${root} is unusable: it is not a directory`)
  await rm(root)
  const saved = await store.saveText(request())
  expect(await readFile(saved.locator, 'utf8')).toBe('hello\n')
})

test('a root below a file rejects with SPILL_WRITE_FAILED naming the root', async () => {
  await writeFile(join(dir, 'file'), '')
  const below = join(dir, 'file', 'root')
  const store = await load({ root: below })
  await expect(store.saveText(request())).rejects.toMatchObject({
    code: 'SPILL_WRITE_FAILED',
    message: expect.stringMatching(
      new RegExp(`^spill root ${below} is unusable: a parent is not a directory \\(ENOTDIR`),
    ),
  })
})

test('a root where nothing can be created rejects with SPILL_WRITE_FAILED naming the root and the cause', async () => {
  // /proc/<pid> is a directory of this process's user, not writable by others, in which nothing can be created.
  const proc = `/proc/${process.pid}`
  const store = await load({ root: proc })
  await expect(store.saveText(request())).rejects.toMatchObject({
    code: 'SPILL_WRITE_FAILED',
    message: expect.stringMatching(
      new RegExp(
        `^spill root ${proc} is unusable: E[A-Z]+: |^cannot create the session directory ${proc}/session-1 in spill root ${proc}: cannot create it: E[A-Z]+: `,
      ),
    ),
  })
})

test('a root other users can write to is refused', async () => {
  await mkdir(root)
  await chmod(root, 0o777)
  const store = await load()
  await expect(store.saveText(request())).rejects.toMatchObject({
    code: 'SPILL_WRITE_FAILED',
    message: `spill root ${root} is unusable: other users can write to it; use a private directory`,
  })
})

test('a root owned by another user is refused', async () => {
  // As root, hand a fresh directory to `nobody`; as anyone else, `/` already belongs to someone else.
  const uid = process.getuid!()
  let foreign = '/'
  if (uid === 0) {
    foreign = root
    await mkdir(foreign, { mode: 0o700 })
    await chown(foreign, 65534, 65534)
  }
  const owner = (await stat(foreign)).uid
  const store = await load({ root: foreign })
  await expect(store.saveText(request())).rejects.toMatchObject({
    code: 'SPILL_WRITE_FAILED',
    message: `spill root ${foreign} is unusable: it is owned by uid ${owner}, not by this user (uid ${uid})`,
  })
})

test('the default root is a private per-user directory under the OS temp dir, and files outlive the store', async () => {
  const previous = process.env.TMPDIR
  process.env.TMPDIR = dir
  try {
    const store = await load({})
    const expectedRoot = join(dir, `dsh-spill-${process.getuid!()}`)
    expect(store.root).toBe(expectedRoot)
    const saved = await store.saveText(request({ content: 'kept' }))
    expect(dirname(dirname(saved.locator))).toBe(expectedRoot)
    expect(await mode(expectedRoot)).toBe(0o700)
    await t.ctx.fiber.dispose()
    expect(await readFile(saved.locator, 'utf8')).toBe('kept')
  } finally {
    if (previous === undefined) delete process.env.TMPDIR
    else process.env.TMPDIR = previous
  }
})

test('sanitised names never escape, for arbitrary strings (property)', () => {
  fc.assert(
    fc.property(
      fc.string({ unit: 'binary', maxLength: 400 }),
      fc.string({ unit: 'binary', maxLength: 400 }),
      (id, name) => {
        for (const component of [spillFileName(id, name), spillFileName('', name)]) {
          expect(component).not.toBe('')
          expect(component).not.toBe('.')
          expect(component).not.toBe('..')
          expect(component).not.toMatch(/[/\\\u0000-\u001f]/)
          expect(Buffer.byteLength(component)).toBeLessThanOrEqual(200)
          expect(join('/root', component).startsWith('/root/')).toBe(true)
          expect(dirname(join('/root', component))).toBe('/root')
        }
      },
    ),
    { seed: 5, numRuns: 2000 },
  )
})

test('a session directory of ours with loose permissions is made private again', async () => {
  await mkdir(join(root, S1.dirName), { recursive: true, mode: 0o700 })
  await chmod(join(root, S1.dirName), 0o755)
  const store = await load()
  await store.saveText(request())
  expect(await mode(join(root, S1.dirName))).toBe(0o700)
  expect((await lstat(join(root, S1.dirName))).isDirectory()).toBe(true)
})

test('no descriptor is left open after saves, collisions and failures', async () => {
  const store = await load()
  await store.saveText(request())
  await writeFile(join(root, 'blocked'), 'a file where a session directory would go')
  // Made before counting: each session holds its root open until disposed.
  const others = Array.from({ length: 20 }, (_, i) => createSession({ id: `s${i}`, cwd: tmpdir() }))
  const blocked = createSession({ id: 'blocked', cwd: tmpdir(), dirName: 'blocked' })
  const fds = (await readdir('/proc/self/fd')).length
  for (const other of others) {
    await Promise.all([
      store.saveText(request()),
      store.saveText(request({ owner: other })),
      expect(store.saveText(request({ owner: blocked }))).rejects.toMatchObject({ code: 'SPILL_WRITE_FAILED' }),
    ])
  }
  expect((await readdir('/proc/self/fd')).length).toBe(fds)
  for (const session of [...others, blocked]) await session.dispose()
})

/*
 * Another local user is played with setpriv (the suite runs as root): `runAs(OTHER_UIDS.attacker, …)` plants
 * entries in a shared, sticky, world-writable directory that stands in for /tmp (TMPDIR points at it).
 */
describe('a hostile temp dir', () => {
  let shared: string
  let victimDir: string
  let previousTmp: string | undefined

  beforeEach(async () => {
    expect(process.getuid?.(), 'another user is played with setpriv, which needs root').toBe(0)
    await chmod(dir, 0o755)
    shared = join(dir, 'tmp')
    await mkdir(shared)
    await chmod(shared, 0o1777)
    // A directory of the victim (this user): it passes every owner and mode check.
    victimDir = join(dir, 'home')
    await mkdir(victimDir, { mode: 0o700 })
    await writeFile(join(victimDir, 'keep.txt'), 'precious')
    previousTmp = process.env.TMPDIR
    process.env.TMPDIR = shared
  })
  afterEach(() => {
    if (previousTmp === undefined) delete process.env.TMPDIR
    else process.env.TMPDIR = previousTmp
  })

  const plant = (argv: string[]) => {
    const result = runAs(OTHER_UIDS.attacker, argv)
    expect(result.status, result.stderr).toBe(0)
  }

  test('a symlink another user planted as the root is refused: the save fails and nothing lands where it points', async () => {
    const store = await load({})
    plant(['ln', '-s', victimDir, store.root])
    await expect(store.saveText(request())).rejects.toMatchObject({
      code: 'SPILL_WRITE_FAILED',
      message: `spill root ${store.root} is unusable: it is a symbolic link to ${victimDir}, and a private directory is never reached through one`,
    })
    expect(await readdir(victimDir)).toEqual(['keep.txt'])
  })

  test('a directory another user made as the root is refused', async () => {
    const store = await load({})
    plant(['mkdir', '-m', '0777', store.root])
    await expect(store.saveText(request())).rejects.toMatchObject({
      code: 'SPILL_WRITE_FAILED',
      message: `spill root ${store.root} is unusable: it is owned by uid ${OTHER_UIDS.attacker}, not by this user (uid 0)`,
    })
    expect(await readdir(store.root)).toEqual([])
  })

  test('a root removed mid-session (a temp cleaner) is made again, private, on the next save', async () => {
    const store = await load({})
    const first = await store.saveText(request({ content: 'one' }))
    await rm(store.root, { recursive: true })
    const second = await store.saveText(request({ content: 'two' }))
    expect(second.locator).toBe(first.locator)
    expect(await readFile(second.locator, 'utf8')).toBe('two')
    expect(await mode(store.root)).toBe(0o700)
    expect(await mode(dirname(second.locator))).toBe(0o700)
  })

  test('a root removed by a cleaner and replanted as a symlink by another user is refused on the next save', async () => {
    const store = await load({})
    await store.saveText(request())
    await rm(store.root, { recursive: true })
    plant(['ln', '-s', victimDir, store.root])
    await expect(store.saveText(request())).rejects.toMatchObject({
      code: 'SPILL_WRITE_FAILED',
      message: expect.stringContaining('it is a symbolic link'),
    })
    expect(await readdir(victimDir)).toEqual(['keep.txt'])
  })
})

describe('pruning at start-up', () => {
  const DAY = 86_400_000

  async function pinned(path: string, ageMs: number): Promise<void> {
    const when = new Date(Date.now() - ageMs)
    await utimes(path, when, when)
  }

  /** `<root>/old-session/a.txt` (9 days), `<root>/live/old.txt` (9 days) and `live/new.txt` (1 day). */
  async function aged(at: string): Promise<void> {
    await mkdir(join(at, 'old-session'), { recursive: true, mode: 0o700 })
    await mkdir(join(at, 'live'), { mode: 0o700 })
    await writeFile(join(at, 'old-session', 'a.txt'), 'old')
    await writeFile(join(at, 'live', 'old.txt'), 'old')
    await writeFile(join(at, 'live', 'new.txt'), 'new')
    await pinned(join(at, 'old-session', 'a.txt'), 9 * DAY)
    await pinned(join(at, 'live', 'old.txt'), 9 * DAY)
    await pinned(join(at, 'live', 'new.txt'), DAY)
    await pinned(join(at, 'old-session'), 9 * DAY)
    await pinned(join(at, 'live'), DAY)
  }

  test("saved results older than pruneAfterDays (default 7) go at start-up; recent ones, other users' and symlinked ones stay", async () => {
    await aged(root)
    await writeFile(join(root, 'live', 'theirs.txt'), 'theirs')
    await chown(join(root, 'live', 'theirs.txt'), OTHER_UIDS.attacker, OTHER_UIDS.attacker)
    await pinned(join(root, 'live', 'theirs.txt'), 30 * DAY)
    const elsewhere = join(dir, 'elsewhere')
    await mkdir(elsewhere)
    await writeFile(join(elsewhere, 'ancient.txt'), 'keep')
    await pinned(join(elsewhere, 'ancient.txt'), 30 * DAY)
    await symlink(elsewhere, join(root, 'link'))
    await load()
    await until(() => !existsSync(join(root, 'old-session')), 'the old session is pruned')
    await until(() => !existsSync(join(root, 'live', 'old.txt')), 'the old file is pruned')
    expect((await readdir(root)).sort()).toEqual(['.last-prune', 'link', 'live'])
    expect((await readdir(join(root, 'live'))).sort()).toEqual(['new.txt', 'theirs.txt'])
    expect(await readdir(elsewhere)).toEqual(['ancient.txt'])
  })

  test('pruneAfterDays is configurable, and 0 keeps everything', async () => {
    const kept = join(dir, 'kept')
    await aged(kept)
    await aged(root)
    // Both stores start together; once the 1-day one has pruned, the 0-day one has had its chance too.
    const other = await createTestContext({ withTools: false })
    try {
      await other.active(other.ctx.plugin(LocalSpillStore, { root: kept, pruneAfterDays: 0 }))
      await load({ root, pruneAfterDays: 0.5 })
      await until(() => !existsSync(join(root, 'live', 'new.txt')), 'the 1-day-old file is pruned at 0.5 days')
    } finally {
      await other.dispose()
    }
    expect((await readdir(kept)).sort()).toEqual(['live', 'old-session'])
    expect((await readdir(join(kept, 'live'))).sort()).toEqual(['new.txt', 'old.txt'])
    expect(() => Config({ pruneAfterDays: -1 })).toThrow(/pruneAfterDays/)
    expect(Config({}).pruneAfterDays).toBe(7)
  })

  test('pruneSpillRoot through the API: counts what it removed, and a missing root prunes nothing', async () => {
    await aged(root)
    expect(await pruneSpillRoot(root, Date.now() - 7 * DAY)).toEqual({ files: 2, directories: 1, bytes: 6 })
    expect(await pruneSpillRoot(join(dir, 'missing'), Date.now())).toEqual({ files: 0, directories: 0, bytes: 0 })
    expect(existsSync(join(dir, 'missing'))).toBe(false)
  })

  test('a root pruned within the hour is not pruned again at start-up (one dsh call per tool call must not rescan)', async () => {
    await aged(root)
    expect((await pruneSpillRoot(root, Date.now() - 7 * DAY, { unlessWithinMs: PRUNE_INTERVAL_MS })).files).toBe(2)
    expect((await lstat(join(root, PRUNE_STAMP))).mode & 0o777).toBe(0o600)
    await writeFile(join(root, 'live', 'old-again.txt'), 'old')
    await pinned(join(root, 'live', 'old-again.txt'), 9 * DAY)
    expect(await pruneSpillRoot(root, Date.now() - 7 * DAY, { unlessWithinMs: PRUNE_INTERVAL_MS })).toEqual({
      files: 0,
      directories: 0,
      bytes: 0,
    })
    expect(existsSync(join(root, 'live', 'old-again.txt'))).toBe(true)
    // An hour later (the stamp aged by hand), it is due again.
    await pinned(join(root, PRUNE_STAMP), PRUNE_INTERVAL_MS + 60_000)
    expect((await pruneSpillRoot(root, Date.now() - 7 * DAY, { unlessWithinMs: PRUNE_INTERVAL_MS })).files).toBe(1)
  })
})

test('saveStream writes the parts as they come, a character split across two parts included, byte for byte', async () => {
  const store = await load()
  const euro = Buffer.from('€')
  function* parts(): Generator<Uint8Array | string> {
    yield 'head\n'
    yield euro.subarray(0, 1)
    yield euro.subarray(1)
    yield Buffer.from('\nbytes\n')
  }
  const saved = await store.saveStream({ ...request(), content: parts() })
  expect(saved.locator).toBe(join(root, S1.dirName, 'call-1-output.txt'))
  expect(saved.bytes).toBe(Buffer.byteLength('head\n€\nbytes\n'))
  expect(await readFile(saved.locator, 'utf8')).toBe('head\n€\nbytes\n')
  expect(await mode(saved.locator)).toBe(0o600)
})

test('saveStream whose parts fail midway rejects with SPILL_WRITE_FAILED and leaves no partial file', async () => {
  const store = await load()
  function* parts(): Generator<string> {
    yield 'some rows\n'
    throw new Error('the temporary file went away')
  }
  await expect(store.saveStream({ ...request(), content: parts() })).rejects.toMatchObject({
    code: 'SPILL_WRITE_FAILED',
  })
  expect(await readdir(join(root, S1.dirName))).toEqual([])
})
