import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { rgPath } from '@vscode/ripgrep'
import {
  comparePaths,
  decodeKey,
  displayPath,
  enclosingVcsDir,
  joinDisplay,
  pathKey,
  relativeBytes,
  relativeKey,
  resolveRoot,
} from '../src/paths.ts'
import { identity, PathTable } from '../src/path-table.ts'

/** Sorts `items[lo..hi)` by their keys in path order through a PathTable, as the tools do (equal keys by index). */
function sortInPathOrder<T>(items: T[], key: (item: T) => string, lo = 0, hi = items.length): void {
  const table = new PathTable()
  for (const item of items) table.pushKey(key(item))
  const order = identity(items.length)
  table.sortInPathOrder(order, lo, hi, (a, b) => a - b)
  const sorted = Array.from(order, (index) => items[index] as T)
  for (let i = lo; i < hi; i++) items[i] = sorted[i] as T
}
import { decodeLossy } from '@deepseek-ai/dsh-text'

describe('display paths', () => {
  test('are relative to the cwd without "./", also for "." and for absolute paths inside it', () => {
    expect(resolveRoot('/work/repo', undefined).display).toBe('')
    expect(resolveRoot('/work/repo', '.').display).toBe('')
    expect(resolveRoot('/work/repo', './src/').display).toBe('src')
    expect(resolveRoot('/work/repo', '/work/repo/src/lib').display).toBe('src/lib')
    expect(resolveRoot('/work/repo', '/work/repo').display).toBe('')
  })

  test("are absolute outside the cwd, also for a sibling whose name starts with the cwd's", () => {
    expect(resolveRoot('/work/repo', '..').display).toBe('/work')
    expect(resolveRoot('/work/repo', '../other/x').display).toBe('/work/other/x')
    expect(resolveRoot('/work/repo', '/work/repo-2').display).toBe('/work/repo-2')
    expect(displayPath('/work/repo', '/etc/passwd')).toBe('/etc/passwd')
  })

  test('a name that merely starts with two dots is inside the cwd', () => {
    expect(displayPath('/work/repo', '/work/repo/..hidden')).toBe('..hidden')
  })

  test("join the root's display with the part below it", () => {
    expect(joinDisplay('', 'a/b.ts')).toBe('a/b.ts')
    expect(joinDisplay('src', 'a/b.ts')).toBe('src/a/b.ts')
    expect(joinDisplay('/', 'etc/passwd')).toBe('/etc/passwd')
    expect(joinDisplay('src/one.ts', '')).toBe('src/one.ts')
  })

  test('the part below the root is cut from what ripgrep printed, bytewise', () => {
    const root = resolveRoot('/w', '/w/src')
    expect(relativeBytes(root, Buffer.from('/w/src/a/b'))?.toString()).toBe('a/b')
    expect(relativeBytes(root, Buffer.from('/w/src'))?.toString()).toBe('')
    expect(relativeBytes(root, Buffer.from('/w/srcx/a'))).toBeUndefined()
    expect(relativeBytes(root, Buffer.from('/elsewhere'))).toBeUndefined()
    const nonUtf8 = Buffer.concat([Buffer.from('/w/src/'), Buffer.from([0x6e, 0xff])])
    expect(relativeBytes(root, nonUtf8)).toEqual(Buffer.from([0x6e, 0xff]))
    expect(relativeBytes(resolveRoot('/w', '/'), Buffer.from('/etc/x'))?.toString()).toBe('etc/x')
  })

  test('the latin1 form of a printed name keeps every byte, and is cut below the root like the bytes', () => {
    const printed = pathKey(Buffer.concat([Buffer.from('/w/src/caf'), Buffer.from([0xe9]), Buffer.from('/é.txt')]))
    const rel = relativeKey(pathKey(Buffer.from('/w/src')), printed) as string
    expect(decodeKey(rel)).toBe('caf\ufffd/é.txt')
    expect(Buffer.from(rel, 'latin1')).toEqual(
      Buffer.concat([Buffer.from('caf'), Buffer.from([0xe9]), Buffer.from('/é.txt')]),
    )
    expect(relativeKey('/w/src', '/w/srcx/a')).toBeUndefined()
    expect(relativeKey('/', '/etc/x')).toBe('etc/x')
    expect(relativeKey('/w/src', '/w/src')).toBe('')
  })

  test('a name that is not UTF-8 is shown with U+FFFD', () => {
    expect(decodeLossy(Buffer.from([0x61, 0xff, 0x62]))).toBe('a\ufffdb')
  })

  test('a root inside a version-control directory is recognised, a look-alike name is not', () => {
    expect(enclosingVcsDir('/r/.git/objects')).toBe('.git')
    expect(enclosingVcsDir('/r/sub/.jj')).toBe('.jj')
    expect(enclosingVcsDir('/r/.github/workflows')).toBeUndefined()
    expect(enclosingVcsDir('/r/src')).toBeUndefined()
  })
})

