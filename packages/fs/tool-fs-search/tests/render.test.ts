import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import {
  abortedMessage,
  abortedOutOfMemoryMessage,
  capFooter,
  exitMessage,
  savedOverflowMessage,
  invalidPatternMessage,
  killedMessage,
  launchFailedMessage,
  malformedMessage,
  missingPathMessage,
  outOfMemoryMessage,
  partialNote,
  recordOverflowMessage,
  specialPathMessage,
  stoppedNote,
  UNSAVED,
} from '../src/common-text.ts'
import { GLOB_PROMPT, globDescription, pageGlob, savedGlobRow } from '../src/glob-text.ts'
import {
  GREP_PROMPT,
  grepDescription,
  lineRow,
  literalHint,
  pageGrep,
  readRow,
  renderGrep as renderMode,
  savedCountHeader,
  savedFilesHeader,
  savedHeader,
  savedRow,
  savedRowPrefix,
  windowFooter,
} from '../src/grep-text.ts'
import type { GlobValue, GrepFileValue, GrepValue } from '../src/values.ts'

const WIDE = 1_000_000
const renderGlob = (
  value: Omit<GlobValue, 'total'> & { total?: number },
  caps: { maxResults: number; maxBytes?: number },
) => pageGlob({ total: value.paths.length, ...value }, { maxBytes: WIDE, ...caps }).text
const query = { pattern: 'TODO', path: '' }
const renderGrep = (
  value: Omit<GrepValue, 'query'> & { query?: GrepValue['query'] },
  caps: { maxMatches: number; maxBytes?: number },
) => pageGrep({ query, ...value }, { maxBytes: WIDE, ...caps }).text
const bytes = (text: string) => Buffer.byteLength(text, 'utf8')

const saved = {
  saved: {
    locator: '/tmp/spill/s1/grep-results.txt',
    retrievalHint: 'Read it with read (offset/limit) or search it with grep.',
  },
}

describe('glob text', () => {
  test("one path per line; the cwd root's files plain, control characters escaped", () => {
    expect(renderGlob({ paths: ['a.ts', 'src/b c.ts', 'new\nline', 'n\ufffd'] }, { maxResults: 10 })).toBe(
      'a.ts\nsrc/b c.ts\nnew\\nline\nn\ufffd',
    )
  })

  test('nothing found', () => {
    expect(renderGlob({ paths: [] }, { maxResults: 10 })).toBe('No files found')
  })

  test('over the cap: the page, then a footer with shown, total and where the complete list is', () => {
    expect(renderGlob({ paths: ['a', 'b', 'c'], spill: saved }, { maxResults: 2 })).toBe(
      'a\nb\n\n[Showing 2 of 3 files. The complete result is saved at /tmp/spill/s1/grep-results.txt. Read it with read (offset/limit) or search it with grep.]',
    )
  })

  test('over the cap without a store: the footer says it was not saved and how to narrow the search', () => {
    expect(renderGlob({ paths: ['a', 'b', 'c'], spill: { unsaved: UNSAVED.noStore } }, { maxResults: 1 })).toBe(
      'a\n\n[Showing 1 of 3 files. The complete result could not be saved (no spill store is loaded). To see the rest, use a more specific pattern or a deeper path.]',
    )
  })

  test('a root inside a version-control directory says why nothing is listed', () => {
    expect(renderGlob({ paths: [], insideVcs: { root: '.git/objects', dir: '.git' } }, { maxResults: 1 })).toBe(
      'No files found\n\n[.git/objects is inside a .git directory, whose contents glob never lists]',
    )
  })

  test('partial results carry a short note', () => {
    expect(
      renderGlob({ paths: ['a'], warning: 'rg: /w/b: Permission denied (os error 13)\n' }, { maxResults: 5 }),
    ).toBe(
      'a\n\n[Some paths could not be searched, so the results may be incomplete: rg: /w/b: Permission denied (os error 13)]',
    )
  })
})

