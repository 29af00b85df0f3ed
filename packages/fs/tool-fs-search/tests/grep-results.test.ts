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
