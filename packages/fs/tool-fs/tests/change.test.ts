import { expect, test } from 'vitest'
import {
  closestRegion,
  countLines,
  decode,
  dominantEol,
  planEdit,
  shapeWrite,
  stripRowPrefixes,
} from '../src/change.ts'
import { changeMessages, editCutNote, renderEdit, renderStale, renderWrite } from '../src/change-text.ts'

const edit = (text: string, oldString: string, newString: string, replaceAll = false) =>
  planEdit(text, { oldString, newString, replaceAll })

test('an exact match is replaced; the result gives the new line numbers of the change', () => {
  expect(edit('a\nb\nc\n', 'b', 'B1\nB2')).toEqual({
    kind: 'edited',
    text: 'a\nB1\nB2\nc\n',
    count: 1,
    match: 'exact',
    changes: [{ firstLine: 2, lastLine: 3 }],
    shifts: [{ after: 2, delta: 1 }],
  })
})

test("in a CRLF file new_string's \\n become \\r\\n, and an LF old_string matches CRLF text", () => {
  expect(edit('a\r\nb\r\nc\r\n', 'b', 'x\ny')).toMatchObject({ text: 'a\r\nx\r\ny\r\nc\r\n', match: 'exact' })
  expect(edit('a\r\nb\r\nc\r\n', 'a\nb\n', 'z\n')).toMatchObject({ text: 'z\r\nc\r\n', match: 'line-endings' })
  expect(edit('a\nb\nc\n', 'a\r\nb', 'q')).toMatchObject({ text: 'q\nc\n', match: 'line-endings' })
})

test('old_string copied with read\'s "N: " prefixes still matches, and new_string loses them too', () => {
  expect(edit('one\ntwo\nthree\n', '2: two\n3: three', '2: TWO\n3: THREE')).toMatchObject({
    text: 'one\nTWO\nTHREE\n',
    match: 'row-prefixes',
  })
  expect(edit('one\n\ntwo\n', '1: one\n2: \n3: two', 'x')).toMatchObject({ text: 'x\n', match: 'row-prefixes' })
  expect(stripRowPrefixes('12: a\nb')).toBeUndefined()
  expect(stripRowPrefixes('12: a\n13:\n')).toBe('a\n\n')
})

test('several matches are counted and placed; replace_all replaces every one', () => {
  expect(edit('x\ny\nx\nx\n', 'x', 'z')).toEqual({ kind: 'ambiguous', count: 3, lines: [1, 3, 4] })
  expect(edit('x\ny\nx\nx\n', 'x', 'z', true)).toMatchObject({
    text: 'z\ny\nz\nz\n',
    count: 3,
    changes: [
      { firstLine: 1, lastLine: 1 },
      { firstLine: 3, lastLine: 3 },
      { firstLine: 4, lastLine: 4 },
    ],
  })
})

test('no match gives the closest region of the file', () => {
  const text = 'import a\n\nfunction alpha() {\n  return 1\n}\n\nfunction beta() {\n  return 2\n}\n'
  expect(edit(text, 'function beta() {\n  return 3\n}', 'x')).toEqual({
    kind: 'not-found',
    closest: { firstLine: 7, lines: ['function beta() {', '  return 2', '}'] },
  })
  expect(closestRegion(text, '@@@')).toBeUndefined()
})

test('a BOM, a NUL and invalid UTF-8 are told apart', () => {
  expect(decode(Buffer.from('\uFEFFhi', 'utf8'))).toEqual({ kind: 'text', file: { bom: true, text: 'hi' } })
  expect(decode(Buffer.from([0x61, 0, 0x62]))).toEqual({ kind: 'binary' })
  expect(decode(Buffer.from([0x61, 0x0a, 0x62, 0xff]))).toEqual({ kind: 'invalid', line: 2 })
})

