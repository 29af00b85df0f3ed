import fc from 'fast-check'
import { expect, test } from 'vitest'
import { GrepResults } from '../src/grep-results.ts'
import { savedRow, savedRowPrefix } from '../src/grep-text.ts'
import { comparePaths } from '../src/paths.ts'
import type { GrepLineValue } from '../src/values.ts'

// The saved rows of a grep of any size: gathered in chunks as files arrive in any order (a file's matches possibly
// split across chunks), merged back into path order, lines ascending; the page keeps the first lines in that order.

const name = fc
  .array(fc.constantFrom('a', 'b', '/', '.', '-', 'Z', '\xe9'), { minLength: 1, maxLength: 6 })
  .map((cs) => cs.join(''))

test('any arrival order and any chunk size give the saved rows in path order and the first page of the same order (property, seeded)', () => {
  fc.assert(
    fc.property(
      fc.uniqueArray(name, { minLength: 1, maxLength: 30 }),
      fc.array(fc.integer({ min: 1, max: 12 }), { minLength: 30, maxLength: 30 }),
      fc.integer({ min: 1, max: 200 }),
      fc.integer({ min: 1, max: 15 }),
      fc.nat(),
      (keys, counts, chunkBytes, maxMatches, seed) => {
        // Shuffle the files deterministically from the seed: ripgrep's threads finish them in any order.
        const order = keys
          .map((key, i) => ({ key, rank: (i * 2654435761 + seed) % 1000 }))
          .sort((x, y) => x.rank - y.rank)
          .map((entry) => entry.key)
        const results = new GrepResults(maxMatches, chunkBytes)
        const expected: { key: string; rows: string[]; lines: GrepLineValue[] }[] = []
        for (const key of order) {
          const lines = Array.from(
            { length: counts[keys.indexOf(key)] as number },
            (_, l): GrepLineValue => ({ line: l * 3 + 1, preview: `${key} row ${l}`, truncated: l % 4 === 3 }),
          )
          results.file(key, key)
          for (const line of lines) {
            results.line(line)
          }
          expected.push({ key, rows: lines.map((line) => savedRow(savedRowPrefix(key), line)), lines })
        }
        expected.sort((x, y) => comparePaths(x.key, y.key))
        // Each part is copied before the next is asked for: the producer reuses its buffer.
        const saved = Buffer.concat(Array.from(results.saved('[header]'), (part) => Buffer.from(part))).toString('utf8')
        expect(saved).toBe(`[header]\n${expected.flatMap((file) => file.rows).join('')}`)
        const page = expected
          .flatMap((file) => file.lines.map((line) => ({ path: file.key, line })))
          .slice(0, maxMatches)
        expect(results.files().flatMap((file) => file.lines.map((line) => ({ path: file.path, line })))).toEqual(page)
        expect(results.total).toBe(counts.slice(0, keys.length).reduce((a, b) => a + b, 0))
        results[Symbol.dispose]()
      },
    ),
    { seed: 29, numRuns: 300 },
  )
})

/**
 * What the page holds with context, by its definition: the first `max` matches in path order, and each line around
 * them (as ripgrep sends it) that lies within `before` above or `after` below a match kept; a match past the page
 * counts as such a line.
 */
function expectedPage(
  files: { key: string; matches: number[] }[],
  max: number,
  before: number,
  after: number,
  offset = 0,
): { path: string; lines: [number, boolean][] }[] {
  let seen = 0
  const out: { path: string; lines: [number, boolean][] }[] = []
  for (const file of [...files].sort((a, b) => comparePaths(a.key, b.key))) {
    const kept = file.matches.filter((_, i) => seen + i >= offset && seen + i < offset + max)
    seen += file.matches.length
    if (kept.length === 0) continue
    const lines: [number, boolean][] = []
    for (const n of sentLines(file.matches, before, after)) {
      const match = kept.includes(n)
      if (match || kept.some((m) => (n < m && m - n <= before) || (n > m && n - m <= after))) lines.push([n, match])
    }
    out.push({ path: file.key, lines })
  }
  return out
}

/** The line numbers ripgrep sends for a file: its matches and every line within the context of one. */
function sentLines(matches: number[], before: number, after: number): number[] {
  const lines = new Set<number>()
  for (const m of matches) for (let n = Math.max(1, m - before); n <= m + after; n++) lines.add(n)
  return [...lines].sort((a, b) => a - b)
}

test('with context, the page holds the first matches in path order and the lines around them, whatever the arrival order (property, seeded)', () => {
  fc.assert(
    fc.property(
      fc.uniqueArray(name, { minLength: 1, maxLength: 8 }),
      fc.array(fc.uniqueArray(fc.integer({ min: 1, max: 30 }), { minLength: 1, maxLength: 6 }), {
        minLength: 8,
        maxLength: 8,
      }),
      fc.integer({ min: 1, max: 12 }),
      fc.integer({ min: 0, max: 3 }),
      fc.integer({ min: 0, max: 3 }),
      fc.integer({ min: 0, max: 1000 }),
      (keys, matchSets, max, before, after, seed) => {
        const files = keys.map((key, i) => ({ key, matches: [...(matchSets[i] as number[])].sort((a, b) => a - b) }))
        const order = [...files].sort((a, b) => ((a.key.length * 31 + seed) % 7) - ((b.key.length * 31 + seed) % 7))
        const results = new GrepResults(max, undefined, { around: { before, after } })
        for (const file of order) {
          results.file(file.key, file.key)
          for (const n of sentLines(file.matches, before, after)) {
            const row = { line: n, preview: `${n}`, truncated: false }
            if (file.matches.includes(n)) results.line(row)
            else results.context({ ...row, context: true })
          }
        }
        const page = results.files().map((file) => ({
          path: file.path,
          lines: file.lines.map((line): [number, boolean] => [line.line, line.context !== true]),
        }))
        expect(page).toEqual(expectedPage(files, max, before, after))
      },
    ),
    { seed: 34, numRuns: 300 },
  )
})

test('with context, a page from an offset (files in path order) holds those matches and the lines around them (property, seeded)', () => {
  fc.assert(
    fc.property(
      fc.uniqueArray(name, { minLength: 1, maxLength: 8 }),
      fc.array(fc.uniqueArray(fc.integer({ min: 1, max: 30 }), { minLength: 1, maxLength: 6 }), {
        minLength: 8,
        maxLength: 8,
      }),
      fc.integer({ min: 1, max: 12 }),
      fc.integer({ min: 1, max: 20 }),
      fc.integer({ min: 0, max: 3 }),
      fc.integer({ min: 0, max: 3 }),
      (keys, matchSets, max, offset, before, after) => {
        const files = keys.map((key, i) => ({ key, matches: [...(matchSets[i] as number[])].sort((a, b) => a - b) }))
        const results = new GrepResults(max, undefined, { around: { before, after }, window: { offset } })
        for (const file of [...files].sort((a, b) => comparePaths(a.key, b.key))) {
          results.file(file.key, file.key)
          for (const n of sentLines(file.matches, before, after)) {
            const row = { line: n, preview: `${n}`, truncated: false }
            if (file.matches.includes(n)) results.line(row)
            else results.context({ ...row, context: true })
          }
        }
        const page = results.files().map((file) => ({
          path: file.path,
          lines: file.lines.map((line): [number, boolean] => [line.line, line.context !== true]),
        }))
        expect(page).toEqual(expectedPage(files, max, before, after, offset))
      },
    ),
    { seed: 34, numRuns: 300 },
  )
})
