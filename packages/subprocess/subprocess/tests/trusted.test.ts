import {
  chmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { privateCopy, resolveTrusted, untrustedReason } from '../src/index.ts'

let dir: string
beforeEach(() => {
  dir = realpathSync(mkdtempSync('/var/tmp/dsh-trusted-'))
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

function program(path: string): string {
  mkdirSync(join(path, '..'), { recursive: true })
  writeFileSync(path, '#!/bin/sh\n')
  chmodSync(path, 0o755)
  return path
}

test('a bare name is found in the system directories (real path), never on PATH', () => {
  const saved = process.env.PATH
  process.env.PATH = `${program(join(dir, 'bin/sh')).replace(/\/sh$/, '')}:${saved}`
  try {
    const found = resolveTrusted('sh')
    expect(found).toEqual({ path: realpathSync('/bin/sh'), asked: 'sh' })
  } finally {
    process.env.PATH = saved
  }
  expect(resolveTrusted('no-such-program-dsh')).toEqual({
    problem: 'no "no-such-program-dsh" in /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
  })
})

test('a relative path, a path inside a writable directory, a group-writable ancestor and a non-executable file are refused', () => {
  expect(resolveTrusted('bin/bwrap')).toEqual({
    problem:
      '"bin/bwrap" is a relative path; give an absolute path or a bare name (looked up in /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)',
  })
  const inside = program(join(dir, 'w/node_modules/.bin/bwrap'))
  expect(untrustedReason(inside, [join(dir, 'w')])).toBe(
    `lies inside the writable directory ${dir}/w, where a command can replace it`,
  )
  const shared = program(join(dir, 'shared/bwrap'))
  chmodSync(join(dir, 'shared'), 0o775)
  expect(untrustedReason(shared)).toBe(`lies in ${dir}/shared, which is writable by group or others`)
  const plain = join(dir, 'plain')
  writeFileSync(plain, 'x')
  expect(untrustedReason(plain)).toBe('is not executable')
  expect(untrustedReason(program(join(dir, 'ok/bwrap')))).toBeUndefined()
})

test('privateCopy makes a 0500 copy in a 0700 directory of this user, reuses it while intact, replaces it when not', () => {
  const source = join(dir, 'rg')
  mkdirSync(dir, { recursive: true })
  writeFileSync(source, `#!/bin/sh\n# ${dir}\n`, { mode: 0o755 })
  const copy = privateCopy(source)
  expect(copy).not.toContain(dir)
  expect(readFileSync(copy, 'utf8')).toBe(`#!/bin/sh\n# ${dir}\n`)
  expect(statSync(copy).mode & 0o7777).toBe(0o500)
  expect(statSync(join(copy, '..')).mode & 0o777).toBe(0o700)
  const inode = statSync(copy).ino
  expect(privateCopy(source)).toBe(copy)
  expect(statSync(copy).ino).toBe(inode)
  // Tampered with (as an unconfined command could): the next copy is made anew, from the source.
  chmodSync(copy, 0o700)
  writeFileSync(copy, '#!/bin/sh\necho tampered\n')
  chmodSync(copy, 0o500)
  expect(privateCopy(source)).toBe(copy)
  expect(readFileSync(copy, 'utf8')).toBe(`#!/bin/sh\n# ${dir}\n`)
  rmSync(copy, { force: true })
})

test('privateCopy never writes through a planted dsh-bin-<uid> symlink nor into a shared one: a fresh private directory', () => {
  const temp = join(dir, 'tmp')
  const attacker = join(dir, 'attacker')
  mkdirSync(temp)
  mkdirSync(attacker)
  const source = join(dir, 'rg')
  writeFileSync(source, '#!/bin/sh\n', { mode: 0o755 })
  const saved = process.env.TMPDIR
  process.env.TMPDIR = temp
  try {
    const cache = join(temp, `dsh-bin-${process.geteuid?.() ?? 0}`)
    symlinkSync(attacker, cache)
    const viaLink = privateCopy(source)
    expect(readdirSync(attacker)).toEqual([])
    expect(viaLink.startsWith(`${temp}/dsh-bin-`)).toBe(true)
    expect(viaLink.startsWith(`${cache}/`)).toBe(false)
    expect(lstatSync(join(viaLink, '..')).mode & 0o777).toBe(0o700)

    unlinkSync(cache)
    mkdirSync(cache, { mode: 0o777 })
    chmodSync(cache, 0o777)
    const shared = privateCopy(source)
    expect(shared.startsWith(`${cache}/`)).toBe(false)
    expect(readdirSync(cache)).toEqual([])
  } finally {
    if (saved === undefined) delete process.env.TMPDIR
    else process.env.TMPDIR = saved
  }
})
