import fc from 'fast-check'
import { expect, test } from 'vitest'
import { applyChunks, parsePatch, type PatchOp } from '../src/patch.ts'

/*
 * Patches as a model writes them (three lines of context, "@@" hunks, in file order): parsed and applied, they give
 * exactly the text the changes describe, with the file's line endings and final newline, and each change is reported
 * at the lines it now holds.
 */

interface Region {
  readonly start: number
  readonly removed: number
  readonly added: readonly string[]
}

/** A file of distinct lines and regions to change, apart enough that their contexts do not overlap. */
const scenario = fc
  .record({
    size: fc.integer({ min: 1, max: 40 }),
    eol: fc.constantFrom('\n', '\r\n'),
    final: fc.boolean(),
    picks: fc.array(
      fc.record({ at: fc.nat(), removed: fc.integer({ min: 0, max: 3 }), added: fc.integer({ min: 0, max: 3 }) }),
      { minLength: 1, maxLength: 4 },
    ),
  })
  .map(({ size, eol, final, picks }) => {
    const lines = Array.from({ length: size }, (_, i) => `line ${i} ${'x'.repeat(i % 3)}`)
    const regions: Region[] = []
    let next = 0
    for (const [n, pick] of picks.entries()) {
      const start = next + (pick.at % 4)
      if (start > size) break
      const removed = Math.min(pick.removed, size - start)
      const added = Array.from({ length: pick.added }, (_, k) => `new ${n}.${k}`)
      if (removed === 0 && added.length === 0) continue
      regions.push({ start, removed, added })
      next = start + removed + 7 // room for three lines after and three before the next
    }
    return { lines, eol, final, regions }
  })
  .filter(({ regions }) => regions.length > 0)

function patchFor(lines: readonly string[], regions: readonly Region[]): string {
  const out = ['*** Begin Patch', '*** Update File: f.txt']
  for (const { start, removed, added } of regions) {
    out.push('@@')
    for (let i = Math.max(0, start - 3); i < start; i++) out.push(` ${lines[i]}`)
    for (let i = start; i < start + removed; i++) out.push(`-${lines[i]}`)
    for (const line of added) out.push(`+${line}`)
    for (let i = start + removed; i < Math.min(lines.length, start + removed + 3); i++) out.push(` ${lines[i]}`)
  }
  out.push('*** End Patch')
  return out.join('\n')
}

test('a patch with context applies exactly the changes it describes, keeping line endings and the final newline', () => {
  fc.assert(
    fc.property(scenario, ({ lines, eol, final, regions }) => {
      const text = lines.join(eol) + (final ? eol : '')
      const [op] = parsePatch(patchFor(lines, regions))
      if (op?.kind !== 'update') throw new Error('expected an update')
      // A pure insertion with no context at all is placed at the end of the file: skip that one shape.
      fc.pre(regions.every((r) => r.removed > 0 || lines.length > 0))
      const planned = applyChunks(text, op.chunks)
      const expected: string[] = []
      let from = 0
      for (const { start, removed, added } of regions) {
        expected.push(...lines.slice(from, start), ...added)
        from = start + removed
      }
      expected.push(...lines.slice(from))
      // A text without a line break has no ending to follow: new lines get LF.
      const ending = text.includes('\n') ? eol : '\n'
      const wanted = expected.length ? expected.join(ending) + (final ? ending : '') : ''
      expect(planned).toMatchObject({ kind: 'updated', text: wanted })
      if (planned.kind !== 'updated') return
      // Each added line lies within a reported change.
      const now = planned.text.split(/\r?\n/)
      for (const { added } of regions)
        for (const line of added) {
          const at = now.indexOf(line) + 1
          expect(planned.changes.some((c) => c.firstLine <= at && at <= c.lastLine)).toBe(true)
        }
    }),
    { numRuns: 400 },
  )
})

