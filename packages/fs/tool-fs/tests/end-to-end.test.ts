import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { createTestContext, type TestContext, sessionFor } from '@deepseek-ai/dsh-testing'
import { SystemPromptService } from '@deepseek-ai/dsh-system-prompt'
import LocalSpillStore from '@deepseek-ai/dsh-spill-local'
import SpillPolicy from '@deepseek-ai/dsh-spill-policy'
import ToolFs from '@deepseek-ai/dsh-tool-fs'

let t: TestContext
let dir: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tool-fs-e2e-'))
  t = await createTestContext()
  await t.ctx.plugin(SystemPromptService)
  await t.active(t.ctx.plugin(LocalSpillStore, { root: join(dir, 'spill') }))
  await t.active(t.ctx.plugin(SpillPolicy, { maxInlineBytes: 2000 }))
  await t.active(t.ctx.plugin(ToolFs, {}))
})
afterEach(async () => {
  await t.dispose()
  await rm(dir, { recursive: true, force: true })
})

const NOTICE =
  /\n\[Output too long: lines (\d+)-(\d+) of (\d+) are cut here\. The complete output \(\d+ bytes\) is saved at (\S+)\. Page through it with read \(offset and limit\) or search it with grep, passing that path\.\]\n/

test('a spilled result read back at its locator with offset/limit gives exactly the lines cut from the inline page', async () => {
  // CRLF lines, multi-byte characters and an empty line: what a real command prints.
  const lines = Array.from({ length: 3000 }, (_, i) =>
    i === 1500 ? '' : `${i + 1}\tbuild step ${'✓'.repeat(i % 5)} done`,
  )
  t.ctx.tools.register({
    name: 'noisy',
    description: 'prints a lot',
    parameters: { type: 'object' },
    execute: () => lines.map((l) => `${l}\r\n`).join(''),
  })
  const session = sessionFor('session-e2e', dir)

  const inline = (await t.ctx.tools.execute('noisy', {}, { session })).content[0].text
  expect(Buffer.byteLength(inline)).toBeLessThanOrEqual(2000)
  const match = NOTICE.exec(inline)
  expect(match).not.toBeNull()
  const [, first, last, total, locator] = match!
  const firstCut = Number(first)
  const lastCut = Number(last)
  expect(Number(total)).toBe(3000)
  // The inline page shows lines 1…firstCut-1 and lastCut+1…3000, whole.
  expect(inline.slice(0, match!.index + 1)).toBe(
    lines
      .slice(0, firstCut - 1)
      .map((l) => `${l}\r\n`)
      .join(''),
  )
  expect(inline.slice(match!.index + match![0].length)).toBe(
    lines
      .slice(lastCut)
      .map((l) => `${l}\r\n`)
      .join(''),
  )

  // Page through the cut lines with read, following its footers.
  const recovered: string[] = []
  let offset = firstCut
  while (offset <= lastCut) {
    const result = await t.ctx.tools.execute(
      'read',
      { path: locator, offset, limit: Math.min(700, lastCut - offset + 1) },
      { session },
    )
    expect(result.isError).toBe(false)
    const [rows, footer] = result.content[0].text.split('\n\n')
    const parsed = rows!.split('\n').map((row) => /^(\d+): (.*)$/.exec(row)!)
    for (const [i, m] of parsed.entries()) expect(Number(m[1])).toBe(offset + i)
    recovered.push(...parsed.map((m) => m[2]!))
    expect(footer).toMatch(/^\[more lines follow: continue with offset=\d+(; the file has \d+ lines)?\]$/)
    offset += parsed.length
  }
  expect(recovered).toEqual(lines.slice(firstCut - 1, lastCut))
  // read is not spilled itself, although its pages are larger than maxInlineBytes.
  const page = await t.ctx.tools.execute('read', { path: locator, offset: firstCut, limit: 500 }, { session })
  expect(Buffer.byteLength(page.content[0].text)).toBeGreaterThan(2000)
  expect(page.content[0].text).not.toContain('[Output too long')
})
