import { createSession } from '@deepseek-ai/dsh-tools'
import { mkdtemp, readFile, realpath, rm, stat, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { createTestContext, type TestContext } from '@deepseek-ai/dsh-testing'
import { SystemPromptService } from '@deepseek-ai/dsh-system-prompt'
import ToolFs from '@deepseek-ai/dsh-tool-fs'
import { Observations } from '../src/seen-files.ts'

/*
 * Any interleaving of read / write / edit by two sessions and changes by someone else (new bytes of the same size
 * written in place at once, the same bytes rewritten, a touch): a write or edit of an existing file is refused as
 * FS_STALE exactly when the bytes changed since that session last saw them, FS_NOT_READ when it never saw them.
 */

type Op =
  | { kind: 'read'; session: 0 | 1 }
  | { kind: 'write'; session: 0 | 1; body: number }
  | { kind: 'edit'; session: 0 | 1; body: number }
  | { kind: 'external'; how: 'new' | 'same' | 'touch'; body: number }

const session = fc.constantFrom<0 | 1>(0, 1)
const body = fc.integer({ min: 0, max: 9 })
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('read' as const), session }),
  fc.record({ kind: fc.constant('write' as const), session, body }),
  fc.record({ kind: fc.constant('edit' as const), session, body }),
  fc.record({
    kind: fc.constant('external' as const),
    how: fc.constantFrom<'new' | 'same' | 'touch'>('new', 'same', 'touch'),
    body,
  }),
)

let t: TestContext
let dir: string
beforeAll(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), 'tool-fs-guard-')))
  t = await createTestContext()
  await t.ctx.plugin(SystemPromptService)
  await t.active(t.ctx.plugin(ToolFs, {}))
})
afterAll(async () => {
  await t.dispose()
  await rm(dir, { recursive: true, force: true })
})

let run = 0
/** Every content has the same size (a same-size change in the same timestamp tick is the hard case) and a unique head. */
const content = (head: number, body: number) => `head ${String(head).padStart(6, '0')}\nbody ${body}\n`

test('any interleaving: stale exactly when the bytes changed since the session last saw them', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 14 }), async (ops) => {
      run++
      const path = join(dir, `f${run}.txt`)
      const sessions = [createSession({ id: `a${run}`, cwd: dir }), createSession({ id: `b${run}`, cwd: dir })]
      let heads = 0
      let current: string | undefined
      const seen: Array<string | undefined> = [undefined, undefined]
      for (const step of ops) {
        if (step.kind === 'external') {
          if (current === undefined) continue
          if (step.how === 'new') {
            const next = content(++heads, step.body)
            await writeFile(path, next) // in place: same inode, same size
            current = next
          } else if (step.how === 'same') await writeFile(path, current)
          else {
            const when = new Date(Date.now() - 5000 * (heads + 1))
            await utimes(path, when, when)
          }
          continue
        }
        const as = { session: sessions[step.session]! }
        if (step.kind === 'read') {
          const result = await t.ctx.tools.execute('read', { path, limit: 1 }, as)
          expect(result.isError).toBe(current === undefined)
          if (current !== undefined) seen[step.session] = current
          continue
        }
        const expected =
          current === undefined
            ? step.kind === 'edit'
              ? 'FS_NOT_FOUND'
              : undefined
            : seen[step.session] === undefined
              ? 'FS_NOT_READ'
              : seen[step.session] !== current
                ? 'FS_STALE'
                : undefined
        const next = content(++heads, step.body)
        const result =
          step.kind === 'write'
            ? await t.ctx.tools.execute('write', { path, content: next }, as)
            : await t.ctx.tools.execute(
                'edit',
                {
                  path,
                  old_string: current?.split('\n')[0] ?? 'head',
                  new_string: next.split('\n')[0]!,
                  replace_all: false,
                },
                as,
              )
        expect(result.error?.code, `${step.kind} by session ${step.session}: ${result.content[0].text}`).toBe(expected)
        // A refusal that showed every line as it is now counts as a sight of the new content.
        const text = result.content[0].text
        if (
          expected === 'FS_STALE' &&
          / (is|are) now:\n| removed at line \d+$/.test(text) &&
          !text.includes('(and more below)')
        )
          seen[step.session] = current
        if (expected === undefined) {
          current = step.kind === 'write' ? next : current!.replace(current!.split('\n')[0]!, next.split('\n')[0]!)
          seen[step.session] = current
        }
        if (current !== undefined) expect((await readFile(path)).toString()).toBe(current)
      }
      await Promise.all(sessions.map((s) => s.dispose()))
    }),
    { numRuns: 40 },
  )
})

test('the digest path (files larger than the copies kept): stale exactly when the bytes changed', async () => {
  const guard = new Observations({ maxFiles: 8, keepBytes: 0, keepTotal: 0, completeBytes: 1 << 20, settleMs: 30 })
  const path = join(dir, 'digest.txt')
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.record({ change: fc.constantFrom('none', 'new', 'same', 'touch'), wait: fc.boolean() }), {
        minLength: 1,
        maxLength: 6,
      }),
      async (steps) => {
        let bytes = Buffer.from(content(0, 0))
        await writeFile(path, bytes)
        guard.recordBytes(path, await stat(path), bytes)
        let changed = false
        for (const [i, step] of steps.entries()) {
          if (step.wait) await guard.settled()
          if (step.change === 'new') {
            bytes = Buffer.from(content(i + 1, 0))
            await writeFile(path, bytes)
            changed = true
          }
          if (step.change === 'same') await writeFile(path, bytes)
          if (step.change === 'touch')
            await utimes(path, new Date(Date.now() - 9000 - i), new Date(Date.now() - 9000 - i))
          const verdict = await guard.check(path, await stat(path), await readFile(path))
          expect(verdict.kind).toBe(changed ? 'stale' : 'fresh')
          if (changed) {
            guard.recordBytes(path, await stat(path), await readFile(path))
            changed = false
          }
        }
      },
    ),
    { numRuns: 30 },
  )
  await guard.settled()
})
