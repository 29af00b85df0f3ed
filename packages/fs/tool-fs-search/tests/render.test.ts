import { describe, expect, test } from 'vitest'
import {
  abortedMessage, capFooter, exitMessage, invalidPatternMessage, killedMessage, launchFailedMessage, malformedMessage,
  missingPathMessage, overflowMessage, partialNote, UNSAVED,
} from '../src/common-text.ts'
import { GLOB_PROMPT, globDescription, renderGlob } from '../src/glob-text.ts'
import { GREP_PROMPT, grepDescription, renderGrep, type GrepFileValue } from '../src/grep-text.ts'

const saved = { saved: { locator: '/tmp/spill/s1/grep-results.txt', retrievalHint: 'Read it with read (offset/limit) or search it with grep.' } }

describe('glob text', () => {
  test('one path per line; the cwd root\'s files plain, control characters escaped', () => {
    expect(renderGlob({ paths: ['a.ts', 'src/b c.ts', 'new\nline', 'n\ufffd'] }, { maxResults: 10 })).toBe('a.ts\nsrc/b c.ts\nnew\\nline\nn\ufffd')
  })

  test('nothing found', () => {
    expect(renderGlob({ paths: [] }, { maxResults: 10 })).toBe('No files found')
  })

  test('over the cap: the page, then a footer with shown, total and where the complete list is', () => {
    expect(renderGlob({ paths: ['a', 'b', 'c'], spill: saved }, { maxResults: 2 })).toBe(
      'a\nb\n\n[Showing 2 of 3 files. The complete result is saved at /tmp/spill/s1/grep-results.txt. Read it with read (offset/limit) or search it with grep.]')
  })

  test('over the cap without a store: the footer says it was not saved and how to narrow the search', () => {
    expect(renderGlob({ paths: ['a', 'b', 'c'], spill: { unsaved: UNSAVED.noStore } }, { maxResults: 1 })).toBe(
      'a\n\n[Showing 1 of 3 files. The complete result could not be saved (no spill store is loaded). To see the rest, use a more specific pattern or a deeper path.]')
  })

  test('a root inside a version-control directory says why nothing is listed', () => {
    expect(renderGlob({ paths: [], insideVcs: { root: '.git/objects', dir: '.git' } }, { maxResults: 1 })).toBe(
      'No files found\n\n[.git/objects is inside a .git directory, whose contents glob never lists]')
  })

  test('partial results carry a short note', () => {
    expect(renderGlob({ paths: ['a'], warning: 'rg: /w/b: Permission denied (os error 13)\n' }, { maxResults: 5 })).toBe(
      'a\n\n[Some paths could not be searched, so the results may be incomplete: rg: /w/b: Permission denied (os error 13)]')
  })
})

describe('grep text', () => {
  const files: GrepFileValue[] = [
    { path: 'src/a.ts', lines: [{ line: 3, preview: '\tconst x = 1 // TODO', truncated: false }, { line: 10, preview: 'TODO: é', truncated: true }] },
    { path: 'b\tc\x1b.txt', lines: [{ line: 1, preview: null, truncated: false }, { line: 2, preview: 'a\x1b[31mTODO\r', truncated: false }] },
  ]

  test('header, blank line, groups separated by blank lines, path then "Line <n>:" rows', () => {
    expect(renderGrep({ files, total: 4 }, { maxMatches: 250 })).toBe([
      'Found 4 matches',
      '',
      'src/a.ts',
      'Line 3: \tconst x = 1 // TODO',
      'Line 10: TODO: é (line truncated)',
      '',
      'b\\tc\\x1b.txt',
      'Line 1: (line is not valid UTF-8)',
      'Line 2: a\\x1b[31mTODO\\r',
    ].join('\n'))
  })

  test('one match is singular; none is "No matches found"', () => {
    expect(renderGrep({ files: [{ path: 'x', lines: [{ line: 7, preview: 'y', truncated: false }] }], total: 1 }, { maxMatches: 5 })).toBe('Found 1 match\n\nx\nLine 7: y')
    expect(renderGrep({ files: [], total: 0 }, { maxMatches: 5 })).toBe('No matches found')
  })

  test('over the cap: "Found K of N matches", the first K lines in order, then the footer', () => {
    expect(renderGrep({ files, total: 4, spill: saved }, { maxMatches: 3 })).toBe([
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
    ].join('\n'))
  })

  test('over the cap on a file boundary shows no empty group', () => {
    expect(renderGrep({ files, total: 4, spill: { unsaved: UNSAVED.noSession } }, { maxMatches: 2 })).toBe([
      'Found 2 of 4 matches',
      '',
      'src/a.ts',
      'Line 3: \tconst x = 1 // TODO',
      'Line 10: TODO: é (line truncated)',
      '',
      '[Showing 2 of 4 matches. The complete result could not be saved (the call has no session to own the file). To see the rest, use a more specific pattern, a deeper path, or include.]',
    ].join('\n'))
  })

  test('partial results: the matches, then a note naming at most three unreadable paths', () => {
    const stderr = ['a', 'b', 'c', 'd', 'e'].map((p) => `rg: /w/${p}: Permission denied (os error 13)`).join('\n')
    expect(renderGrep({ files: files.slice(0, 1), total: 2, warning: stderr }, { maxMatches: 5 }).split('\n\n').at(-1)).toBe(
      '[Some paths could not be searched, so the results may be incomplete: rg: /w/a: Permission denied (os error 13); rg: /w/b: Permission denied (os error 13); rg: /w/c: Permission denied (os error 13) (and 2 more)]')
  })
})

