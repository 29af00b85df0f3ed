import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import fc from 'fast-check'
import { createTestContext, type TestContext } from '@deepseek-ai/dsh-testing'
import { SystemPromptService } from '@deepseek-ai/dsh-system-prompt'
import ToolFs from '@deepseek-ai/dsh-tool-fs'

let t: TestContext
let dir: string
beforeAll(async () => {
  t = await createTestContext()
  await t.ctx.plugin(SystemPromptService)
  // Small caps so that windows, the line cap and the byte cap all come into play.
  await t.active(t.ctx.plugin(ToolFs, { maxLines: 7, maxBytes: 400, maxLineChars: 90 }))
  dir = await mkdtemp(join(tmpdir(), 'tool-fs-prop-'))
})
afterAll(async () => {
  await t.dispose()
  await rm(dir, { recursive: true, force: true })
})

/** What read must show: lines split on \n, none after a final newline, one \r before each \n dropped. */
function expectedLines(content: string): string[] {
  if (content === '') return []
  const lines = content.split('\n')
  const terminated = content.endsWith('\n')
  if (terminated) lines.pop()
  return lines.map((line, i) => (i < lines.length - 1 || terminated ? line.replace(/\r$/, '') : line))
}

const ROW = /^(\d+): (.*)$/s
const FOOTER =
  /^\[(?:end of file: (\d+) lines?|empty file|more lines follow(?:; this read stopped at its 400-byte limit)?: continue with offset=(\d+)(?:; the file has \d+ lines?)?)\]$/

async function page(path: string, offset: number, limit?: number) {
  const result = await t.ctx.tools.execute('read', limit === undefined ? { path, offset } : { path, offset, limit })
  expect(result.isError).toBe(false)
  const text = result.content[0].text
  const cut = text.lastIndexOf('\n\n')
  const footer = FOOTER.exec(cut < 0 ? text : text.slice(cut + 2))
  expect(footer).not.toBeNull()
  const rows =
    cut < 0
      ? []
      : text
          .slice(0, cut)
          .split('\n')
          .map((row) => {
            const match = ROW.exec(row)
            expect(match).not.toBeNull()
            return { line: Number(match![1]), text: match![2]! }
          })
  return {
    rows,
    totalLines: footer![1] === undefined ? undefined : Number(footer![1]),
    next: footer![2] === undefined ? undefined : Number(footer![2]),
  }
}

// Lines of any valid UTF-8 but no NUL (binary) and no newline; \r anywhere, also last. At most 90 characters, so no cut.
const lineArb = fc
  .string({ unit: 'binary', maxLength: 90 })
  .map((s) => s.replace(/[\u0000\n]/g, ''))
  .filter((s) => [...s].length <= 90)
let counter = 0

test('rows reassemble the file, for arbitrary lines and windows (property)', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(lineArb, { maxLength: 40 }),
      fc.constantFrom('\n', '\r\n'),
      fc.boolean(),
      fc.nat(),
      fc.option(fc.integer({ min: 1, max: 10 }), { nil: undefined }),
      async (lines, eol, finalEol, offsetSeed, limit) => {
        const content = lines.join(eol) + (finalEol && lines.length > 0 ? eol : '')
        const path = join(dir, `f${counter++}.txt`)
        await writeFile(path, content)
        const expected = expectedLines(content)

        // Paging from offset 1 with the footer's offsets gives back every line exactly once, in order.
        const seen: string[] = []
        let offset = 1
        for (let guard = 0; guard <= expected.length + 1; guard++) {
          const { rows, totalLines, next } = await page(path, offset)
          for (const [i, row] of rows.entries()) expect(row.line).toBe(offset + i)
          seen.push(...rows.map((row) => row.text))
          if (next === undefined) {
            expect(totalLines ?? 0).toBe(expected.length)
            break
          }
          expect(next).toBe(offset + rows.length)
          expect(rows.length).toBeGreaterThan(0)
          offset = next
        }
        expect(seen).toEqual(expected)

        // Any window inside the file shows exactly those lines.
        if (expected.length > 0) {
          const start = 1 + (offsetSeed % expected.length)
          const { rows } = await page(path, start, limit)
          expect(rows.length).toBeGreaterThan(0)
          expect(rows.length).toBeLessThanOrEqual(Math.min(limit ?? 7, 7))
          expect(rows.map((row) => row.text)).toEqual(expected.slice(start - 1, start - 1 + rows.length))
        }
      },
    ),
    { seed: 5, numRuns: 150 },
  )
})