describe('grep text', () => {
  const files: GrepFileValue[] = [
    {
      path: 'src/a.ts',
      lines: [
        { line: 3, preview: '\tconst x = 1 // TODO', truncated: false },
        { line: 10, preview: 'TODO: é', truncated: true },
      ],
    },
    {
      path: 'b\tc\x1b.txt',
      lines: [
        { line: 1, preview: null, truncated: false },
        { line: 2, preview: 'a\x1b[31mTODO\r', truncated: false },
      ],
    },
  ]

  test('header, blank line, groups separated by blank lines, path then "Line <n>:" rows', () => {
    expect(renderGrep({ files, total: 4 }, { maxMatches: 250 })).toBe(
      [
        'Found 4 matches',
        '',
        'src/a.ts',
        'Line 3: \tconst x = 1 // TODO',
        'Line 10: TODO: é (line truncated)',
        '',
        'b\\tc\\x1b.txt',
        'Line 1: (line is not valid UTF-8)',
        'Line 2: a\\x1b[31mTODO\\r',
      ].join('\n'),
    )
  })

  test('one match is singular; none is "No matches found"', () => {
    expect(
      renderGrep(
        { files: [{ path: 'x', lines: [{ line: 7, preview: 'y', truncated: false }] }], total: 1 },
        { maxMatches: 5 },
      ),
    ).toBe('Found 1 match\n\nx\nLine 7: y')
    expect(renderGrep({ files: [], total: 0 }, { maxMatches: 5 })).toBe('No matches found')
  })

  test('over the cap: "Found K of N matches", the first K lines in order, then the footer', () => {
    expect(renderGrep({ files, total: 4, spill: saved }, { maxMatches: 3 })).toBe(
      [
        'Found 3 of 4 matches',
        '',
        'src/a.ts',
        'Line 3: \tconst x = 1 // TODO',
        'Line 10: TODO: é (line truncated)',
        '',
        'b\\tc\\x1b.txt',
        'Line 1: (line is not valid UTF-8)',
        '',
        '[Showing 3 of 4 matches. The complete result is saved at /tmp/spill/s1/grep-results.txt. Read it with read (offset/limit) or search it with grep.]',
      ].join('\n'),
    )
  })

  test('over the cap on a file boundary shows no empty group', () => {
    expect(renderGrep({ files, total: 4, spill: { unsaved: UNSAVED.noSession } }, { maxMatches: 2 })).toBe(
      [
        'Found 2 of 4 matches',
        '',
        'src/a.ts',
        'Line 3: \tconst x = 1 // TODO',
        'Line 10: TODO: é (line truncated)',
        '',
        '[Showing 2 of 4 matches. The complete result could not be saved (the call has no session to own the file). To see the rest, use a more specific pattern, a deeper path, or include.]',
      ].join('\n'),
    )
  })

  test('partial results: the matches, then a note naming at most three unreadable paths', () => {
    const stderr = ['a', 'b', 'c', 'd', 'e'].map((p) => `rg: /w/${p}: Permission denied (os error 13)`).join('\n')
    expect(
      renderGrep({ files: files.slice(0, 1), total: 2, warning: stderr }, { maxMatches: 5 })
        .split('\n\n')
        .at(-1),
    ).toBe(
      '[Some paths could not be searched, so the results may be incomplete: rg: /w/a: Permission denied (os error 13); rg: /w/b: Permission denied (os error 13); rg: /w/c: Permission denied (os error 13) (and 2 more)]',
    )
  })
})

describe('footers', () => {
  test('a failed save names the failure', () => {
    expect(capFooter('grep', 1, 2, 'matches', { unsaved: UNSAVED.failed('EACCES: permission denied') })).toBe(
      '[Showing 1 of 2 matches. The complete result could not be saved (saving failed: EACCES: permission denied). To see the rest, use a more specific pattern, a deeper path, or include.]',
    )
  })

  test('a note without stderr still reads as a sentence', () => {
    expect(partialNote('')).toBe(
      '[Some paths could not be searched, so the results may be incomplete: ripgrep gave no reason]',
    )
  })
})

