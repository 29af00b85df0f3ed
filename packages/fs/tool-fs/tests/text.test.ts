import { expect, test } from 'vitest'
import {
  capsWithin,
  messages,
  readDescription,
  readParameters,
  readPrompt,
  render,
  renderFooter,
} from '@deepseek-ai/dsh-tool-fs'

/** The default caps: 51 200 bytes of rows at most, within the 30 000-byte result limit. */
const caps = capsWithin({ maxLines: 2000, maxBytes: 51200, maxLineChars: 2000, maxResultBytes: 30000 })
const rows = [
  { line: 7, text: 'const a = 1', truncated: false },
  { line: 8, text: '', truncated: false },
  { line: 9, text: 'x'.repeat(5), truncated: true },
]

test('rows are "N: <line>", a blank line, then a footer saying the file ended', () => {
  expect(render({ offset: 7, rows, end: { kind: 'eof', totalLines: 9 } }, caps)).toBe(
    '7: const a = 1\n8: \n9: xxxxx (line truncated)\n\n[end of file: 9 lines]',
  )
  expect(
    render(
      { offset: 1, rows: [{ line: 1, text: 'only', truncated: false }], end: { kind: 'eof', totalLines: 1 } },
      caps,
    ),
  ).toBe('1: only\n\n[end of file: 1 line]')
})

test('an empty file is just the footer', () => {
  expect(render({ offset: 1, rows: [], end: { kind: 'eof', totalLines: 0 } }, caps)).toBe('[empty file]')
})

test('when more lines follow, the footer gives the offset to continue with and why the page stopped', () => {
  expect(render({ offset: 7, rows, end: { kind: 'limit' } }, caps)).toBe(
    '7: const a = 1\n8: \n9: xxxxx (line truncated)\n\n[more lines follow: continue with offset=10]',
  )
  expect(render({ offset: 7, rows, end: { kind: 'bytes' } }, caps)).toBe(
    '7: const a = 1\n8: \n9: xxxxx (line truncated)\n\n[more lines follow; this read stopped at its 30000-byte limit: continue with offset=10]',
  )
})

test('error messages say what, where and what to do instead', () => {
  expect(messages.notFound('/w/a.ts')).toBe('file not found: /w/a.ts')
  expect(messages.offsetPastEnd('/w/a.ts', 12, 10)).toBe('offset 12 is past the end of /w/a.ts: the file has 10 lines')
  expect(messages.offsetPastEnd('/w/a.ts', 3, 1)).toBe('offset 3 is past the end of /w/a.ts: the file has 1 line')
  expect(messages.offsetPastEnd('/w/a.ts', 2, 0)).toBe('offset 2 is past the end of /w/a.ts: the file is empty')
  expect(messages.directory('/w/src')).toBe('/w/src is a directory, not a file; use glob to list the files in it')
  expect(messages.notRegular('/w/p', 'a FIFO')).toBe(
    '/w/p is not a regular file (it is a FIFO); read only reads regular files',
  )
  expect(messages.binary('/w/a.png')).toBe(
    '/w/a.png looks binary (a NUL byte in its first 8 KiB); read only shows text files',
  )
  expect(messages.invalidUtf8('/w/a.txt', 3)).toBe(
    '/w/a.txt is not valid UTF-8 text (line 3); read only shows UTF-8 text files',
  )
  expect(messages.readFailed('/w/a', 'EACCES (permission denied)')).toBe('cannot read /w/a: EACCES (permission denied)')
  expect(messages.nulInPath()).toBe('path must not contain a NUL character')
})

test('the prompt section, description and schema are exact and byte-stable', () => {
  expect(readPrompt(caps)).toBe(
    [
      "To look at a text file, use this server's read tool rather than shell commands such as cat, head, tail or sed.",
      'It shows up to 2000 lines (at most 30000 bytes) per call as "N: <line>" rows, N being the line number in the file — the same numbers grep reports, so pass offset near a match to read around it.',
      'The last line of the result says whether the file ended or which offset to continue with; a large file is read in pages, never all at once.',
      'Lines longer than 2000 characters are cut and marked "(line truncated)". A file that a result said it was saved to can be paged the same way.',
    ].join('\n'),
  )
  expect(readDescription(caps)).toBe(
    'Read a UTF-8 text file as numbered rows "N: <line>" (1-based line numbers, matching grep). Reads up to 2000 lines and 30000 bytes per call from offset; a footer says whether the file ended or gives the offset to continue with. Lines over 2000 characters are cut. Directories, binary and non-UTF-8 files are refused with an error. A PNG, JPEG, GIF or WebP file is returned as an image.',
  )
  expect(JSON.stringify(readParameters(caps))).toBe(
    JSON.stringify({
      additionalProperties: false,
      type: 'object',
      required: ['path'],
      properties: {
        path: {
          minLength: 1,
          description: 'The file to read, absolute or relative to the working directory.',
          type: 'string',
        },
        offset: { minimum: 1, description: 'Line number to start at (1-based). Default 1.', type: 'integer' },
        limit: { minimum: 1, description: 'How many lines to read. Default and maximum 2000.', type: 'integer' },
      },
    }),
  )
  expect(JSON.stringify(readParameters(caps))).toBe(JSON.stringify(readParameters({ ...caps })))
})

test('the rows get what the result limit leaves once the widest footer has room', () => {
  const widest = renderFooter({ offset: Number.MAX_SAFE_INTEGER, rows: [], end: { kind: 'bytes' } }, caps)
  expect(widest).toBe(
    '[more lines follow; this read stopped at its 30000-byte limit: continue with offset=9007199254740991]',
  )
  expect(caps).toEqual({
    maxLines: 2000,
    maxBytes: 30000 - Buffer.byteLength(widest) - 2,
    limitBytes: 30000,
    maxLineChars: 2000,
  })
  // A smaller maxBytes wins, and is the limit the texts state.
  expect(capsWithin({ maxLines: 7, maxBytes: 400, maxLineChars: 90, maxResultBytes: 30000 })).toEqual({
    maxLines: 7,
    maxBytes: 400,
    limitBytes: 400,
    maxLineChars: 90,
  })
})

test('an error names a huge path once, in part, on one line', () => {
  const path = `/w/${'d/'.repeat(50_000)}a\nb.txt`
  const message = messages.offsetPastEnd(path, 5, 1)
  expect(Buffer.byteLength(message)).toBeLessThan(400)
  expect(message).toMatch(/^offset 5 is past the end of \/w\/(d\/)+d?…: the file has 1 line$/)
  expect(messages.notFound('/w/a\nb\x1b[31m')).toBe('file not found: /w/a\\nb\\x1b[31m')
})

test('the README shows the exact prompt, description and schema', async () => {
  const { readFile } = await import('node:fs/promises')
  const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8')
  expect(readme).toContain(`\`\`\`\n${readPrompt(caps)}\n\`\`\``)
  expect(readme).toContain(`\`\`\`\n${readDescription(caps)}\n\`\`\``)
  expect(readme).toContain(`\`\`\`json\n${JSON.stringify(readParameters(caps), null, 2)}\n\`\`\``)
})
