import { mkdirSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { type Harness, harness, MemorySpillStore, write, writeFile } from './helpers.ts'

let h: Harness
afterEach(async () => {
  await h?.cleanup()
})

describe('glob', () => {
  test('lists hidden and ignored files but never the contents of the six VCS directories', async () => {
    h = await harness()
    write(h.dir, {
      '.gitignore': { content: 'ignored.txt\n', mtime: 100 },
      'ignored.txt': { content: 'x', mtime: 101 },
      '.hidden/secret.txt': { content: 'x', mtime: 102 },
      'src/a.ts': { content: 'x', mtime: 103 },
      '.git/HEAD': { content: 'x', mtime: 1 },
      '.svn/entries': { content: 'x', mtime: 1 },
      '.hg/store': { content: 'x', mtime: 1 },
      '.bzr/branch': { content: 'x', mtime: 1 },
      '.jj/repo': { content: 'x', mtime: 1 },
      '.sl/store': { content: 'x', mtime: 1 },
      'sub/.git/config': { content: 'x', mtime: 1 },
      // A file named .git (a worktree's gitlink) is a file, not a VCS directory.
      'wt/.git': { content: 'gitdir: elsewhere', mtime: 104 },
    })
    expect(await h.text('glob', { pattern: '**' })).toBe(
      'wt/.git\nsrc/a.ts\n.hidden/secret.txt\nignored.txt\n.gitignore',
    )
  })

  test('lists nothing from a root inside a VCS directory, and says why', async () => {
    h = await harness()
    write(h.dir, { '.git/objects/ab/cdef': 'x', '.jj/repo/store/x': 'x' })
    expect(await h.text('glob', { pattern: '*', path: '.git/objects' })).toBe(
      'No files found\n\n[.git/objects is inside a .git directory, whose contents glob never lists]',
    )
    expect(await h.text('glob', { pattern: '*', path: join(h.dir, '.jj/repo') })).toBe(
      'No files found\n\n[.jj/repo is inside a .jj directory, whose contents glob never lists]',
    )
  })

  test('orders by modification time, newest first, ties in path order whatever the directory order', async () => {
    h = await harness()
    write(h.dir, {
      'z.txt': { content: 'x', mtime: 3000 },
      'b.txt': { content: 'x', mtime: 2000 },
      'a/z.txt': { content: 'x', mtime: 2000 },
      'a.b': { content: 'x', mtime: 2000 },
      'A.txt': { content: 'x', mtime: 2000 },
      'deep/old.txt': { content: 'x', mtime: 1000 },
    })
    expect(await h.text('glob', { pattern: '*' })).toBe('z.txt\nA.txt\na/z.txt\na.b\nb.txt\ndeep/old.txt')
  })

  test('shows paths relative to the cwd for ".", a subdirectory and an absolute path inside the cwd', async () => {
    h = await harness()
    write(h.dir, { 'src/lib/x.ts': { content: 'x', mtime: 1 }, 'src/y.ts': { content: 'x', mtime: 2 } })
    expect(await h.text('glob', { pattern: '*.ts', path: '.' })).toBe('src/y.ts\nsrc/lib/x.ts')
    expect(await h.text('glob', { pattern: '*.ts', path: 'src/' })).toBe('src/y.ts\nsrc/lib/x.ts')
    expect(await h.text('glob', { pattern: '*.ts', path: join(h.dir, 'src') })).toBe('src/y.ts\nsrc/lib/x.ts')
  })

  test('shows absolute paths for a root outside the cwd', async () => {
    h = await harness()
    write(h.dir, { 'other/x.ts': 'x', 'cwd/.keep': '' })
    expect(await h.text('glob', { pattern: '*.ts', path: '../other' }, { cwd: join(h.dir, 'cwd') })).toBe(
      join(h.dir, 'other/x.ts'),
    )
  })

  test('matches a pattern with "/" relative to path', async () => {
    h = await harness()
    write(h.dir, {
      'pkg/src/a.ts': { content: 'x', mtime: 1 },
      'pkg/src/deep/b.ts': { content: 'x', mtime: 2 },
      'pkg/test/c.ts': 'x',
    })
    expect(await h.text('glob', { pattern: 'src/*.ts', path: 'pkg' })).toBe('pkg/src/a.ts')
    expect(await h.text('glob', { pattern: 'src/**/*.ts', path: 'pkg' })).toBe('pkg/src/deep/b.ts\npkg/src/a.ts')
  })

  test('reports names with spaces, quotes, newlines, escapes and non-UTF-8 bytes exactly, one per line', async () => {
    h = await harness()
    write(h.dir, {
      'with space.txt': { content: 'x', mtime: 1 },
      'quote\'s "x".txt': { content: 'x', mtime: 2 },
      'new\nline.txt': { content: 'x', mtime: 3 },
      'esc\x1b[31m.txt': { content: 'x', mtime: 4 },
      'tab\there.txt': { content: 'x', mtime: 5 },
    })
    writeFile(Buffer.concat([Buffer.from(join(h.dir, 'latin')), Buffer.from([0xe9]), Buffer.from('.txt')]), {
      content: 'x',
      mtime: 6,
    })
    expect(await h.text('glob', { pattern: '*.txt' })).toBe(
      'latin\ufffd.txt\ntab\\there.txt\nesc\\x1b[31m.txt\nnew\\nline.txt\nquote\'s "x".txt\nwith space.txt',
    )
  })

  test('an empty result is "No files found"', async () => {
    h = await harness()
    write(h.dir, { 'a.ts': 'x' })
    expect(await h.text('glob', { pattern: '*.py' })).toBe('No files found')
  })

  test('a file as path is an INVALID_ARGS error that says what to pass instead', async () => {
    h = await harness()
    write(h.dir, { 'src/a.ts': 'x' })
    const result = await h.call('glob', { pattern: '*', path: 'src/a.ts' })
    expect(result.error?.code).toBe('INVALID_ARGS')
    expect(result.content[0].text).toBe(
      'Error: glob path must be a directory, but src/a.ts is not one: pass the directory that holds it, or read the file with read',
    )
  })

  test('a missing path is SEARCH_FAILED naming it', async () => {
    h = await harness()
    const result = await h.call('glob', { pattern: '*', path: 'no/such dir' })
    expect(result.error).toEqual({
      code: 'SEARCH_FAILED',
      name: 'SearchError',
      message: 'glob search failed: no/such dir: no such file or directory',
    })
  })

  test('a path whose symbolic links loop is SEARCH_FAILED naming it once, with the system error', async () => {
    h = await harness()
    symlinkSync('loop', join(h.dir, 'loop'))
    for (const tool of ['glob', 'grep'] as const) {
      const result = await h.call(tool, { pattern: 'x', path: 'loop' })
      expect(result.error).toEqual({
        code: 'SEARCH_FAILED',
        name: 'SearchError',
        message: `${tool} search failed: loop: ELOOP (too many symbolic links encountered)`,
      })
    }
  })

  test('a pattern longer than one program argument can hold is refused before ripgrep, up to the byte; one that fits runs', async () => {
    h = await harness()
    write(h.dir, { 'a.txt': 'a\n' })
    // 131 071 bytes fit in one argument (Linux); `--glob=` takes 7 of them. A leading "./" is not passed on.
    expect(await h.text('glob', { pattern: `./*${'x'.repeat(131_063)}` })).toBe('No files found')
    const long = await h.call('glob', { pattern: `*${'x'.repeat(131_064)}` })
    expect(long.error?.code).toBe('SEARCH_INVALID_PATTERN')
    expect(long.content[0].text).toBe(
      'Error: invalid glob pattern: it is 131065 bytes long, but ripgrep takes at most 131064 bytes of glob (one program argument); use a shorter pattern',
    )
  })

  test("a glob ripgrep cannot parse is SEARCH_INVALID_PATTERN with ripgrep's reason", async () => {
    h = await harness()
    const result = await h.call('glob', { pattern: '{a' })
    expect(result.error?.code).toBe('SEARCH_INVALID_PATTERN')
    expect(result.content[0].text).toBe(
      "Error: invalid glob pattern \"{a\": error parsing glob '{a': unclosed alternate group; missing '}' (maybe escape '{' with '[{]'?)",
    )
  })

  test('over the cap (test-only in-memory spill store): the newest page, a footer, and the complete list saved for the session', async () => {
    MemorySpillStore.saved.length = 0
    h = await harness({ config: { globMaxResults: 2 }, spill: MemorySpillStore })
    write(h.dir, { c: { content: '', mtime: 3 }, a: { content: '', mtime: 1 }, b: { content: '', mtime: 2 } })
    const text = await h.text('glob', { pattern: '*' })
    expect(text).toBe(
      'c\nb\n\n[Showing 2 of 3 files. The complete result is saved at /memory/session-1/1-glob-results.txt. Page through it with read (offset, limit) or search it with grep.]',
    )
    expect(MemorySpillStore.saved).toEqual([
      {
        owner: expect.objectContaining({ id: 'session-1' }),
        source: { toolName: 'glob', callId: 'call-1' },
        suggestedName: 'glob-results.txt',
        content: 'c\nb\na\n',
      },
    ])
  })

  test('over the cap without a spill store: the page and a footer that says it could not be saved — not an error', async () => {
    h = await harness({ config: { globMaxResults: 1 } })
    write(h.dir, { a: { content: '', mtime: 1 }, b: { content: '', mtime: 2 } })
    expect(await h.text('glob', { pattern: '*' })).toBe(
      'b\n\n[Showing 1 of 2 files. The complete result could not be saved (no spill store is loaded). To see the rest, use a more specific pattern or a deeper path.]',
    )
  })

  test('an empty directory and a directory of empty directories list nothing', async () => {
    h = await harness()
    mkdirSync(join(h.dir, 'e/f/g'), { recursive: true })
    expect(await h.text('glob', { pattern: '**' })).toBe('No files found')
  })

  test('a leading "./" is dropped and an absolute pattern inside the root is made relative to it', async () => {
    h = await harness()
    write(h.dir, {
      'packages/a/src/x.ts': { content: 'x', mtime: 2 },
      'packages/b/src/y.ts': { content: 'x', mtime: 1 },
    })
    expect(await h.text('glob', { pattern: './packages/**/src/*.ts' })).toBe('packages/a/src/x.ts\npackages/b/src/y.ts')
    expect(await h.text('glob', { pattern: `${h.dir}/packages/**/src/*.ts` })).toBe(
      'packages/a/src/x.ts\npackages/b/src/y.ts',
    )
    expect(await h.text('glob', { pattern: `${h.dir}/packages/b/**`, path: 'packages/b' })).toBe('packages/b/src/y.ts')
  })

  test('a negated pattern, or an absolute one outside the root, is INVALID_ARGS saying what to do', async () => {
    h = await harness()
    write(h.dir, { 'a.ts': 'x' })
    expect((await h.call('glob', { pattern: '!**/*.ts' })).error).toEqual({
      code: 'INVALID_ARGS',
      name: 'HarnessError',
      message:
        'glob pattern "!**/*.ts" is a negation ("!…"): glob lists the files that match; to leave files out, choose a narrower path or pattern',
    })
    expect((await h.call('glob', { pattern: '/etc/**' })).error).toEqual({
      code: 'INVALID_ARGS',
      name: 'HarnessError',
      message: `glob pattern "/etc/**" is an absolute path outside the search path ${h.dir}: pass its directory as path and a pattern relative to it`,
    })
  })

  test('the budget holds with long names: fewer paths than globMaxResults, a footer with shown and total', async () => {
    h = await harness({ config: { maxResultBytes: 1000 } })
    write(
      h.dir,
      Object.fromEntries(
        Array.from({ length: 30 }, (_, i) => [
          `${String(i).padStart(2, '0')}-${'n'.repeat(100)}.txt`,
          { content: '', mtime: 100 - i },
        ]),
      ),
    )
    const text = await h.text('glob', { pattern: '*.txt' })
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(1000)
    expect(text.split('\n\n')[0]?.split('\n')).toEqual(
      Array.from({ length: 7 }, (_, i) => `${String(i).padStart(2, '0')}-${'n'.repeat(100)}.txt`),
    )
    expect(text.split('\n\n')[1]).toBe(
      '[Showing 7 of 30 files. The complete result could not be saved (no spill store is loaded). To see the rest, use a more specific pattern or a deeper path.]',
    )
  })
})