const pathArb = fc.stringMatching(/^[a-z][a-z0-9_/.-]{0,20}$/).filter((p) => !p.endsWith(' '))
const bodyLine = fc.string({ maxLength: 12 }).filter((line) => !line.includes('\n') && !line.includes('\r'))
const op: fc.Arbitrary<PatchOp> = fc.oneof(
  fc.record({ kind: fc.constant('add' as const), path: pathArb, lines: fc.array(bodyLine, { maxLength: 4 }) }),
  fc.record({ kind: fc.constant('delete' as const), path: pathArb }),
  fc.record({
    kind: fc.constant('update' as const),
    path: pathArb,
    to: fc.option(pathArb, { nil: undefined }),
    chunks: fc.array(
      fc.record({
        context: fc.option(
          bodyLine.filter((l) => l.trim() !== '' && l.trim() !== '@@' && l.trim() === l),
          { nil: undefined },
        ),
        lines: fc.array(fc.tuple(fc.constantFrom(' ', '-', '+'), bodyLine), { minLength: 1, maxLength: 5 }),
        eof: fc.boolean(),
      }),
      { minLength: 1, maxLength: 3 },
    ),
  }),
) as fc.Arbitrary<PatchOp>

function render(ops: readonly unknown[]): string {
  const out = ['*** Begin Patch']
  for (const raw of ops as Array<Record<string, unknown>>) {
    if (raw.kind === 'add') out.push(`*** Add File: ${raw.path}`, ...(raw.lines as string[]).map((l) => `+${l}`))
    else if (raw.kind === 'delete') out.push(`*** Delete File: ${raw.path}`)
    else {
      out.push(`*** Update File: ${raw.path}`)
      if (raw.to !== undefined) out.push(`*** Move to: ${raw.to}`)
      for (const chunk of raw.chunks as Array<{ context?: string; lines: [string, string][]; eof: boolean }>) {
        out.push(chunk.context === undefined ? '@@' : `@@ ${chunk.context}`)
        out.push(...chunk.lines.map(([mark, line]) => mark + line))
        if (chunk.eof) out.push('*** End of File')
      }
    }
  }
  out.push('*** End Patch')
  return out.join('\n')
}

test("parsing a rendered patch gives back its operations: paths, added lines, and each hunk's old and new lines", () => {
  fc.assert(
    fc.property(fc.array(op, { maxLength: 5 }), (ops) => {
      const parsed = parsePatch(render(ops))
      const raw = ops as unknown as Array<Record<string, unknown>>
      expect(parsed.map((p) => [p.kind, p.path])).toEqual(raw.map((p) => [p.kind, (p.path as string).trim()]))
      parsed.forEach((p, i) => {
        const given = raw[i]!
        if (p.kind === 'add') expect(p.lines).toEqual(given.lines)
        if (p.kind !== 'update') return
        expect(p.to).toEqual(given.to)
        const chunks = given.chunks as Array<{ context?: string; lines: [string, string][]; eof: boolean }>
        expect(p.chunks.map((c) => ({ context: c.context, old: c.old, new: c.new, eof: c.eof }))).toEqual(
          chunks.map((c) => ({
            context: c.context,
            old: c.lines.filter(([m]) => m !== '+').map(([, l]) => l),
            new: c.lines.filter(([m]) => m !== '-').map(([, l]) => l),
            eof: c.eof,
          })),
        )
      })
    }),
    { numRuns: 300 },
  )
})

test('any text that is not a patch is refused with a line number inside the text, never a crash', () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 200 }), (text) => {
      try {
        parsePatch(text)
      } catch (error) {
        const line = /line (\d+) of the patch/.exec((error as Error).message)?.[1]
        expect(Number(line)).toBeGreaterThanOrEqual(1)
        expect(Number(line)).toBeLessThanOrEqual(text.split('\n').length)
        expect((error as { code?: string }).code).toBe('FS_PATCH_INVALID')
      }
    }),
  )
})