test('lines are counted as read counts them; the dominant line ending wins', () => {
  expect([countLines(''), countLines('a'), countLines('a\n'), countLines('a\nb')]).toEqual([0, 1, 1, 2])
  expect([dominantEol('a'), dominantEol('a\r\nb\r\nc\n'), dominantEol('a\nb\r\n')]).toEqual([undefined, '\r\n', '\n'])
})

test('write over an existing file keeps CRLF, the BOM and the missing final newline', () => {
  expect(shapeWrite('x\ny\n', { bom: true, text: 'a\r\nb' })).toEqual({ bom: true, text: 'x\r\ny' })
  expect(shapeWrite('x\ny', { bom: false, text: 'a\nb\n' })).toEqual({ bom: false, text: 'x\ny\n' })
  expect(shapeWrite('x\r\ny', undefined)).toEqual({ bom: false, text: 'x\r\ny' })
})

test('the result texts: Created/Updated with the line count, the edit heading and its rows', () => {
  expect(renderWrite({ path: '/w/a.ts', created: true, lines: 1 })).toBe('Created /w/a.ts (1 line)')
  expect(renderWrite({ path: '/w/a.ts', created: false, lines: 12 })).toBe('Updated /w/a.ts (12 lines)')
  const rows = (first: number, ...texts: string[]) =>
    texts.map((text, i) => ({ line: first + i, text, truncated: false }))
  expect(
    renderEdit({ path: '/w/a.ts', count: 1, match: 'exact', hunks: [rows(1, 'a', 'B', 'c')], cutAt: undefined }),
  ).toBe('Updated /w/a.ts: replaced 1 occurrence\n\n1: a\n2: B\n3: c')
  expect(
    renderEdit({ path: '/w/a.ts', count: 2, match: 'row-prefixes', hunks: [rows(1, 'B'), rows(9, 'B')], cutAt: 10 }),
  ).toBe(
    'Updated /w/a.ts: replaced 2 occurrences\n(old_string matched once the "N: " line-number prefixes that read shows were removed; leave them out next time)\n\n1: B\n…\n9: B\n' +
      editCutNote(10),
  )
})

test('error texts say what happened and what to do next', () => {
  expect(changeMessages.notRead('edit', '/w/a.ts')).toBe(
    'edit refused: /w/a.ts has not been read in this session; read it first (any page), so that you change what is there now',
  )
  expect(
    changeMessages.stale('edit', '/w/a.ts', {
      kind: 'region',
      firstLine: 3,
      removed: 1,
      rows: [{ line: 3, text: 'new', truncated: false }],
      more: false,
    }),
  ).toBe(
    'edit refused: /w/a.ts changed since you last read it; read it again, then retry. What changed: line 3 is now:\n3: new',
  )
  expect(renderStale({ kind: 'region', firstLine: 4, removed: 2, rows: [], more: false })).toBe(
    '2 lines were removed at line 4',
  )
  expect(renderStale({ kind: 'size', before: 10, after: 12 })).toBe('it is now 12 bytes (it was 10)')
  expect(changeMessages.manyMatches('/w/a.ts', 3, [1, 3, 4])).toBe(
    'old_string occurs 3 times in /w/a.ts (at lines 1, 3, 4); include more surrounding lines to make it unique, or pass replace_all: true to replace every one',
  )
  expect(changeMessages.noMatch('/w/a.ts', [{ line: 7, text: 'function beta() {', truncated: false }])).toBe(
    'old_string was not found in /w/a.ts (nor with other line endings or without "N: " prefixes). The closest region, lines 7-7:\n7: function beta() {\nCopy old_string from the file exactly (what follows each "N: "), or read the file again',
  )
})

test('a line-ending-only match works for an old_string of any length, and takes the \\r of a CRLF it starts or ends at', () => {
  const long = 'x'.repeat(100_000)
  expect(edit(`a\r\n${long}\r\nb\r\n`, `${long}\nb`, 'y')).toMatchObject({ text: 'a\r\ny\r\n', match: 'line-endings' })
  expect(edit('a\r\nb\r\nc', '\nb\n', '-')).toMatchObject({ text: 'a-c', match: 'line-endings' })
})