describe('error messages', () => {
  test('say what, where and why', () => {
    expect(launchFailedMessage('grep', '/opt/rg', 'spawn /opt/rg ENOENT')).toBe(
      'grep search failed: could not start ripgrep (/opt/rg): spawn /opt/rg ENOENT',
    )
    expect(abortedMessage('glob')).toBe(
      'glob search aborted: the call was cancelled or ran out of time, and ripgrep was stopped',
    )
    expect(savedOverflowMessage('grep', 1_073_741_824, 81_234)).toBe(
      'grep search stopped: after 81234 matching lines its complete result passed 1073741824 bytes, the most a saved result may hold (savedResultMaxBytes). To search less, use a more specific pattern, a deeper path, or include.',
    )
    expect(recordOverflowMessage('grep', 1000)).toBe(
      "grep search stopped: one record of ripgrep's output passed 1000 bytes, the most a search may hold (rawOutputMaxBytes); a file with an enormous line is the likely cause. To search less, use a more specific pattern, a deeper path, or include.",
    )
    expect(savedOverflowMessage('glob', 5, 2)).toBe(
      'glob search stopped: after 2 files its complete list passed 5 bytes, the most a saved result may hold (savedResultMaxBytes). To list less, use a more specific pattern or a deeper path.',
    )
    expect(abortedOutOfMemoryMessage('grep', 2_147_483_648)).toBe(
      'grep search failed: ripgrep ran out of memory and aborted (an allocation of 2147483648 bytes failed). A huge or endless ignore file (.gitignore, .ignore, .rgignore — a link to a device, say) or an enormous line is the usual cause; search a narrower path, or a single file.',
    )
    expect(outOfMemoryMessage('grep', 67_108_864)).toBe(
      'grep search failed: ripgrep used more than its memory limit (67108864 bytes, rgMaxMemoryBytes) and was stopped. A huge or endless ignore file (.gitignore, .ignore, .rgignore — a link to a device, say) or an enormous line is the usual cause; search a narrower path, or a single file.',
    )
    expect(specialPathMessage('grep', 'pipe', 'a FIFO')).toBe(
      'grep path pipe is a FIFO, not a regular file or a directory; grep searches only those',
    )
    expect(stoppedNote('grep', 27_000)).toBe(
      '[The search was stopped after 27000 ms, its time budget, before ripgrep finished: these are the matches found until then, and more may exist. To search less, use a more specific pattern, a deeper path, or include.]',
    )
    expect(stoppedNote('glob', 900)).toBe(
      '[The search was stopped after 900 ms, its time budget, before ripgrep finished: these are the files listed until then, and more may exist. To search less, use a more specific pattern or a deeper path.]',
    )
    expect(malformedMessage('grep', 'a record that is not JSON: "x"')).toBe(
      'grep search failed: could not read ripgrep\'s output (a record that is not JSON: "x")',
    )
    expect(killedMessage('grep', 'SIGKILL')).toBe('grep search failed: ripgrep was killed by SIGKILL')
    expect(exitMessage('grep', 2, 'rg: nope: No such file or directory (os error 2)\n')).toBe(
      'grep search failed (exit 2): rg: nope: No such file or directory (os error 2)',
    )
    expect(exitMessage('glob', 101, '')).toBe('glob search failed (exit 101): ripgrep printed no error')
    expect(missingPathMessage('grep', 'src/nope')).toBe('grep search failed: src/nope: no such file or directory')
  })

  test("an invalid pattern quotes the model's pattern, not ripgrep's rewritten one, with ripgrep's kind and reason", () => {
    expect(
      invalidPatternMessage('grep', 'a(', 'rg: regex parse error:\n    (?:a()\n       ^\nerror: unclosed group\n'),
    ).toBe(
      'invalid grep pattern "a(": regex parse error: unclosed group. To match ( literally, escape it with a backslash; the whole pattern as literal text is a\\(',
    )
    expect(invalidPatternMessage('grep', '(a|b){100}', 'rg: error building NFA\n')).toBe(
      'invalid grep pattern "(a|b){100}": error building NFA (the regex is too large or repeats too much to compile; simplify it)',
    )
  })

  test('every error text is bounded: an argument is quoted once, at most 300 bytes of it', () => {
    const huge = `(${'x'.repeat(70_000)}`
    const message = invalidPatternMessage(
      'grep',
      huge,
      `rg: regex parse error:\n    (?:${huge})\n    ^\nerror: unclosed group\n`,
    )
    expect(message).toBe(
      `invalid grep pattern "(${'x'.repeat(296)}…": regex parse error: unclosed group. To match ( literally, escape it with a backslash; the whole pattern as literal text is \\(${'x'.repeat(295)}…`,
    )
    expect(missingPathMessage('grep', 'p'.repeat(300_000))).toBe(
      `grep search failed: ${'p'.repeat(297)}…: no such file or directory`,
    )
    expect(bytes(exitMessage('grep', 2, `rg: ${'y'.repeat(100_000)}\n`.repeat(20)))).toBeLessThanOrEqual(2100)
  })
})

