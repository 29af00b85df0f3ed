import { afterEach, describe, expect, test } from 'vitest'
import { join } from 'node:path'
import { type Harness, harness, MemorySpillStore, write, writeFile } from './helpers.ts'

let h: Harness
afterEach(async () => {
  await h?.cleanup()
  MemorySpillStore.saved.length = 0
})

const LINES = ['one', 'TODO a1', 'three', 'four', 'five', 'six', 'TODO a7', 'TODO a8', 'nine']

/** Three files with pinned times: b.py newest, then c.md, then src/a.ts. */
function fixture(dir: string): void {
  write(dir, {
    'src/a.ts': { content: 'one\nTODO a1\nthree\nfour\nfive\nsix\nTODO a7\nTODO a8\nnine\n', mtime: 1000 },
    'src/b.py': { content: 'todo lower\nTODO b2\n', mtime: 3000 },
    'c.md': { content: 'x\nTODO c\n', mtime: 2000 },
  })
}

describe('grep output_mode (docs/model-surface.md#tools)', () => {
  test('files_with_matches lists the matching files, newest first, after their number', async () => {
    h = await harness()
    fixture(h.dir)
    expect(await h.text('grep', { pattern: 'TODO', output_mode: 'files_with_matches' })).toBe(
      'Found 3 files\n\nsrc/b.py\nc.md\nsrc/a.ts',
    )
    expect(await h.text('grep', { pattern: 'TODO', path: 'src/a.ts', output_mode: 'files_with_matches' })).toBe(
      'Found 1 file\n\nsrc/a.ts',
    )
    expect(await h.text('grep', { pattern: 'nowhere', output_mode: 'files_with_matches' })).toBe('No matches found')
  })

  test('count gives the matching lines per file in path order, after the totals', async () => {
    h = await harness()
    fixture(h.dir)
    expect(await h.text('grep', { pattern: 'TODO', output_mode: 'count' })).toBe(
      'Found 5 matches in 3 files\n\nc.md: 1\nsrc/a.ts: 3\nsrc/b.py: 1',
    )
    expect(await h.text('grep', { pattern: 'a1', path: 'src/a.ts', output_mode: 'count' })).toBe(
      'Found 1 match in 1 file\n\nsrc/a.ts: 1',
    )
  })

  test('content is the default, and output_mode content answers as a call without it', async () => {
    h = await harness()
    fixture(h.dir)
    const plain = await h.text('grep', { pattern: 'TODO' })
    expect(await h.text('grep', { pattern: 'TODO', output_mode: 'content' })).toBe(plain)
    expect(plain.split('\n\n')[0]).toBe('Found 5 matches')
  })

  test('files_with_matches and count over the cap: the page, the footer, and the complete list saved', async () => {
    h = await harness({ config: { grepMaxMatches: 2 }, spill: MemorySpillStore })
    fixture(h.dir)
    expect(await h.text('grep', { pattern: 'TODO', output_mode: 'files_with_matches' })).toBe(
      [
        'Found 2 of 3 files',
        '',
        'src/b.py',
        'c.md',
        '',
        '[Showing 2 of 3 files. The complete result is saved at /memory/session-1/1-grep-results.txt. Page through it with read (offset, limit) or search it with grep.]',
      ].join('\n'),
    )
    expect(MemorySpillStore.saved[0]?.content).toBe(
      '[grep "TODO" in .: 3 files with matches, one per line, most recently modified first]\nsrc/b.py\nc.md\nsrc/a.ts\n',
    )
    expect(await h.text('grep', { pattern: 'TODO', output_mode: 'count' })).toBe(
      [
        'Found 5 matches in 3 files',
        '',
        'c.md: 1',
        'src/a.ts: 3',
        '',
        '[Showing 2 of 3 files. The complete result is saved at /memory/session-1/2-grep-results.txt. Page through it with read (offset, limit) or search it with grep.]',
      ].join('\n'),
    )
    expect(MemorySpillStore.saved[1]?.content).toBe(
      '[grep "TODO" in .: 5 matching lines in 3 files, one file per line as <path>: <matching lines>]\nc.md: 1\nsrc/a.ts: 3\nsrc/b.py: 1\n',
    )
  })
})

