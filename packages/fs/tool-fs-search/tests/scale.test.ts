import { chmodSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { rgPath } from '@vscode/ripgrep'
import LocalSpillStore from '@deepseek-ai/dsh-spill-local'
import { alive, type Harness, harness, RecordingSubprocess, until, write } from './helpers.ts'
import { comparePaths, pathKey } from '../src/paths.ts'

// Searches past every in-memory bound (rawOutputMaxBytes set low, so the tests stay small) answer with the exact total
// and a complete saved result in order; only the disk bound (savedResultMaxBytes) stops them. And ripgrep running out
// of memory on an ignore file it cannot use gets an error that names the file, or a note where it can be skipped.

let h: Harness
beforeEach(() => RecordingSubprocess.reset())
afterEach(async () => {
  await h?.cleanup()
})

/** A harness with the real local spill store (it writes as the parts come), its root in the test's directory. */
async function withStore(config: Record<string, number | string>): Promise<Harness> {
  const made = await harness({ subprocess: RecordingSubprocess, config })
  await made.active(made.ctx.plugin(LocalSpillStore, { root: join(made.dir, '.spill') }))
  return made
}

/** The locator of a footer's saved result. */
function locator(text: string): string {
  const found = /The complete result is saved at (\S+)\. /.exec(text)?.[1]
  if (found === undefined) throw new Error(`no locator in: ${text.slice(-300)}`)
  return found
}

/** Names whose path order differs from plain string order ('a/z' before 'a-b' before 'a.b'). */
const DIRS = ['a', 'a-b', 'a.b', 'a/z', 'b', 'b/c/d', 'Z', 'é']

test('grep past rawOutputMaxBytes: the first page in path order, the exact total, and the complete saved result in path order', async () => {
  h = await withStore({ rawOutputMaxBytes: 2000, grepMaxMatches: 20 })
  const files: Record<string, string> = {}
  const expected: { key: string; rows: string[] }[] = []
  let total = 0
  for (const [d, dir] of DIRS.entries()) {
    for (let f = 0; f < 9; f++) {
      const name = `${dir}/f${(f * 7) % 9}.txt`
      const lines: string[] = []
      const rows: string[] = []
      for (let l = 1; l <= 3 + ((d + f) % 5) * 6; l++) {
        if ((l + f) % 3 === 0) lines.push(`other ${l}`)
        else {
          lines.push(`hit ${d}.${f}.${l} ${'x'.repeat((l * 13) % 70)}`)
          rows.push(`${name}:${l}: ${lines.at(-1)}`)
          total++
        }
      }
      files[name] = `${lines.join('\n')}\n`
      expected.push({ key: pathKey(Buffer.from(name)), rows })
    }
  }
  write(h.dir, files)
  expected.sort((x, y) => comparePaths(x.key, y.key))
  const rows = expected.flatMap((file) => file.rows)

  const text = await h.text('grep', { pattern: 'hit' })
  expect(text.startsWith(`Found 20 of ${total} matches\n\n${rows[0]?.split(':')[0]}\nLine `)).toBe(true)
  expect(text).toContain(`[Showing 20 of ${total} matches. The complete result is saved at `)
  const saved = readFileSync(locator(text), 'utf8')
  expect(saved).toBe(
    `[grep "hit" in .: ${total} matching lines, one per line as <path>:<line>: <text>]\n${rows.join('\n')}\n`,
  )
  // The saved rows (about 30 KB) passed the in-memory bound many times over.
  expect(Buffer.byteLength(saved)).toBeGreaterThan(10 * 2000)
})

test('glob past rawOutputMaxBytes: the newest first page, the exact total, and the complete saved list, ties in path order', async () => {
  h = await withStore({ rawOutputMaxBytes: 50, globMaxResults: 5 })
  const names: { name: string; mtime: number }[] = []
  for (const [d, dir] of DIRS.entries()) {
    for (let f = 0; f < 40; f++)
      names.push({ name: `${dir}/file-${f}.txt`, mtime: 1_700_000_000 + ((d * 40 + f) % 17) * 60 })
  }
  write(h.dir, Object.fromEntries(names.map(({ name, mtime }) => [name, { content: '', mtime }])))
  const order = [...names].sort(
    (x, y) => y.mtime - x.mtime || comparePaths(pathKey(Buffer.from(x.name)), pathKey(Buffer.from(y.name))),
  )
  const text = await h.text('glob', { pattern: '*.txt' })
  expect(text.split('\n\n')[0]).toBe(
    order
      .slice(0, 5)
      .map((entry) => entry.name)
      .join('\n'),
  )
  expect(text).toContain(`[Showing 5 of ${names.length} files. The complete result is saved at `)
  expect(readFileSync(locator(text), 'utf8')).toBe(`${order.map((entry) => entry.name).join('\n')}\n`)
})

test('a grep whose saved result would pass savedResultMaxBytes is SEARCH_RAW_OUTPUT_OVERFLOW naming that bound, and rg is stopped', async () => {
  h = await withStore({ savedResultMaxBytes: 100_000, rawOutputMaxBytes: 4096 })
  write(h.dir, { 'big.txt': 'hit hit hit\n'.repeat(200_000) })
  const result = await h.call('grep', { pattern: 'hit', path: 'big.txt' })
  expect(result.error?.code).toBe('SEARCH_RAW_OUTPUT_OVERFLOW')
  expect(result.content[0].text).toMatch(
    /^Error: grep search stopped: after \d+ matching lines its complete result passed 100000 bytes, the most a saved result may hold \(savedResultMaxBytes\)\. To search less, use a more specific pattern, a deeper path, or include\.$/,
  )
  expect(alive(RecordingSubprocess.handles.at(-1)?.pid ?? 0)).toBe(false)
})

test('a glob whose saved list would pass savedResultMaxBytes is SEARCH_RAW_OUTPUT_OVERFLOW naming that bound', async () => {
  h = await withStore({ savedResultMaxBytes: 200 })
  write(h.dir, Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`file-${i}.txt`, ''])))
  const result = await h.call('glob', { pattern: '*' })
  expect(result.error?.code).toBe('SEARCH_RAW_OUTPUT_OVERFLOW')
  expect(result.content[0].text).toMatch(
    /^Error: glob search stopped: after \d+ files its complete list passed 200 bytes, the most a saved result may hold \(savedResultMaxBytes\)\. To list less, use a more specific pattern or a deeper path\.$/,
  )
})