describe('model-facing guidance', () => {
  test('the prompt sections', () => {
    expect(GLOB_PROMPT).toBe(
      [
        "To find files by name or path pattern, use this server's glob tool rather than shell commands such as find or ls.",
        'glob lists hidden files and files ignored by .gitignore too (unless respect_gitignore is true); only the contents of version-control directories (.git, .svn, .hg, .bzr, .jj, .sl) are never listed.',
      ].join('\n'),
    )
    expect(GREP_PROMPT).toBe(
      [
        "To search file contents, use this server's grep tool rather than shell commands such as grep or rg.",
        'Its "Line N:" numbers are line numbers in the file: read a matched file (offset near N) to see the surrounding code.',
        'To learn only which files match, or how often, pass output_mode "files_with_matches" or "count" rather than listing every line.',
      ].join('\n'),
    )
  })

  test('the descriptions state the caps from the config', () => {
    expect(globDescription({ maxResults: 100, maxResultBytes: 30_000 })).toContain(
      'At most 100 paths and 30000 bytes are shown',
    )
    expect(globDescription({ maxResults: 100, maxResultBytes: 30_000 })).toContain(
      'most recently modified first (ties in path order)',
    )
    const grep = grepDescription({ maxMatches: 250, maxLineBytes: 2000, maxResultBytes: 30_000 })
    expect(grep).toContain('At most 250 lines (or files) and 30000 bytes are shown')
    expect(grep).toContain('Lines longer than 2000 bytes are cut and marked "(line truncated)"')
    expect(grep).toContain('the same inside and outside a git repository')
  })
})

describe('the byte budget', () => {
  const row = (line: number, preview: string) => ({ line, preview, truncated: false })
  const long = (n: number) => ({
    query,
    files: [{ path: 'min.js', lines: Array.from({ length: n }, (_, i) => row(i + 1, 'x'.repeat(90))) }],
    total: n,
    spill: saved,
  })

  test('grep stops its page at the budget as well as at the match cap: fewer rows when lines are long', () => {
    const page = pageGrep(long(10), { maxMatches: 250, maxBytes: 600 })
    expect(page.complete).toBe(false)
    expect(page.text).toBe(
      [
        'Found 4 of 10 matches',
        '',
        'min.js',
        ...[1, 2, 3, 4].map((n) => `Line ${n}: ${'x'.repeat(90)}`),
        '',
        '[Showing 4 of 10 matches. The complete result is saved at /tmp/spill/s1/grep-results.txt. Read it with read (offset/limit) or search it with grep.]',
      ].join('\n'),
    )
    expect(bytes(page.text)).toBeLessThanOrEqual(600)
  })

  test('a result under the match cap but over the budget is paged too', () => {
    expect(pageGrep(long(3), { maxMatches: 250, maxBytes: 320 })).toMatchObject({ complete: true })
    expect(pageGrep(long(3), { maxMatches: 250, maxBytes: 319 }).text.split('\n')[0]).toBe('Found 1 of 3 matches')
  })

  test('the first match is cut to fit when not even one row would, and marked', () => {
    const text = pageGrep(
      { query, files: [{ path: 'a', lines: [row(1, 'y'.repeat(5000))] }], total: 2, spill: saved },
      { maxMatches: 250, maxBytes: 400 },
    ).text
    expect(text).toMatch(/^Found 1 of 2 matches\n\na\nLine 1: y+ \(line truncated\)\n\n\[Showing 1 of 2 matches\./)
    // Exactly the budget: the header was reserved at its widest, "Found 2 of 2", as wide as "Found 1 of 2".
    expect(bytes(text)).toBe(400)
  })

  test('glob stops its page at the budget too', () => {
    const paths = Array.from({ length: 50 }, (_, i) => `dir/${String(i).padStart(2, '0')}-${'n'.repeat(40)}.ts`)
    const page = pageGlob({ paths, total: paths.length, spill: saved }, { maxResults: 100, maxBytes: 400 })
    expect(page.complete).toBe(false)
    expect(page.text.split('\n\n')[1]).toBe(
      '[Showing 4 of 50 files. The complete result is saved at /tmp/spill/s1/grep-results.txt. Read it with read (offset/limit) or search it with grep.]',
    )
    expect(bytes(page.text)).toBeLessThanOrEqual(400)
  })

  // Random values and configs, down to a budget smaller than the footer itself.
  const preview = fc.oneof(fc.constant(null), fc.string({ unit: 'binary', maxLength: 300 }))
  const line = fc.record({ line: fc.integer({ min: 1, max: 1e7 }), preview, truncated: fc.boolean() })
  const file = fc.record({
    path: fc.string({ unit: 'binary', minLength: 1, maxLength: 80 }),
    lines: fc.array(line, { minLength: 1, maxLength: 8 }),
  })
  const spill = fc.oneof(
    fc.constant(saved),
    fc.constant({ unsaved: UNSAVED.noStore }),
    fc.string({ maxLength: 400 }).map((m) => ({ unsaved: UNSAVED.failed(m) })),
  )
  const warning = fc.option(fc.string({ unit: 'binary', maxLength: 500 }), { nil: undefined })

  test('no grep page exceeds the budget, whatever the matches and the config (property)', () => {
    fc.assert(
      fc.property(
        fc.array(file, { maxLength: 12 }),
        spill,
        warning,
        fc.integer({ min: 1, max: 4000 }),
        fc.integer({ min: 1, max: 300 }),
        fc.boolean(),
        (files, spill, warning, maxBytes, maxMatches, stopped) => {
          const total = files.reduce((n, f) => n + f.lines.length, 0)
          const value: GrepValue = {
            query: { pattern: 'a(b', path: 'src' },
            files,
            total,
            spill,
            ...(warning === undefined ? {} : { warning }),
            ...(stopped ? { stoppedAfterMs: 27_000 } : {}),
          }
          const page = pageGrep(value, { maxMatches, maxBytes })
          expect(bytes(page.text)).toBeLessThanOrEqual(maxBytes)
          if (page.complete) expect(total <= maxMatches || total === 0).toBe(true)
        },
      ),
    )
  })

  test('no glob page exceeds the budget, whatever the paths and the config (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: 'binary', minLength: 1, maxLength: 200 }), { maxLength: 60 }),
        spill,
        warning,
        fc.integer({ min: 1, max: 4000 }),
        fc.integer({ min: 1, max: 100 }),
        (paths, spill, warning, maxBytes, maxResults) => {
          const page = pageGlob(
            { paths, total: paths.length, spill, ...(warning === undefined ? {} : { warning }) },
            { maxResults, maxBytes },
          )
          expect(bytes(page.text)).toBeLessThanOrEqual(maxBytes)
          if (page.complete) expect(paths.length).toBeLessThanOrEqual(maxResults)
        },
      ),
    )
  })

  test('a page with room for them shows rows in order, as a prefix of the complete result (property)', () => {
    fc.assert(
      fc.property(
        fc.array(file, { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 1, max: 30 }),
        (files, maxMatches) => {
          const total = files.reduce((n, f) => n + f.lines.length, 0)
          const page = pageGrep({ query, files, total, spill: saved }, { maxMatches, maxBytes: WIDE })
          const rows = page.text.split('\n').filter((l) => l.startsWith('Line '))
          expect(rows.length).toBe(Math.min(total, maxMatches))
        },
      ),
    )
  })
})

