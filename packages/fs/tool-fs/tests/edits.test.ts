import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { createTestContext, sessionFor, type TestContext } from '@deepseek-ai/dsh-testing'
import { SystemPromptService } from '@deepseek-ai/dsh-system-prompt'
import type { ToolResult } from '@deepseek-ai/dsh-tools'
import ToolFs from '@deepseek-ai/dsh-tool-fs'
import { planEdit, planEdits } from '../src/change.ts'

let t: TestContext
let dir: string
const session = () => sessionFor('s', dir)

beforeEach(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), 'tool-fs-edits-')))
  t = await createTestContext()
  await t.ctx.plugin(SystemPromptService)
  await t.active(t.ctx.plugin(ToolFs, {}))
})
afterEach(async () => {
  await t.dispose()
  await rm(dir, { recursive: true, force: true })
})

const call = (name: string, args: Record<string, unknown>) => t.ctx.tools.execute(name, args, { session: session() })
const text = (result: ToolResult) => result.content[0].text
const code = (result: ToolResult) => result.error?.code
const lines = (n: number) => `${Array.from({ length: n }, (_, i) => `l${i + 1}`).join('\n')}\n`

test('edits are applied in order, in one write, and the result shows each change numbered as the file is now', async () => {
  await writeFile(join(dir, 'e.ts'), lines(20))
  await call('read', { path: 'e.ts' })
  const result = await call('edit', {
    path: 'e.ts',
    edits: [
      { old_string: 'l3\n', new_string: 'three\nthree and a half\n' },
      { old_string: 'l15', new_string: 'fifteen' },
      // sees the text the first edit made
      { old_string: 'three and a half', new_string: '3.5' },
    ],
  })
  expect(text(result)).toBe(
    `Updated ${dir}/e.ts: 3 edits, replaced 3 occurrences\n\n` +
      '1: l1\n2: l2\n3: three\n4: 3.5\n5: l4\n6: l5\n…\n14: l13\n15: l14\n16: fifteen\n17: l16\n18: l17',
  )
  expect((await readFile(join(dir, 'e.ts'), 'utf8')).split('\n').slice(0, 5)).toEqual([
    'l1',
    'l2',
    'three',
    '3.5',
    'l4',
  ])
})

test('a failing edit of the list leaves the file byte for byte as it was and says which one failed and why', async () => {
  const before = 'alpha\r\nbeta\r\ngamma\r\nbeta\r\n'
  await writeFile(join(dir, 'f.txt'), before)
  await call('read', { path: 'f.txt' })
  const missing = await call('edit', {
    path: 'f.txt',
    edits: [
      { old_string: 'alpha', new_string: 'ALPHA' },
      { old_string: 'gamma ray', new_string: 'x' },
    ],
  })
  expect([code(missing), text(missing)]).toEqual([
    'FS_NO_MATCH',
    `Error: edits[1] (edit 2 of 2) failed, so none of the edits was applied: old_string was not found in ${dir}/f.txt (nor with other line endings or without "N: " prefixes). The closest region, lines 3-3:\n3: gamma\nCopy old_string from the file exactly (what follows each "N: "), or read the file again`,
  ])
  const many = await call('edit', {
    path: 'f.txt',
    edits: [
      { old_string: 'alpha', new_string: 'ALPHA' },
      { old_string: 'gamma', new_string: 'GAMMA' },
      { old_string: 'beta', new_string: 'BETA' },
    ],
  })
  expect([code(many), text(many)]).toEqual([
    'FS_MANY_MATCHES',
    `Error: edits[2] (edit 3 of 3) failed, so none of the edits was applied: old_string occurs 2 times in ${dir}/f.txt (at lines 2, 4); include more surrounding lines to make it unique, or pass replace_all: true to replace every one`,
  ])
  expect(await readFile(join(dir, 'f.txt'), 'utf8')).toBe(before)
  // replace_all per edit; the CRLF file stays CRLF.
  const all = await call('edit', {
    path: 'f.txt',
    edits: [
      { old_string: 'beta', new_string: 'b\ne', replace_all: true },
      { old_string: 'alpha', new_string: 'ALPHA' },
    ],
  })
  expect(text(all)).toMatch(/: 2 edits, replaced 3 occurrences\n/)
  expect(await readFile(join(dir, 'f.txt'), 'utf8')).toBe('ALPHA\r\nb\r\ne\r\ngamma\r\nb\r\ne\r\n')
})