describe('grep context, before, after', () => {
  test('rows read as read shows them, groups that do not touch separated by --, touching ones merged', async () => {
    h = await harness()
    fixture(h.dir)
    expect(await h.text('grep', { pattern: 'TODO', path: 'src/a.ts', context: 1 })).toBe(
      [
        'Found 3 matches',
        '',
        'src/a.ts',
        '1: one',
        '2: TODO a1',
        '3: three',
        '--',
        '6: six',
        '7: TODO a7',
        '8: TODO a8',
        '9: nine',
      ].join('\n'),
    )
    expect(await h.text('grep', { pattern: 'TODO', path: 'src/a.ts', before: 2 })).toBe(
      [
        'Found 3 matches',
        '',
        'src/a.ts',
        '1: one',
        '2: TODO a1',
        '--',
        '5: five',
        '6: six',
        '7: TODO a7',
        '8: TODO a8',
      ].join('\n'),
    )
    // after overrides context on its side; 5 and 6 touch: one group.
    expect(await h.text('grep', { pattern: 'a1|a7', path: 'src/a.ts', context: 1, after: 3 })).toBe(
      ['Found 2 matches', '', 'src/a.ts', ...[1, 2, 3, 4, 5, 6, 7, 8, 9].map((n) => `${n}: ${LINES[n - 1]}`)].join(
        '\n',
      ),
    )
  })

  test('context over the cap: the matches kept bring their lines, the saved result has every row', async () => {
    h = await harness({ config: { grepMaxMatches: 2 }, spill: MemorySpillStore })
    fixture(h.dir)
    expect(await h.text('grep', { pattern: 'TODO', path: 'src', after: 1 })).toBe(
      [
        'Found 2 of 4 matches',
        '',
        'src/a.ts',
        '2: TODO a1',
        '3: three',
        '--',
        '7: TODO a7',
        // a8, the third match, is past the page: shown only as the line after a7.
        '8: TODO a8',
        '',
        '[Showing 2 of 4 matches. The complete result is saved at /memory/session-1/1-grep-results.txt. Page through it with read (offset, limit) or search it with grep.]',
      ].join('\n'),
    )
    expect(MemorySpillStore.saved[0]?.content).toBe(
      [
        '[grep "TODO" in src: 4 matching lines, one per line as <path>:<line>: <text>, with 0 lines before and 1 after each match]',
        'src/a.ts:2: TODO a1',
        'src/a.ts:3: three',
        'src/a.ts:7: TODO a7',
        'src/a.ts:8: TODO a8',
        'src/a.ts:9: nine',
        'src/b.py:2: TODO b2',
        '',
      ].join('\n'),
    )
  })
})

describe('grep head_limit and offset page without the saved result', () => {
  test('matches: the page asked for, and the offset of the next one', async () => {
    h = await harness({ spill: MemorySpillStore })
    fixture(h.dir)
    expect(await h.text('grep', { pattern: 'TODO', head_limit: 2 })).toBe(
      [
        'Found 5 matches',
        '',
        'c.md',
        'Line 2: TODO c',
        '',
        'src/a.ts',
        'Line 2: TODO a1',
        '',
        '[Showing matches 1–2 of 5. To see more, pass offset=2.]',
      ].join('\n'),
    )
    expect(await h.text('grep', { pattern: 'TODO', offset: 2, head_limit: 2 })).toBe(
      [
        'Found 5 matches',
        '',
        'src/a.ts',
        'Line 7: TODO a7',
        'Line 8: TODO a8',
        '',
        '[Showing matches 3–4 of 5. To see more, pass offset=4.]',
      ].join('\n'),
    )
    expect(await h.text('grep', { pattern: 'TODO', offset: 4 })).toBe(
      ['Found 5 matches', '', 'src/b.py', 'Line 2: TODO b2', '', '[Showing matches 5–5 of 5.]'].join('\n'),
    )
    expect(await h.text('grep', { pattern: 'TODO', offset: 40 })).toBe(
      'Found 5 matches\n\n[offset 40 is past the end: there are 5 matches; pass a smaller offset.]',
    )
    // A first page that holds everything is the whole result.
    expect(await h.text('grep', { pattern: 'TODO', head_limit: 5 })).toBe(await h.text('grep', { pattern: 'TODO' }))
    expect(MemorySpillStore.saved).toEqual([])
  })

  test('with context, a page from an offset shows the lines around its matches, skipped matches among them', async () => {
    h = await harness()
    fixture(h.dir)
    expect(await h.text('grep', { pattern: 'TODO', context: 1, offset: 2, head_limit: 2 })).toBe(
      [
        'Found 5 matches',
        '',
        'src/a.ts',
        '6: six',
        '7: TODO a7',
        '8: TODO a8',
        '9: nine',
        '',
        '[Showing matches 3–4 of 5. To see more, pass offset=4.]',
      ].join('\n'),
    )
    expect(await h.text('grep', { pattern: 'TODO', path: 'src/a.ts', context: 1, offset: 2 })).toBe(
      [
        'Found 3 matches',
        '',
        'src/a.ts',
        '7: TODO a7',
        '8: TODO a8',
        '9: nine',
        '',
        '[Showing matches 3–3 of 3.]',
      ].join('\n'),
    )
  })

  test('files and counts page the same way', async () => {
    h = await harness()
    fixture(h.dir)
    expect(await h.text('grep', { pattern: 'TODO', output_mode: 'files_with_matches', offset: 1, head_limit: 1 })).toBe(
      'Found 3 files\n\nc.md\n\n[Showing files 2–2 of 3. To see more, pass offset=2.]',
    )
    expect(await h.text('grep', { pattern: 'TODO', output_mode: 'count', offset: 2 })).toBe(
      'Found 5 matches in 3 files\n\nsrc/b.py: 1\n\n[Showing files 3–3 of 3.]',
    )
  })
})

