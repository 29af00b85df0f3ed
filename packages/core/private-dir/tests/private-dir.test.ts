import {
  chmodSync,
  chownSync,
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
  writeSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { OTHER_UIDS, runAs } from '@deepseek-ai/dsh-testing'
import {
  anchored,
  CREATE_FILE_FLAGS,
  makePrivateTempDir,
  openPrivateDir,
  openSharedDir,
  prune,
  PrivateDirError,
} from '@deepseek-ai/dsh-private-dir'

/*
 * The suite runs as root (as on this project's CI). Another local user is played by `setpriv` with a numeric uid
 * (OTHER_UIDS.attacker); where ownership matters for the victim too, the victim runs as OTHER_UIDS.victim.
 */
const { attacker, victim } = OTHER_UIDS
const DAY = 86_400_000

let base: string
/** A world-writable directory like /tmp (mode given per test), inside a private temp dir of the test. */
let shared: string

beforeEach(() => {
  expect(process.getuid?.(), 'these tests play other users with setpriv, which needs root').toBe(0)
  base = mkdtempSync(join(tmpdir(), 'private-dir-'))
  chmodSync(base, 0o755)
  shared = join(base, 'tmp')
  mkdirSync(shared)
  chmodSync(shared, 0o1777)
})
afterEach(() => rmSync(base, { recursive: true, force: true }))

function plantAs(uid: number, argv: string[]): void {
  const result = runAs(uid, argv)
  expect(result.status, result.stderr).toBe(0)
}

/** A directory of `owner` holding one file, as the target of a planted symlink. */
function precious(owner: number): string {
  const dir = join(base, `home-${owner}`)
  mkdirSync(dir, { mode: 0o700 })
  writeFileSync(join(dir, 'keep.txt'), 'precious')
  chownSync(dir, owner, owner)
  chownSync(join(dir, 'keep.txt'), owner, owner)
  return dir
}

const mode = (path: string) => statSync(path).mode & 0o7777

function caught(fn: () => unknown): PrivateDirError {
  try {
    fn()
  } catch (error) {
    expect(error).toBeInstanceOf(PrivateDirError)
    return error as PrivateDirError
  }
  throw new Error('expected a PrivateDirError')
}

test('a missing directory is created 0700 and opened', () => {
  const path = join(shared, 'dsh-x')
  using dir = openPrivateDir(path)
  expect(dir.path).toBe(path)
  expect(mode(path)).toBe(0o700)
  expect(statSync(dir.self).ino).toBe(statSync(path).ino)
})

test('a symlink that another user planted at the name is refused and never followed', () => {
  const target = precious(0)
  const path = join(shared, 'dsh-x')
  plantAs(attacker, ['ln', '-s', target, path])
  const error = caught(() => openPrivateDir(path))
  expect(error.code).toBe('PRIVATE_DIR_UNUSABLE')
  expect(error.message).toBe(
    `${path}: it is a symbolic link to ${target}, and a private directory is never reached through one`,
  )
  expect(readdirSync(target)).toEqual(['keep.txt'])
  expect(mode(target)).toBe(0o700)
})

test('a directory that another user made at the name is refused', () => {
  const path = join(shared, 'dsh-x')
  plantAs(attacker, ['mkdir', '-m', '0777', path])
  const error = caught(() => openPrivateDir(path))
  expect(error.code).toBe('PRIVATE_DIR_UNUSABLE')
  expect(error.reason).toBe(`it is owned by uid ${attacker}, not by this user (uid 0)`)
  expect(readdirSync(path)).toEqual([])
})

test('a file at the name is refused; a missing one is reported when it was not to be created', () => {
  const file = join(shared, 'file')
  writeFileSync(file, '')
  expect(caught(() => openPrivateDir(file)).reason).toBe('it is not a directory')
  const below = caught(() => openPrivateDir(join(file, 'dir')))
  expect(below.code).toBe('PRIVATE_DIR_FAILED')
  expect(below.reason).toMatch(/^a parent is not a directory \(ENOTDIR/)
  const missing = caught(() => openPrivateDir(join(shared, 'none'), { create: false }))
  expect(missing).toMatchObject({ code: 'PRIVATE_DIR_MISSING', reason: 'it does not exist' })
  expect(existsSync(join(shared, 'none'))).toBe(false)
})

test('a directory of ours with a loose mode is made 0700; one that others can write is refused when asked', () => {
  const loose = join(shared, 'loose')
  mkdirSync(loose)
  chmodSync(loose, 0o755)
  openPrivateDir(loose).close()
  expect(mode(loose)).toBe(0o700)
  const open = join(shared, 'open')
  mkdirSync(open)
  chmodSync(open, 0o777)
  expect(caught(() => openPrivateDir(open, { writable: 'refuse' })).reason).toBe(
    'other users can write to it; use a private directory',
  )
  expect(mode(open)).toBe(0o777)
  openPrivateDir(open, { tighten: false }).close()
  expect(mode(open)).toBe(0o777)
})

test('a new file through at() lands in the opened directory even after its path was swapped for a symlink', () => {
  expect(anchored).toBe(true)
  const target = precious(0)
  const path = join(shared, 'dsh-x')
  using dir = openPrivateDir(path)
  // A temp cleaner (root) moves the directory away, and another user plants a symlink at its name.
  renameSync(path, join(base, 'moved'))
  plantAs(attacker, ['ln', '-s', target, path])
  const fd = openSync(dir.at('out.log'), CREATE_FILE_FLAGS, 0o600)
  writeSync(fd, 'spilled')
  closeSync(fd)
  expect(readFileSync(join(base, 'moved', 'out.log'), 'utf8')).toBe('spilled')
  expect(readdirSync(target)).toEqual(['keep.txt'])
  // The subdirectory goes through the descriptor too.
  dir.subdir('session').close()
  expect(readdirSync(join(base, 'moved')).sort()).toEqual(['out.log', 'session'])
  expect(readdirSync(target)).toEqual(['keep.txt'])
})

test('once the opened directory is removed, nothing can be created through it (ENOENT), and reopening makes it anew', () => {
  const path = join(shared, 'dsh-x')
  const dir = openPrivateDir(path)
  rmSync(path, { recursive: true })
  expect(() => openSync(dir.at('out.log'), CREATE_FILE_FLAGS, 0o600)).toThrow(
    expect.objectContaining({ code: 'ENOENT' }),
  )
  expect(caught(() => dir.subdir('session')).errno).toBe('ENOENT')
  dir.close()
  expect(existsSync(path)).toBe(false)
  using again = openPrivateDir(path)
  expect(mode(path)).toBe(0o700)
  expect(again.path).toBe(path)
})

test('makePrivateTempDir makes a fresh 0700 directory with the prefix, creating the parent', () => {
  using first = makePrivateTempDir(join(base, 'new', 'parent'), 'dsh-subprocess-')
  using second = makePrivateTempDir(join(base, 'new', 'parent'), 'dsh-subprocess-')
  expect(first.path).toMatch(/\/new\/parent\/dsh-subprocess-[A-Za-z0-9]{6}$/)
  expect(second.path).not.toBe(first.path)
  expect(mode(first.path)).toBe(0o700)
})

test('the victim as a non-root user: a planted symlink to a directory of the victim is refused, and nothing is written there', () => {
  // The victim's own directory passes every owner and mode check; only the refusal to follow the link protects it.
  const target = precious(victim)
  const path = join(shared, `dsh-spill-${victim}`)
  plantAs(attacker, ['ln', '-s', target, path])
  const module = fileURLToPath(new URL('../dist/index.js', import.meta.url))
  const script = `import { openPrivateDir } from ${JSON.stringify(module)}
try { openPrivateDir(process.argv[1]); console.log('opened') } catch (e) { console.log(e.code + ' ' + e.reason) }`
  const result = runAs(victim, [process.execPath, '--input-type=module', '-e', script, path])
  expect(result.stderr).toBe('')
  expect(result.stdout).toBe(
    `PRIVATE_DIR_UNUSABLE it is a symbolic link to ${target}, and a private directory is never reached through one\n`,
  )
  expect(readdirSync(target)).toEqual(['keep.txt'])
})

/** A tree for pruning: `<root>/<session>/<file>`, with pinned times. */
function tree(root: string, entries: Record<string, number>): void {
  mkdirSync(root, { recursive: true, mode: 0o700 })
  for (const path of Object.keys(entries)) {
    const full = join(root, path)
    if (path.endsWith('/')) mkdirSync(full, { recursive: true, mode: 0o700 })
    else {
      mkdirSync(join(full, '..'), { recursive: true, mode: 0o700 })
      writeFileSync(full, 'x'.repeat(10))
    }
  }
  // Times last, deepest first: creating an entry touches its parent's time.
  for (const [path, age] of Object.entries(entries).sort(([a], [b]) => b.length - a.length)) {
    const when = new Date(Date.now() - age)
    utimesSync(join(root, path), when, when)
  }
}

const list = (dir: string): string[] => readdirSync(dir, { recursive: true }).map(String).sort()

test('prune removes old files and the old directories left empty, and keeps recent ones', async () => {
  const root = join(base, 'root')
  tree(root, {
    'old/a.txt': 9 * DAY,
    'old/b.txt': 8 * DAY,
    'old/': 8 * DAY,
    'mixed/new.txt': DAY,
    'mixed/old.txt': 9 * DAY,
    'mixed/': DAY,
    'empty-old/': 9 * DAY,
    'empty-new/': 0,
  })
  using dir = openPrivateDir(root)
  const count = await prune(dir, { before: Date.now() - 7 * DAY })
  expect(count).toEqual({ files: 3, directories: 2, bytes: 30 })
  expect(list(root)).toEqual(['empty-new', 'mixed', 'mixed/new.txt'])
})

test('prune touches nothing of another user and never goes through a symlink', async () => {
  const root = join(base, 'root')
  tree(root, {
    's/own.txt': 9 * DAY,
    's/': 9 * DAY,
    'theirs.txt': 9 * DAY,
    'their-dir/x.txt': 9 * DAY,
    'their-dir/': 9 * DAY,
  })
  chownSync(join(root, 'theirs.txt'), attacker, attacker)
  chownSync(join(root, 'their-dir'), attacker, attacker)
  const target = precious(0)
  utimesSync(join(target, 'keep.txt'), new Date(Date.now() - 30 * DAY), new Date(Date.now() - 30 * DAY))
  symlinkSync(target, join(root, 'link'))
  symlinkSync(join(target, 'keep.txt'), join(root, 'file-link'))
  using dir = openPrivateDir(root)
  const count = await prune(dir, { before: Date.now() - 7 * DAY })
  expect(count).toEqual({ files: 1, directories: 1, bytes: 10 })
  expect(readdirSync(root).sort()).toEqual(['file-link', 'link', 'their-dir', 'theirs.txt'])
  expect(readdirSync(join(root, 'their-dir'))).toEqual(['x.txt'])
  expect(readdirSync(target)).toEqual(['keep.txt'])
})

test('prune in a shared directory considers only the matching names, and nothing when others may swap entries', async () => {
  tree(shared, {
    'dsh-subprocess-AbC123/1-1-stdout.log': 9 * DAY,
    'dsh-subprocess-AbC123/': 9 * DAY,
    'dsh-subprocess-test-x/f': 9 * DAY,
    'other.log': 9 * DAY,
  })
  chmodSync(shared, 0o1777)
  const match = (name: string) => /^dsh-subprocess-[A-Za-z0-9]{6}$/.test(name)
  // Not sticky and world-writable: another user could swap an entry between its check and its removal.
  chmodSync(shared, 0o777)
  using open = openSharedDir(shared)
  expect(await prune(open, { before: Date.now() - 7 * DAY, match })).toEqual({ files: 0, directories: 0, bytes: 0 })
  chmodSync(shared, 0o1777)
  using sticky = openSharedDir(shared)
  expect(await prune(sticky, { before: Date.now() - 7 * DAY, match })).toEqual({ files: 1, directories: 1, bytes: 10 })
  expect(list(shared)).toEqual(['dsh-subprocess-test-x', 'dsh-subprocess-test-x/f', 'other.log'])
})

test('prune stops between entries once its signal is aborted', async () => {
  const root = join(base, 'root')
  tree(root, Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`f${i}.txt`, 9 * DAY])))
  using dir = openPrivateDir(root)
  const controller = new AbortController()
  controller.abort()
  expect(await prune(dir, { before: Date.now(), signal: controller.signal })).toEqual({
    files: 0,
    directories: 0,
    bytes: 0,
  })
  expect(readdirSync(root)).toHaveLength(20)
})

test('no descriptor is left open after opens, refusals and pruning', async () => {
  const fds = readdirSync('/proc/self/fd').length
  for (let i = 0; i < 50; i++) {
    using parent = openPrivateDir(join(shared, `d${i % 5}`))
    parent.subdir('s').close()
    caught(() => parent.subdir('missing', { create: false }))
    caught(() => openPrivateDir(join(shared, 'd0', 's', 'missing'), { create: false }))
    using dir = openPrivateDir(join(shared, 'd1'))
    await prune(dir, { before: Date.now() - DAY })
  }
  expect(readdirSync('/proc/self/fd').length).toBe(fds)
})