describe('path order', () => {
  test('compares component by component, so "a/z" comes before "a.b" and "a-b"', () => {
    const paths = ['a.b', 'a/z', 'a-b', 'a', 'B', 'a/b/c', 'ab', 'a/b']
    const sorted = [...paths].sort((x, y) => comparePaths(pathKey(Buffer.from(x)), pathKey(Buffer.from(y))))
    expect(sorted).toEqual(['B', 'a', 'a/b', 'a/b/c', 'a/z', 'a-b', 'a.b', 'ab'])
  })

  test('compares bytes, not UTF-16 code units (U+FFFD sorts before an astral character)', () => {
    const keys = ['\u{1F600}', '\uFFFD'].map((p) => pathKey(Buffer.from(p)))
    // UTF-8: EF BF BD < F0 9F 98 80, although as UTF-16 \uD83D < \uFFFD.
    expect(comparePaths(keys[1] as string, keys[0] as string)).toBeLessThan(0)
  })

  test('the radix sort gives exactly the comparison order, on any bytes, duplicates and ranges included (property, seeded)', () => {
    const name = fc
      .array(fc.constantFrom('/', 'a', 'b', '.', '-', '\x00', '\x01', '\xff', 'é'), { maxLength: 8 })
      .map((cs) => cs.join(''))
    fc.assert(
      fc.property(fc.array(name, { maxLength: 120 }), fc.nat(), fc.nat(), (names, x, y) => {
        const items = names.map((key, index) => ({ key, index }))
        const lo = names.length ? x % names.length : 0
        const hi = lo + (names.length ? y % (names.length - lo + 1) : 0)
        const expected = [
          ...items.slice(0, lo),
          ...items.slice(lo, hi).sort((a, b) => comparePaths(a.key, b.key) || a.index - b.index),
          ...items.slice(hi),
        ]
        sortInPathOrder(items, (item) => item.key, lo, hi)
        expect(items.map((item) => item.key)).toEqual(expected.map((item) => item.key))
        expect(new Set(items.map((item) => item.index)).size).toBe(items.length)
      }),
      { seed: 3, numRuns: 300 },
    )
  })

  test('the radix sort gives the comparison order on groups that share long prefixes, small groups included (property, seeded)', () => {
    const part = fc
      .array(fc.constantFrom('/', 'a', 'b', '.', '-', '\x00', '\xff'), { maxLength: 4 })
      .map((cs) => cs.join(''))
    fc.assert(
      fc.property(
        fc.array(part, { minLength: 1, maxLength: 3 }),
        fc.array(fc.tuple(fc.nat(2), part), { maxLength: 40 }),
        (prefixes, names) => {
          const keys = names.map(([p, rest]) => `node_modules/${prefixes[p % prefixes.length]}${rest}`)
          const items = keys.map((key, index) => ({ key, index }))
          const expected = [...items].sort((a, b) => comparePaths(a.key, b.key) || a.index - b.index)
          sortInPathOrder(items, (item) => item.key)
          expect(items.map((item) => item.key)).toEqual(expected.map((item) => item.key))
        },
      ),
      { seed: 11, numRuns: 500 },
    )
  })

  test('is the order of rg --sort=path on a real tree (property, seeded)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dsh-order-'))
    try {
      const segment = fc.stringMatching(/^[a-zA-Z0-9._\- ]{1,4}$/).filter((s) => s !== '.' && s !== '..')
      fc.assert(
        fc.property(
          fc.uniqueArray(fc.array(segment, { minLength: 1, maxLength: 3 }), {
            minLength: 1,
            maxLength: 12,
            selector: (p) => p.join('/'),
          }),
          (parts) => {
            const tree = mkdtempSync(join(dir, 't'))
            const written: string[] = []
            for (const p of parts) {
              try {
                mkdirSync(join(tree, ...p.slice(0, -1)), { recursive: true })
                writeFileSync(join(tree, ...p), 'x')
                written.push(p.join('/'))
              } catch {
                /* a name that is already a file or a directory: skip it */
              }
            }
            const rg = execFileSync(
              rgPath,
              ['--no-config', '--files', '--null', '--sort=path', '--hidden', '--no-ignore'],
              { cwd: tree },
            )
            const expected = rg.toString('utf8').split('\0').filter(Boolean)
            const ours = [...expected].reverse()
            sortInPathOrder(ours, (p) => pathKey(Buffer.from(p)))
            rmSync(tree, { recursive: true, force: true })
            expect(ours).toEqual(expected)
          },
        ),
        { seed: 20261130, numRuns: 40 },
      )
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