test('edits: argument mistakes are INVALID_ARGS naming the edit; old_string and edits together are refused', async () => {
  await writeFile(join(dir, 'a.txt'), 'x\n')
  await call('read', { path: 'a.txt' })
  const same = await call('edit', { path: 'a.txt', edits: [{ old_string: 'x', new_string: 'x' }] })
  expect([code(same), text(same)]).toEqual([
    'INVALID_ARGS',
    'Error: edits[0] (edit 1 of 1) failed, so none of the edits was applied: old_string and new_string are the same, so the edit would change nothing; pass the text you want in new_string',
  ])
  const both = await call('edit', {
    path: 'a.txt',
    old_string: 'x',
    new_string: 'y',
    edits: [{ old_string: 'x', new_string: 'y' }],
  })
  expect(text(both)).toBe(
    'Error: pass old_string and new_string (one replacement) or edits: [{ old_string, new_string }, …] (several), not both',
  )
  expect(text(await call('edit', { path: 'a.txt' }))).toBe(
    'Error: invalid arguments: missing required property "old_string"; pass old_string and new_string, or edits: [{ old_string, new_string }, …]',
  )
  expect(text(await call('edit', { path: 'a.txt', old_string: 'x' }))).toBe(
    'Error: invalid arguments: missing required property "new_string"',
  )
  expect(code(await call('edit', { path: 'a.txt', edits: [] }))).toBe('INVALID_ARGS')
  expect(await readFile(join(dir, 'a.txt'), 'utf8')).toBe('x\n')
})

test('edits need the file read first, like one edit', async () => {
  await writeFile(join(dir, 'n.txt'), 'x\n')
  expect(code(await call('edit', { path: 'n.txt', edits: [{ old_string: 'x', new_string: 'y' }] }))).toBe('FS_NOT_READ')
})

/** Distinct words on lines: each edit replaces one word by a new marker, maybe adding or removing lines. */
test('any list of edits: the text is what applying them one by one gives, and each new text lies in a change shown', () => {
  const word = fc.integer({ min: 0, max: 29 }).map((n) => `w${n}`)
  fc.assert(
    fc.property(
      fc.uniqueArray(word, { minLength: 1, maxLength: 30 }),
      fc.array(fc.tuple(fc.nat(), fc.constantFrom('', '\n', '\n\n', 'x\ny\n'), fc.boolean()), { maxLength: 6 }),
      (words, picks) => {
        let text = words.join('\n')
        const requests = picks.map(([pick, extra, eol], i) => {
          const old = words[pick % words.length]!
          return { oldString: eol ? `${old}\n` : old, newString: `N${i}${extra}`, replaceAll: false }
        })
        const planned = planEdits(text, requests)
        let index = 0
        for (const request of requests) {
          const step = planEdit(text, request)
          if (step.kind !== 'edited') break
          text = step.text
          index++
        }
        if (index < requests.length) {
          expect(planned).toMatchObject({ kind: 'failed', index })
          return
        }
        if (planned.kind !== 'edited') throw new Error('expected edited')
        expect(planned.text).toBe(text)
        const rows = planned.text.split('\n')
        requests.forEach((_, i) => {
          const line = rows.indexOf(`N${i}`) + 1
          if (line === 0) return // replaced again by a later edit
          expect(planned.changes.some((c) => c.firstLine <= line && line <= c.lastLine)).toBe(true)
        })
      },
    ),
    { numRuns: 300 },
  )
})