describe('grep case_insensitive, type, multiline', () => {
  test('case_insensitive matches regardless of case; type keeps to one of ripgrep file types', async () => {
    h = await harness()
    fixture(h.dir)
    expect(await h.text('grep', { pattern: 'todo', case_insensitive: true, type: 'py' })).toBe(
      'Found 2 matches\n\nsrc/b.py\nLine 1: todo lower\nLine 2: TODO b2',
    )
    expect(await h.text('grep', { pattern: 'todo', type: 'py' })).toBe('Found 1 match\n\nsrc/b.py\nLine 1: todo lower')
  })

  test('an unknown type is INVALID_ARGS naming some that ripgrep knows, and the include alternative', async () => {
    h = await harness()
    fixture(h.dir)
    const result = await h.call('grep', { pattern: 'x', type: 'pyt' })
    expect(result.error?.code).toBe('INVALID_ARGS')
    expect(result.content[0].text).toBe(
      'Error: type "pyt" is not one of ripgrep\'s file types; some that are: py, python, ts, js, rust, go, java, c, cpp, md, json. Or pass include with a glob instead, e.g. "*.ts"',
    )
  })

  test('multiline lets a match span lines: a row per line; a line break in the pattern is then allowed', async () => {
    h = await harness()
    fixture(h.dir)
    expect(await h.text('grep', { pattern: 'a1\nthree', multiline: true })).toBe(
      'Found 1 match\n\nsrc/a.ts\nLine 2: TODO a1\nLine 3: three',
    )
    expect(await h.text('grep', { pattern: 'a1.three', multiline: true, context: 1 })).toBe(
      'Found 1 match\n\nsrc/a.ts\n1: one\n2: TODO a1\n3: three\n4: four',
    )
    const refused = await h.call('grep', { pattern: 'a1\nthree' })
    expect(refused.content[0].text).toBe(
      'Error: invalid grep pattern: it contains a line break, but grep matches one line at a time; search for a single line of the text, or pass multiline: true',
    )
  })
})

describe("other clients' names for grep's arguments are accepted silently (needs the names branch's alias mechanism)", () => {
  test.each([
    [{ '-i': true }, { case_insensitive: true }],
    [{ '-C': 1 }, { context: 1 }],
    [{ '-A': 1 }, { after: 1 }],
    [{ '-B': 1 }, { before: 1 }],
    [{ glob: '*.py' }, { include: '*.py' }],
    // Rows are always numbered: -n is dropped ({ ignore: true } in the names branch's mechanism).
    [{ '-n': true }, {}],
  ])('%o answers as %o', async (alias, ours) => {
    h = await harness()
    fixture(h.dir)
    const expected = await h.text('grep', { pattern: 'todo', ...ours })
    const result = await h.call('grep', { pattern: 'todo', ...alias })
    expect(result.content[0].text).toBe(expected)
  })
})

