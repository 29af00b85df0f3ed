import { afterEach, describe, expect, test } from 'vitest'
import { invalidPatternMessage } from '../src/common-text.ts'
import { GrepResults } from '../src/grep-results.ts'
import { resolveRoot } from '../src/paths.ts'
import { GrepCollector } from '../src/records.ts'
import { type Harness, harness, write } from './helpers.ts'

// The texts that teach (docs/model-surface.md#errors): each with its exact words.

const parseError = (reason: string) => `rg: regex parse error:\n    (?:x)\n    ^\nerror: ${reason}\n`

describe('a regex parse error for an unescaped metacharacter says how to escape it', () => {
  test.each([
    [
      'foo(',
      'unclosed group',
      'To match ( literally, escape it with a backslash; the whole pattern as literal text is foo\\(',
    ],
    [
      'foo)',
      'unopened group',
      'To match ) literally, escape it with a backslash; the whole pattern as literal text is foo\\)',
    ],
    [
      'a[b',
      'unclosed character class',
      'To match [ literally, escape it with a backslash; the whole pattern as literal text is a\\[b',
    ],
    [
      '*.ts',
      'repetition operator missing expression',
      'To match * literally, escape it with a backslash; the whole pattern as literal text is \\*\\.ts',
    ],
    [
      'a{2',
      'unclosed counted repetition',
      'To match { literally, escape it with a backslash; the whole pattern as literal text is a\\{2',
    ],
    ['fn\\s+main(', 'unclosed group', 'To match ( literally, escape it with a backslash: \\('],
  ])('%s (%s)', (pattern, reason, hint) => {
    expect(invalidPatternMessage('grep', pattern, parseError(reason))).toBe(
      `invalid grep pattern "${pattern}": regex parse error: ${reason}. ${hint}`,
    )
  })

  test('a pattern ending with a lone backslash is told so; other errors and glob patterns get no escape hint', () => {
    expect(invalidPatternMessage('grep', 'a\\', parseError('unclosed group'))).toBe(
      'invalid grep pattern "a\\": regex parse error: unclosed group. The pattern ends with a lone backslash, which escapes nothing: write \\\\ to match a backslash',
    )
    expect(invalidPatternMessage('grep', '(?<n', parseError('invalid capture group character'))).toBe(
      'invalid grep pattern "(?<n": regex parse error: invalid capture group character',
    )
    expect(
      invalidPatternMessage(
        'glob',
        '{a',
        "rg: error parsing glob '{a': unclosed alternate group; missing '}' (maybe escape '{' with '[{]'?)\n",
      ),
    ).toBe(
      "invalid glob pattern \"{a\": error parsing glob '{a': unclosed alternate group; missing '}' (maybe escape '{' with '[{]'?)",
    )
  })
})

/** The preview the collector makes of one match record. */
function previewOf(
  text: string,
  submatch: { start: number; end: number } | undefined,
  maxLineBytes: number,
): string | null {
  const results = new GrepResults(10, undefined)
  const collector = new GrepCollector(resolveRoot('/w', undefined), maxLineBytes, results)
  const record = Buffer.from(
    JSON.stringify({
      type: 'match',
      data: {
        path: { text: '/w/f' },
        lines: { text },
        line_number: 1,
        absolute_offset: 0,
        submatches: submatch ? [{ match: { text: 'm' }, ...submatch }] : [],
      },
    }),
  )
  collector.record(record, 0, record.length)
  const line = results.files()[0]?.lines[0]
  return line === undefined ? null : `${line.preview} ${line.truncated}`
}

describe('a long line is previewed around its first match', () => {
  test('10 000 a then NEEDLE: the preview ends with NEEDLE, cut before with …', () => {
    const text = `${'a'.repeat(10_000)}NEEDLE\n`
    expect(previewOf(text, { start: 10_000, end: 10_006 }, 2000)).toBe(`…${'a'.repeat(1994)}NEEDLE true`)
  })

  test('a match in the middle: a quarter of the room before it, … on both cut sides', () => {
    const text = `${'a'.repeat(5000)}NEEDLE${'b'.repeat(5000)}`
    expect(previewOf(text, { start: 5000, end: 5006 }, 40)).toBe(`…${'a'.repeat(10)}NEEDLE${'b'.repeat(24)}… true`)
  })

  test("a match within the first grepMaxLineBytes keeps today's head preview, without …", () => {
    expect(previewOf(`NEEDLE${'a'.repeat(100)}`, { start: 0, end: 6 }, 20)).toBe(`NEEDLE${'a'.repeat(14)} true`)
  })

  test('a match longer than the room is shown from its start; cuts fall on character boundaries', () => {
    expect(previewOf(`${'x'.repeat(50)}${'é'.repeat(30)}`, { start: 50, end: 110 }, 11)).toBe(`…${'é'.repeat(5)}… true`)
    expect(previewOf(`${'é'.repeat(60)}NEEDLE`, { start: 120, end: 126 }, 11)).toBe(`…${'é'.repeat(2)}NEEDLE true`)
  })

  test('a line with escapes is decoded to find the match (quotes and tabs before it)', () => {
    const text = `${'"\t'.repeat(3000)}NEEDLE\n`
    expect(previewOf(text, { start: 6000, end: 6006 }, 20)).toBe(`…${'"\t'.repeat(7)}NEEDLE true`)
  })
})

let h: Harness | undefined
afterEach(async () => {
  await h?.cleanup()
  h = undefined
})

describe('through the tool', () => {
  test('grep of a file whose one line is 10 000 a then NEEDLE shows NEEDLE', async () => {
    h = await harness()
    write(h.dir, { 'min.js': `${'a'.repeat(10_000)}NEEDLE\n` })
    expect(await h.text('grep', { pattern: 'NEEDLE' })).toBe(
      `Found 1 match\n\nmin.js\nLine 1: …${'a'.repeat(1994)}NEEDLE (line truncated)`,
    )
  })

  test('no match for foo(baz): the metacharacter hint only when the literal text is in the files searched', async () => {
    h = await harness()
    // The regex foo(baz) would match "foobaz": neither file has that, and only the second has the literal text.
    write(h.dir, { 'a.js': 'call(foo)\n' })
    expect(await h.text('grep', { pattern: 'foo(baz)' })).toBe('No matches found')
    write(h.dir, { 'b.js': 'if (foo(baz)) {}\n' })
    expect(await h.text('grep', { pattern: 'foo(baz)' })).toBe(
      'No matches found\n\n[The pattern is a regular expression, in which ( ) are special characters, not literal text. To match them literally, escape each with a backslash: foo\\(baz\\)]',
    )
    // The literal check searches what grep searched: include and path count.
    expect(await h.text('grep', { pattern: 'foo(baz)', include: '*.ts' })).toBe('No matches found')
  })
})