test('without a spill store nothing is kept for saving: no disk bound, and the footer says why the rest is not saved', async () => {
  h = await harness({ config: { savedResultMaxBytes: 10, grepMaxMatches: 1 } })
  write(h.dir, { 'a.txt': 'hit\nhit\n' })
  expect(await h.text('grep', { pattern: 'hit' })).toBe(
    'Found 1 of 2 matches\n\na.txt\nLine 1: hit\n\n[Showing 1 of 2 matches. The complete result could not be saved (no spill store is loaded). To see the rest, use a more specific pattern, a deeper path, or include.]',
  )
})

const DEV_ZERO_NOTE =
  '[.gitignore is a symbolic link to /dev/zero (a character device): its rules were not applied, nor those of any other .gitignore. Files those rules would hide were searched; fix or remove that file to have its rules apply.]'

test('trap: a .gitignore linked to /dev/zero in the searched tree stops rg at its memory bound; grep runs again without its rules and answers, naming it', async () => {
  h = await harness({ subprocess: RecordingSubprocess, config: { rgMaxMemoryBytes: 64 * 1024 * 1024 } })
  write(h.dir, { 'a.txt': 'x\n' })
  symlinkSync('/dev/zero', join(h.dir, '.gitignore'))
  expect(await h.text('grep', { pattern: 'x' })).toBe(['Found 1 match', 'a.txt\nLine 1: x', DEV_ZERO_NOTE].join('\n\n'))
  expect(RecordingSubprocess.handles.filter((handle) => alive(handle.pid))).toEqual([])
  expect(RecordingSubprocess.requests.map((request) => request.argv.includes('--no-ignore-vcs'))).toEqual([false, true])
})

test('trap: sub/.gitignore linked to /dev/zero: the rest of the tree keeps every .gitignore rule, sub/ is searched without them, and the note says so', async () => {
  h = await harness({ subprocess: RecordingSubprocess, config: { rgMaxMemoryBytes: 64 * 1024 * 1024 } })
  write(h.dir, {
    '.gitignore': 'ignored.txt\n',
    'a.txt': 'x\n',
    'ignored.txt': 'x\n',
    'other/ignored.txt': 'x\n',
    'sub/b.txt': 'x\n',
    'sub/ignored.txt': 'x\n',
  })
  symlinkSync('/dev/zero', join(h.dir, 'sub/.gitignore'))
  expect(await h.text('grep', { pattern: 'x' })).toBe(
    [
      'Found 3 matches',
      'a.txt\nLine 1: x',
      'sub/b.txt\nLine 1: x',
      'sub/ignored.txt\nLine 1: x',
      '[sub/.gitignore is a symbolic link to /dev/zero (a character device): its rules were not applied, and no .gitignore rules were applied within sub/. Files those rules would hide were searched; fix or remove that file to have its rules apply.]',
    ].join('\n\n'),
  )
})

