import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { LocalSpillStore } from '@deepseek-ai/dsh-spill-local'
import { BrokenSpillStore, type Harness, harness, MemorySpillStore, until, write, writeFile } from './helpers.ts'

let h: Harness
afterEach(async () => {
  await h?.cleanup()
})

describe('grep', () => {
  test('prints the header, then files in path order with their lines ascending, groups separated by blank lines', async () => {
    h = await harness()
    write(h.dir, {
      'src/b.ts': 'const a = 1\n// TODO later\nTODO TODO twice on one line\n',
      'src/a.ts': 'TODO first\n',
      'src.ts': 'no\nTODO\n',
      'README.md': 'nothing here\n',
    })
    expect(await h.text('grep', { pattern: 'TODO' })).toBe(
      [
        'Found 4 matches',
        '',
        'src/a.ts',
        'Line 1: TODO first',
        '',
        'src/b.ts',
        'Line 2: // TODO later',
        'Line 3: TODO TODO twice on one line',
        '',
        'src.ts',
        'Line 2: TODO',
      ].join('\n'),
    )
  })

  test('gives the same text on every run over many files searched in parallel', async () => {
    h = await harness({ config: { grepMaxMatches: 1000 } })
    const files: Record<string, string> = {}
    for (let i = 0; i < 300; i++) files[`d${i % 7}/f${(i * 7919) % 300}.txt`] = `x\nneedle ${i}\n`.repeat(1 + (i % 3))
    write(h.dir, files)
    const first = await h.text('grep', { pattern: 'needle' })
    for (let run = 0; run < 5; run++) expect(await h.text('grep', { pattern: 'needle' })).toBe(first)
    expect(first.slice(0, 46)).toBe('Found 600 matches\n\nd0/f0.txt\nLine 2: needle 0\n')
  })

  test('says "Found 1 match" and "No matches found"', async () => {
    h = await harness()
    write(h.dir, { 'a.txt': 'one\n' })
    expect(await h.text('grep', { pattern: 'one' })).toBe('Found 1 match\n\na.txt\nLine 1: one')
    expect(await h.text('grep', { pattern: 'two' })).toBe('No matches found')
  })

  test('cuts long lines on a UTF-8 boundary, marks non-UTF-8 lines, shows CRLF lines without \\r, escapes controls but tabs', async () => {
    h = await harness({ config: { grepMaxLineBytes: 10 } })
    write(h.dir, {
      'long.txt': `hit ${'é'.repeat(20)}\n`,
      'crlf.txt': 'hit\there\r\nsecond hit\r\n',
      'esc.txt': 'hit\x1b[2J\rZ\n',
      'bin.txt': Buffer.from([0x68, 0x69, 0x74, 0x20, 0xff, 0xfe, 0x0a]),
    })
    writeFile(Buffer.concat([Buffer.from(join(h.dir, 'caf')), Buffer.from([0xe9]), Buffer.from('.txt')]), 'hit\n')
    expect(await h.text('grep', { pattern: 'hit' })).toBe(
      [
        'Found 6 matches',
        '',
        'bin.txt',
        'Line 1: (line is not valid UTF-8)',
        '',
        'caf\ufffd.txt',
        'Line 1: hit',
        '',
        'crlf.txt',
        'Line 1: hit\there',
        'Line 2: second hit',
        '',
        'esc.txt',
        'Line 1: hit\\x1b[2J\\rZ',
        '',
        'long.txt',
        'Line 1: hit ééé (line truncated)',
      ].join('\n'),
    )
  })

  test('respects ignore files and skips hidden files during a walk, but always searches a file named in path', async () => {
    h = await harness()
    write(h.dir, { '.ignore': 'skipped.txt\n', 'skipped.txt': 'hit\n', '.hidden.txt': 'hit\n', 'seen.txt': 'hit\n' })
    expect(await h.text('grep', { pattern: 'hit' })).toBe('Found 1 match\n\nseen.txt\nLine 1: hit')
    expect(await h.text('grep', { pattern: 'hit', path: 'skipped.txt' })).toBe(
      'Found 1 match\n\nskipped.txt\nLine 1: hit',
    )
    expect(await h.text('grep', { pattern: 'hit', path: join(h.dir, '.hidden.txt') })).toBe(
      'Found 1 match\n\n.hidden.txt\nLine 1: hit',
    )
  })

  test('include takes one positive glob, braces included, matched relative to path', async () => {
    h = await harness()
    write(h.dir, { 'a.ts': 'hit\n', 'b.tsx': 'hit\n', 'c.js': 'hit\n', 'pkg/src/d.ts': 'hit\n', 'pkg/e.ts': 'hit\n' })
    expect(await h.text('grep', { pattern: 'hit', include: '*.{ts,tsx}' })).toBe(
      'Found 4 matches\n\na.ts\nLine 1: hit\n\nb.tsx\nLine 1: hit\n\npkg/e.ts\nLine 1: hit\n\npkg/src/d.ts\nLine 1: hit',
    )
    expect(await h.text('grep', { pattern: 'hit', path: 'pkg', include: 'src/*.ts' })).toBe(
      'Found 1 match\n\npkg/src/d.ts\nLine 1: hit',
    )
  })

  test('an include with a leading "./", or absolute inside path, matches as the relative glob would; one outside is INVALID_ARGS', async () => {
    h = await harness()
    write(h.dir, { 'src/a.ts': 'hit\n', 'b.ts': 'hit\n' })
    const relative = 'Found 1 match\n\nsrc/a.ts\nLine 1: hit'
    expect(await h.text('grep', { pattern: 'hit', include: 'src/*.ts' })).toBe(relative)
    expect(await h.text('grep', { pattern: 'hit', include: './src/*.ts' })).toBe(relative)
    expect(await h.text('grep', { pattern: 'hit', include: `${h.dir}/src/*.ts` })).toBe(relative)
    expect(await h.text('grep', { pattern: 'hit', path: 'src/a.ts', include: `${h.dir}/src/*.ts` })).toBe(relative)
    const outside = await h.call('grep', { pattern: 'hit', include: '/elsewhere/*.ts' })
    expect(outside.error?.code).toBe('INVALID_ARGS')
    expect(outside.content[0].text).toBe(
      `Error: include "/elsewhere/*.ts" is an absolute path outside the search path ${h.dir}: pass its directory as path and a glob relative to it as include`,
    )
  })

  test('a comma list or a negation in include is INVALID_ARGS with the fix', async () => {
    h = await harness()
    const list = await h.call('grep', { pattern: 'x', include: '*.ts,*.tsx' })
    expect(list.error?.code).toBe('INVALID_ARGS')
    expect(list.content[0].text).toBe(
      'Error: include must be ONE positive glob, not a comma-separated list ("*.ts,*.tsx"): use braces for alternatives, e.g. "*.{ts,tsx}"; to leave files out, choose a narrower path or pattern',
    )
    const negation = await h.call('grep', { pattern: 'x', include: '!*.md' })
    expect(negation.error?.code).toBe('INVALID_ARGS')
    expect(negation.content[0].text).toBe(
      'Error: include must be ONE positive glob, not a negation ("!*.md"): use braces for alternatives, e.g. "*.{ts,tsx}"; to leave files out, choose a narrower path or pattern',
    )
  })

  test("an invalid regex and an invalid include glob are SEARCH_INVALID_PATTERN with the model's pattern and ripgrep's reason", async () => {
    h = await harness()
    write(h.dir, { 'a.txt': 'a\n' })
    const regex = await h.call('grep', { pattern: 'a(' })
    expect(regex.error?.code).toBe('SEARCH_INVALID_PATTERN')
    // The model's own pattern is quoted, not ripgrep's rewritten `(?:a()`.
    expect(regex.content[0].text).toBe(
      'Error: invalid grep pattern "a(": regex parse error: unclosed group. To match ( literally, escape it with a backslash; the whole pattern as literal text is a\\(',
    )
    const glob = await h.call('grep', { pattern: 'a', include: '*.{ts' })
    expect(glob.error?.code).toBe('SEARCH_INVALID_PATTERN')
  })

  test('a newline in the pattern is SEARCH_INVALID_PATTERN; so is a NUL', async () => {
    h = await harness()
    const newline = await h.call('grep', { pattern: 'a\nb' })
    expect(newline.error?.code).toBe('SEARCH_INVALID_PATTERN')
    expect(newline.content[0].text).toBe(
      'Error: invalid grep pattern: it contains a line break, but grep matches one line at a time; search for a single line of the text, or pass multiline: true',
    )
    const nul = await h.call('grep', { pattern: 'a\0b' })
    expect(nul.error?.code).toBe('SEARCH_INVALID_PATTERN')
  })

  test('a pattern or include longer than one program argument can hold is refused before ripgrep, up to the byte; one that fits runs', async () => {
    h = await harness()
    write(h.dir, { 'a.txt': 'a\n' })
    // 131 071 bytes fit in one argument (Linux); `--regexp=` takes 9 of them, `--glob=` 7. "é" is 2 bytes.
    expect(await h.text('grep', { pattern: 'b'.repeat(131_062) })).toBe('No matches found')
    const long = await h.call('grep', { pattern: `${'é'.repeat(65_531)}b` })
    expect(long.error?.code).toBe('SEARCH_INVALID_PATTERN')
    expect(long.content[0].text).toBe(
      'Error: invalid grep pattern: it is 131063 bytes long, but ripgrep takes at most 131062 bytes of pattern (one program argument); search for a shorter, distinctive part of it',
    )
    expect(await h.text('grep', { pattern: 'a', include: `*${'x'.repeat(131_063)}` })).toBe('No matches found')
    const include = await h.call('grep', { pattern: 'a', include: `*${'x'.repeat(131_064)}` })
    expect(include.error?.code).toBe('INVALID_ARGS')
    expect(include.content[0].text).toBe(
      'Error: include is 131065 bytes long, but ripgrep takes at most 131064 bytes of glob (one program argument): use a shorter glob',
    )
  })

  test('a missing path is SEARCH_FAILED naming it', async () => {
    h = await harness()
    const result = await h.call('grep', { pattern: 'x', path: 'nope.txt' })
    expect(result.error).toEqual({
      code: 'SEARCH_FAILED',
      name: 'SearchError',
      message: 'grep search failed: nope.txt: no such file or directory',
    })
    const tilde = await h.call('grep', { pattern: 'x', path: '~/no-such-dsh-file' })
    expect(tilde.error?.message).toBe(
      `grep search failed: ~/no-such-dsh-file: no such file or directory (a leading "~" is not expanded; the home directory is ${homedir()}: pass ${homedir()}/no-such-dsh-file)`,
    )
  })

  test('hostile patterns and paths stay inert single arguments', async () => {
    h = await harness()
    write(h.dir, {
      'notes.txt': '$(touch pwned)\n`touch pwned`\n"quoted" \'single\'\n--pre=sh\n-e\n',
      '-dir/--pre=sh': '--pre=sh inside\n',
    })
    for (const [pattern, line] of [
      ['$(touch pwned)', 1],
      ['`touch pwned`', 2],
      ['"quoted" \'single\'', 3],
    ] as const) {
      expect(await h.text('grep', { pattern: pattern.replace(/[$()]/g, '\\$&') })).toBe(
        `Found 1 match\n\nnotes.txt\nLine ${line}: ${pattern}`,
      )
    }
    expect(await h.text('grep', { pattern: '--pre=sh', path: 'notes.txt' })).toBe(
      'Found 1 match\n\nnotes.txt\nLine 4: --pre=sh',
    )
    expect(await h.text('grep', { pattern: '-e', path: 'notes.txt' })).toBe('Found 1 match\n\nnotes.txt\nLine 5: -e')
    expect(await h.text('grep', { pattern: 'inside', path: '-dir' })).toBe(
      'Found 1 match\n\n-dir/--pre=sh\nLine 1: --pre=sh inside',
    )
    expect(await h.text('glob', { pattern: '--pre=sh', path: '-dir' })).toBe('-dir/--pre=sh')
    const dashPath = await h.call('grep', { pattern: 'x', path: '--pre=sh' })
    expect(dashPath.content[0].text).toBe('Error: grep search failed: --pre=sh: no such file or directory')
    expect(existsSync(join(h.dir, 'pwned'))).toBe(false)
  })

  test('over the cap (test-only in-memory spill store): the first page, the footer, and the complete result saved for the session', async () => {
    MemorySpillStore.saved.length = 0
    h = await harness({ config: { grepMaxMatches: 2 }, spill: MemorySpillStore })
    write(h.dir, { 'a.txt': 'hit 1\nhit 2\n', 'b.txt': 'hit 3\n' })
    expect(await h.text('grep', { pattern: 'hit' })).toBe(
      'Found 2 of 3 matches\n\na.txt\nLine 1: hit 1\nLine 2: hit 2\n\n[Showing 2 of 3 matches. The complete result is saved at /memory/session-1/1-grep-results.txt. Page through it with read (offset, limit) or search it with grep.]',
    )
    expect(MemorySpillStore.saved).toEqual([
      {
        owner: expect.objectContaining({ id: 'session-1' }),
        source: { toolName: 'grep', callId: 'call-1' },
        suggestedName: 'grep-results.txt',
        content:
          '[grep "hit" in .: 3 matching lines, one per line as <path>:<line>: <text>]\na.txt:1: hit 1\na.txt:2: hit 2\nb.txt:1: hit 3\n',
      },
    ])
  })

  test('over the cap without a session, or with a store that fails: a footer saying why it was not saved — never an error', async () => {
    h = await harness({ config: { grepMaxMatches: 1 }, spill: BrokenSpillStore })
    write(h.dir, { 'a.txt': 'hit\nhit\n' })
    expect(await h.text('grep', { pattern: 'hit' })).toBe(
      'Found 1 of 2 matches\n\na.txt\nLine 1: hit\n\n[Showing 1 of 2 matches. The complete result could not be saved (saving failed: disk full). To see the rest, use a more specific pattern, a deeper path, or include.]',
    )
    const noSession = await h.call('grep', { pattern: 'hit', path: h.dir }, { session: false })
    expect(noSession.content[0].text).toContain('could not be saved (the call has no session to own the file)')
  })

  test('a directory of only directories has no matches', async () => {
    h = await harness()
    mkdirSync(join(h.dir, 'x/y'), { recursive: true })
    expect(await h.text('grep', { pattern: 'a' })).toBe('No matches found')
  })

  test('over the cap with the real local spill store: the footer names a private file holding the complete result', async () => {
    h = await harness({ config: { grepMaxMatches: 1 } })
    const root = join(h.dir, 'spill-root')
    await h.ctx.plugin(LocalSpillStore, { root })
    await until(() => h.ctx.get('spillStore') !== undefined, 'the spill store is loaded')
    write(h.dir, { 'src/a.txt': 'hit 1\nhit 2\n' })
    const text = await h.text('grep', { pattern: 'hit', path: 'src' })
    const match =
      /^Found 1 of 2 matches\n\nsrc\/a\.txt\nLine 1: hit 1\n\n\[Showing 1 of 2 matches\. The complete result is saved at (\/\S+)\. Page through it with read \(offset and limit\) or search it with grep, passing that path\.\]$/.exec(
        text,
      )
    expect(match).not.toBeNull()
    const locator = match?.[1] as string
    expect(locator.startsWith(root)).toBe(true)
    expect(locator.endsWith('grep-results.txt')).toBe(true)
    expect(readFileSync(locator, 'utf8')).toBe(
      '[grep "hit" in src: 2 matching lines, one per line as <path>:<line>: <text>]\nsrc/a.txt:1: hit 1\nsrc/a.txt:2: hit 2\n',
    )
    expect(statSync(locator).mode & 0o777).toBe(0o600)
  })

  test('a capped grep over minified files stays within the budget: fewer rows when lines are long, the footer says how many of how many', async () => {
    h = await harness({ spill: MemorySpillStore })
    MemorySpillStore.saved.length = 0
    const minified = Array.from({ length: 50 }, (_, i) => `function f${i}(){return ${'x+'.repeat(1500)}1}`).join('\n')
    write(h.dir, Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`dist/bundle${i}.min.js`, minified])))
    const text = await h.text('grep', { pattern: 'function' })
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(30_000)
    const shown = text.split('\n').filter((line) => line.startsWith('Line ')).length
    expect(shown).toBe(14)
    expect(
      text.startsWith(`Found ${shown} of 250 matches\n\ndist/bundle0.min.js\nLine 1: function f0(){return x+x+`),
    ).toBe(true)
    expect(text).toContain(
      `[Showing ${shown} of 250 matches. The complete result is saved at /memory/session-1/1-grep-results.txt.`,
    )
    // The saved result: every match, one per line, each row's preview cut and marked like the page's.
    const saved = MemorySpillStore.saved[0]?.content.split('\n') ?? []
    expect(saved.length).toBe(252)
    expect(saved[250]).toMatch(/^dist\/bundle4\.min\.js:50: function f49\(\)\{return (x\+)+ \(line truncated\)$/)
  })

  test('a pattern with unescaped metacharacters that finds nothing says how to match them literally', async () => {
    h = await harness()
    write(h.dir, { 'a.js': 'function isEspree(parser) {}\n' })
    expect(await h.text('grep', { pattern: 'function isEspree(parser)' })).toBe(
      'No matches found\n\n[The pattern is a regular expression, in which ( ) are special characters, not literal text. To match them literally, escape each with a backslash: function isEspree\\(parser\\)]',
    )
    expect(await h.text('grep', { pattern: 'function isEspree\\(parser\\)' })).toBe(
      'Found 1 match\n\na.js\nLine 1: function isEspree(parser) {}',
    )
  })

  test('.gitignore applies the same outside a git repository as inside one', async () => {
    h = await harness()
    write(h.dir, {
      'plain/.gitignore': 'skipped.txt\n',
      'plain/skipped.txt': 'hit\n',
      'plain/kept.txt': 'hit\n',
      'repo/.gitignore': 'skipped.txt\n',
      'repo/skipped.txt': 'hit\n',
      'repo/kept.txt': 'hit\n',
    })
    mkdirSync(join(h.dir, 'repo/.git'))
    expect(await h.text('grep', { pattern: 'hit', path: 'plain' })).toBe('Found 1 match\n\nplain/kept.txt\nLine 1: hit')
    expect(await h.text('grep', { pattern: 'hit', path: 'repo' })).toBe('Found 1 match\n\nrepo/kept.txt\nLine 1: hit')
  })
})