describe('footers', () => {
  test('a failed save names the failure', () => {
    expect(capFooter('grep', 1, 2, 'matches', { unsaved: UNSAVED.failed('EACCES: permission denied') })).toBe(
      '[Showing 1 of 2 matches. The complete result could not be saved (saving failed: EACCES: permission denied). To see the rest, use a more specific pattern, a deeper path, or include.]')
  })

  test('a note without stderr still reads as a sentence', () => {
    expect(partialNote('')).toBe('[Some paths could not be searched, so the results may be incomplete: ripgrep gave no reason]')
  })
})

describe('error messages', () => {
  test('say what, where and why', () => {
    expect(launchFailedMessage('grep', '/opt/rg', 'spawn /opt/rg ENOENT')).toBe('grep search failed: could not start ripgrep (/opt/rg): spawn /opt/rg ENOENT')
    expect(abortedMessage('glob')).toBe('glob search aborted: the call was cancelled or ran out of time, and ripgrep was stopped')
    expect(overflowMessage('grep', 20_000_000)).toBe('grep search stopped: ripgrep printed more than 20000000 bytes of raw output. To search less, use a more specific pattern, a deeper path, or include.')
    expect(overflowMessage('glob', 5)).toBe('glob search stopped: ripgrep printed more than 5 bytes of raw output. To search less, use a more specific pattern or a deeper path.')
    expect(malformedMessage('grep', 'a record that is not JSON: "x"')).toBe('grep search failed: could not read ripgrep\'s output (a record that is not JSON: "x")')
    expect(killedMessage('grep', 'SIGKILL')).toBe('grep search failed: ripgrep was killed by SIGKILL')
    expect(exitMessage('grep', 2, 'rg: nope: No such file or directory (os error 2)\n')).toBe('grep search failed (exit 2): rg: nope: No such file or directory (os error 2)')
    expect(exitMessage('glob', 101, '')).toBe('glob search failed (exit 101): ripgrep printed no error')
    expect(missingPathMessage('grep', 'src/nope')).toBe('grep search failed: src/nope: no such file or directory')
  })

  test('an invalid pattern keeps ripgrep\'s own lines, so its caret still points at the problem', () => {
    expect(invalidPatternMessage('grep', 'rg: regex parse error:\n    (?:a()\n    ^\nerror: unclosed group\n')).toBe(
      'invalid grep pattern: rg: regex parse error:\n    (?:a()\n    ^\nerror: unclosed group')
  })
})

describe('model-facing guidance', () => {
  test('the prompt sections', () => {
    expect(GLOB_PROMPT).toBe([
      'To find files by name or path pattern, use this server\'s glob tool rather than shell commands such as find or ls.',
      'glob lists hidden files and files ignored by .gitignore too; only the contents of version-control directories (.git, .svn, .hg, .bzr, .jj, .sl) are never listed.',
    ].join('\n'))
    expect(GREP_PROMPT).toBe([
      'To search file contents, use this server\'s grep tool rather than shell commands such as grep or rg.',
      'Its "Line N:" numbers are line numbers in the file: read a matched file (offset near N) to see the surrounding code.',
    ].join('\n'))
  })

  test('the descriptions state the caps from the config', () => {
    expect(globDescription(100)).toContain('At most 100 paths are shown')
    expect(grepDescription(250, 2000)).toContain('At most 250 lines are shown')
    expect(grepDescription(250, 2000)).toContain('Lines longer than 2000 bytes are cut and marked "(line truncated)"')
  })
})