test('trap: a 1.1 MB .gitignore of 50 000 ** rules stops rg at its memory bound; grep answers without its rules, naming its size', async () => {
  h = await harness({ subprocess: RecordingSubprocess, config: { rgMaxMemoryBytes: 64 * 1024 * 1024 } })
  write(h.dir, { 'a.txt': 'x\n' })
  const rules = `${Array.from({ length: 50_000 }, (_, i) => `**/a${i}/**/b${i}/**`).join('\n')}\n`
  writeFileSync(join(h.dir, '.gitignore'), rules)
  expect(await h.text('grep', { pattern: 'x' })).toBe(
    [
      'Found 1 match',
      'a.txt\nLine 1: x',
      `[.gitignore is ${Buffer.byteLength(rules)} bytes, too large to compile: its rules were not applied, nor those of any other .gitignore. Files those rules would hide were searched; fix or remove that file to have its rules apply.]`,
    ].join('\n\n'),
  )
})

test('trap: rg aborting on a failed allocation (SIGABRT, an address-space limit) gets the same named error, not "killed by SIGABRT"', async () => {
  // A real rg under `ulimit -v`: its allocation fails and it aborts before the tool's own memory check could stop it.
  const bin = join(process.env.TMPDIR ?? '/tmp', `dsh-rg-limited-${process.pid}`)
  mkdirSync(bin, { recursive: true })
  const wrapper = join(bin, 'rg')
  writeFileSync(wrapper, `#!/bin/sh\nulimit -v 262144\nexec '${rgPath}' "$@"\n`)
  chmodSync(wrapper, 0o755)
  h = await harness({ subprocess: RecordingSubprocess, config: { rgPath: wrapper, rgMaxMemoryBytes: 0 } })
  write(h.dir, { 'a.txt': 'x\n' })
  symlinkSync('/dev/zero', join(h.dir, '.gitignore'))
  const result = await h.call('grep', { pattern: 'x' })
  expect(await RecordingSubprocess.handles[0]?.done).toMatchObject({ signal: 'SIGABRT' })
  expect(result.content[0].text).toBe(['Found 1 match', 'a.txt\nLine 1: x', DEV_ZERO_NOTE].join('\n\n'))
})

test('trap: a .gitignore rg cannot use ABOVE the search path is still read by rg (even with --no-ignore-parent): grep answers without it', async () => {
  h = await harness({ subprocess: RecordingSubprocess, config: { rgMaxMemoryBytes: 64 * 1024 * 1024 } })
  write(h.dir, { 'sub/a.txt': 'x\n' })
  symlinkSync('/dev/zero', join(h.dir, '.gitignore'))
  expect(await h.text('grep', { pattern: 'x', path: 'sub' })).toBe(
    ['Found 1 match', 'sub/a.txt\nLine 1: x', DEV_ZERO_NOTE].join('\n\n'),
  )
})

test('trap: a .ignore or .rgignore rg cannot use is skipped (--no-ignore-dot, every such file), and the answer names it in a note', async () => {
  h = await harness({ subprocess: RecordingSubprocess, config: { rgMaxMemoryBytes: 64 * 1024 * 1024 } })
  write(h.dir, {
    'sub/a.txt': 'x\n',
    'sub/ignored.txt': 'x\n',
    'sub/.gitignore': 'ignored.txt\n',
    'sub/deep/hidden.txt': 'x\n',
    'sub/deep/.rgignore': 'hidden.txt\n',
  })
  symlinkSync('/dev/zero', join(h.dir, '.ignore'))
  expect(await h.text('grep', { pattern: 'x', path: 'sub' })).toBe(
    [
      'Found 2 matches',
      'sub/a.txt\nLine 1: x',
      'sub/deep/hidden.txt\nLine 1: x',
      '[.ignore is a symbolic link to /dev/zero (a character device): its rules were not applied, nor those of any other .ignore or .rgignore. Files those rules would hide were searched; fix or remove that file to have its rules apply.]',
    ].join('\n\n'),
  )
  expect(RecordingSubprocess.requests.map((request) => request.argv.includes('--no-ignore-dot'))).toEqual([false, true])
})

test('the temporary file of saved rows leaves no descriptor and no name behind: after a saved result, a disk-bound stop, a cancellation', async () => {
  h = await withStore({ rawOutputMaxBytes: 1000, grepMaxMatches: 5 })
  write(h.dir, Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`d${i % 3}/f${i}.txt`, 'hit\n'.repeat(40)])))
  write(h.dir, { 'big.txt': 'hit hit\n'.repeat(100_000) })
  const names = () => new Set(readdirSync(tmpdir()).filter((name) => name.startsWith('dsh-grep-')))
  const before = names()
  await h.text('grep', { pattern: 'hit', include: 'f*.txt' })
  const open = () => readdirSync('/proc/self/fd').length
  const descriptors = open()
  for (let i = 0; i < 3; i++) {
    expect(await h.text('grep', { pattern: 'hit', include: 'f*.txt' })).toContain(
      '[Showing 5 of 1200 matches. The complete result is saved at ',
    )
    const controller = new AbortController()
    const pending = h.call('grep', { pattern: 'hit', path: 'big.txt' }, { signal: controller.signal })
    setTimeout(() => controller.abort(), 30)
    expect((await pending).error?.code).toBe('SEARCH_ABORTED')
  }
  await until(() => open() <= descriptors, `open descriptors return to ${descriptors} (now ${open()})`, 300)
  expect([...names()].filter((name) => !before.has(name))).toEqual([])
  expect(RecordingSubprocess.handles.filter((handle) => alive(handle.pid))).toEqual([])
})