describe('glob says what it did (docs/model-surface.md#tools)', () => {
  test('a comma-separated list of patterns is INVALID_ARGS that says to use braces; a name with a comma is a pattern', async () => {
    h = await harness()
    write(h.dir, { 'src/a.spec.ts': '', 'a,b.txt': '' })
    const result = await h.call('glob', { pattern: 'src/*.spec.ts, src/*.bench.ts' })
    expect(result.error?.code).toBe('INVALID_ARGS')
    expect(result.content[0].text).toBe(
      'Error: glob pattern must be ONE glob, not a comma-separated list ("src/*.spec.ts, src/*.bench.ts"): use braces for alternatives, e.g. "{src/*.spec.ts,src/*.bench.ts}"',
    )
    expect(await h.text('glob', { pattern: '{src/*.spec.ts,src/*.bench.ts}' })).toBe('src/a.spec.ts')
    expect(await h.text('glob', { pattern: 'a,b.txt' })).toBe('a,b.txt')
  })

  test('respect_gitignore: true leaves out what .gitignore ignores, also outside a git repository', async () => {
    h = await harness()
    write(h.dir, {
      '.gitignore': 'node_modules/\n',
      'node_modules/x/index.d.ts': { content: '', mtime: 3000 },
      'src/a.d.ts': { content: '', mtime: 1000 },
    })
    expect(await h.text('glob', { pattern: '**/*.d.ts' })).toBe('node_modules/x/index.d.ts\nsrc/a.d.ts')
    expect(await h.text('glob', { pattern: '**/*.d.ts', respect_gitignore: true })).toBe('src/a.d.ts')
  })

  test('a capped list mostly in ignored paths says how many and names respect_gitignore', async () => {
    h = await harness({ config: { globMaxResults: 2 } })
    write(h.dir, {
      '.gitignore': 'node_modules/\n',
      'node_modules/x/a.d.ts': { content: '', mtime: 3000 },
      'node_modules/x/b.d.ts': { content: '', mtime: 3000 },
      'node_modules/y/c.d.ts': { content: '', mtime: 3000 },
      'src/a.d.ts': { content: '', mtime: 1000 },
    })
    expect(await h.text('glob', { pattern: '**/*.d.ts' })).toBe(
      [
        'node_modules/x/a.d.ts',
        'node_modules/x/b.d.ts',
        '',
        '[Showing 2 of 4 files. The complete result could not be saved (no spill store is loaded). To see the rest, use a more specific pattern or a deeper path.]',
        '',
        '[3 of these 4 files are in paths that .gitignore (or .ignore, .rgignore) ignores, such as node_modules; pass respect_gitignore: true to leave them out.]',
      ].join('\n'),
    )
    // Half or less: no note.
    write(h.dir, { 'src/b.d.ts': { content: '', mtime: 1000 }, 'src/c.d.ts': { content: '', mtime: 1000 } })
    expect(await h.text('glob', { pattern: '**/*.d.ts' })).not.toContain('respect_gitignore')
  })
})

describe('the list modes read any file name', () => {
  test('a name with a newline, a colon and digits, or a non-UTF-8 byte is one escaped row', async () => {
    h = await harness()
    write(h.dir, {
      'new\nline.txt': { content: 'TODO\n', mtime: 3000 },
      'a:1: b.txt': { content: 'TODO\nTODO\n', mtime: 2000 },
    })
    writeFile(Buffer.concat([Buffer.from(join(h.dir, 'caf')), Buffer.from([0xe9]), Buffer.from('.txt')]), 'TODO\n')
    expect(await h.text('grep', { pattern: 'TODO', output_mode: 'count' })).toBe(
      'Found 4 matches in 3 files\n\na:1: b.txt: 2\ncaf\ufffd.txt: 1\nnew\\nline.txt: 1',
    )
    // caf\xe9.txt was written just now: the newest.
    expect(await h.text('grep', { pattern: 'TODO', output_mode: 'files_with_matches' })).toBe(
      'Found 3 files\n\ncaf\ufffd.txt\nnew\\nline.txt\na:1: b.txt',
    )
  })
})