describe('saved results', () => {
  test('grep: a one-line header, then one match per line as <path>:<line>: <preview>', () => {
    const value: GrepValue = {
      query: { pattern: 'TODO', path: 'src', include: '*.ts' },
      files: [
        {
          path: 'src/a.ts',
          lines: [
            { line: 3, preview: '\tx // TODO', truncated: false },
            { line: 10, preview: 'TODO é', truncated: true },
          ],
        },
        { path: 'src/b\n.ts', lines: [{ line: 1, preview: null, truncated: false }] },
      ],
      total: 3,
    }
    const saved = [`${savedHeader(value)}\n`]
    for (const file of value.files) for (const line of file.lines) saved.push(savedRow(savedRowPrefix(file.path), line))
    expect(saved.join('')).toBe(
      [
        '[grep "TODO" include "*.ts" in src: 3 matching lines, one per line as <path>:<line>: <text>]',
        'src/a.ts:3: \tx // TODO',
        'src/a.ts:10: TODO é (line truncated)',
        'src/b\\n.ts:1: (line is not valid UTF-8)',
        '',
      ].join('\n'),
    )
  })

  test('grep: the header of an incomplete search says so, and of one line, singular', () => {
    expect(savedHeader({ query: { pattern: 'x', path: '' }, files: [], total: 1, stoppedAfterMs: 5 })).toBe(
      '[grep "x" in .: 1 matching line (incomplete: see the notes of the call\'s result), one per line as <path>:<line>: <text>]',
    )
  })

  test('glob: one path per line, escaped', () => {
    expect(['b.ts', 'a\tb.ts'].map(savedGlobRow).join('')).toBe('b.ts\na\\tb.ts\n')
  })
})

describe('empty results that teach', () => {
  test('a pattern with unescaped metacharacters adds one line saying so and how to escape them', () => {
    expect(
      renderGrep(
        { query: { pattern: 'function isEspree(parser)', path: '' }, files: [], total: 0, literalMatches: true },
        { maxMatches: 5 },
      ),
    ).toBe(
      'No matches found\n\n[The pattern is a regular expression, in which ( ) are special characters, not literal text. To match them literally, escape each with a backslash: function isEspree\\(parser\\)]',
    )
    expect(literalHint('a+b')).toBe(
      '[The pattern is a regular expression, in which + is a special character, not literal text. To match it literally, escape it with a backslash: a\\+b]',
    )
    expect(literalHint('a.b[0]+c')).toBe(
      '[The pattern is a regular expression, in which . [ ] + are special characters, not literal text. To match them literally, escape each with a backslash: a\\.b\\[0\\]\\+c]',
    )
  })

  test('a plain pattern, or one that already escapes, gets no hint', () => {
    expect(literalHint('plain.text')).toBeUndefined()
    expect(literalHint('fn\\s+main(')).toBeUndefined()
    expect(renderGrep({ files: [], total: 0 }, { maxMatches: 5 })).toBe('No matches found')
  })
})

describe('grep output modes render (docs/model-surface.md#tools)', () => {
  const caps = { maxMatches: 250, maxBytes: 200 }
  const spill = { saved: { locator: '/s/grep-results.txt', retrievalHint: 'Read it.' } }

  test('files_with_matches stops its page at the byte budget, footer and all', () => {
    const paths = Array.from({ length: 20 }, (_, i) => `src/file-${String(i).padStart(2, '0')}.ts`)
    const text = renderMode({ mode: 'files_with_matches', query, paths, total: 20, spill }, caps).text
    expect(text).toBe(
      [
        'Found 6 of 20 files',
        '',
        paths.slice(0, 6).join('\n'),
        '',
        '[Showing 6 of 20 files. The complete result is saved at /s/grep-results.txt. Read it.]',
      ].join('\n'),
    )
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(200)
  })

  test('count keeps its totals in the header whatever the page holds', () => {
    const counts = [
      { path: 'a.ts', count: 3 },
      { path: 'b.ts', count: 1 },
    ]
    expect(renderMode({ mode: 'count', query, counts, total: 2, matches: 4 }, caps).text).toBe(
      'Found 4 matches in 2 files\n\na.ts: 3\nb.ts: 1',
    )
    expect(
      renderMode(
        { mode: 'count', query, counts: counts.slice(0, 1), total: 2, matches: 4, spill },
        { ...caps, maxMatches: 1 },
      ).text,
    ).toBe(
      'Found 4 matches in 2 files\n\na.ts: 3\n\n[Showing 1 of 2 files. The complete result is saved at /s/grep-results.txt. Read it.]',
    )
  })

  test("a page of the model's own names its range and the next offset; the last page names none", () => {
    expect(windowFooter('matches', 10, 10, 57)).toBe('[Showing matches 11–20 of 57. To see more, pass offset=20.]')
    expect(windowFooter('files', 50, 7, 57)).toBe('[Showing files 51–57 of 57.]')
    expect(windowFooter('matches', 60, 0, 57)).toBe(
      '[offset 60 is past the end: there are 57 matches; pass a smaller offset.]',
    )
  })

  test('a multiline match is a row per line, in the default layout, the read layout and the saved rows', () => {
    const line = { line: 4, preview: 'a {\r\n  b\n}', truncated: true, multiline: true } as const
    expect(lineRow(line)).toBe('Line 4: a {\nLine 5:   b\nLine 6: } (line truncated)')
    expect(readRow(line)).toBe('4: a {\n5:   b\n6: } (line truncated)')
    expect(savedRow('x.ts:', line)).toBe('x.ts:4: a {\nx.ts:5:   b\nx.ts:6: } (line truncated)\n')
  })

  test('saved headers of the modes say how their rows read', () => {
    const base = { query: { pattern: 'TODO', path: 'src', type: 'ts' }, total: 12 }
    expect(savedFilesHeader({ ...base, mode: 'files_with_matches', paths: [] })).toBe(
      '[grep "TODO" type ts in src: 12 files with matches, one per line, most recently modified first]',
    )
    expect(savedCountHeader({ ...base, mode: 'count', counts: [], matches: 40 })).toBe(
      '[grep "TODO" type ts in src: 40 matching lines in 12 files, one file per line as <path>: <matching lines>]',
    )
    expect(savedHeader({ ...base, files: [], around: { before: 2, after: 1 } })).toBe(
      '[grep "TODO" type ts in src: 12 matching lines, one per line as <path>:<line>: <text>, with 2 lines before and 1 after each match]',
    )
  })
})
