import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { describe, expect, test } from 'vitest'

// A test run builds once: `npm test` builds, then vitest's global setup (tests/build-once.ts) builds only a tree
// changed since its last build. No test file may start a build of its own (tsc, the bundle, npm run build): 14 of
// them once did, each ~4 s, serialised behind a lock. Judged on the string literals of the code (no comments).

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const GLOBAL_SETUP = 'tests/build-once.ts'
/** This file: its literals are the samples above. */
const SELF = 'tests/build-once.test.ts'

/** Every TypeScript file of the tests: packages' tests folders and tests/. */
function testSources(): string[] {
  const found: string[] = []
  const visit = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name)
      if (name === 'node_modules') continue
      if (statSync(path).isDirectory()) visit(path)
      else if (/\.(ts|mts)$/.test(name)) found.push(relative(ROOT, path))
    }
  }
  for (const group of readdirSync(join(ROOT, 'packages'))) {
    for (const name of readdirSync(join(ROOT, 'packages', group))) {
      const tests = join(ROOT, 'packages', group, name, 'tests')
      try {
        if (statSync(tests).isDirectory()) visit(tests)
      } catch {}
    }
  }
  visit(join(ROOT, 'tests'))
  return found
}

/** The string literals (and template parts) of a TypeScript text, in order. */
function literals(text: string): string[] {
  const found: string[] = []
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteralLike(node) || ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node))
      found.push(node.text)
    ts.forEachChild(node, visit)
  }
  visit(ts.createSourceFile('x.ts', text, ts.ScriptTarget.Latest, true))
  return found
}

/** What in a text starts a build: the bundle script, the TypeScript compiler, `npm run build`. */
export function buildSpawns(text: string): string[] {
  const strings = literals(text)
  const hits = strings.filter((s) =>
    /(^|[\\/])bundle\.mjs$|typescript[\\/]bin[\\/]tsc|^tsc$|^npx tsc|\btsc -b\b|npm run build/.test(s),
  )
  strings.forEach((s, i) => {
    if (s === 'run' && strings[i + 1] === 'build') hits.push('run build')
  })
  return hits
}

describe('a test run builds once', () => {
  test("the check sees each way of building (the global setup's own, and the ways test files used to)", () => {
    expect(buildSpawns(readFileSync(join(ROOT, GLOBAL_SETUP), 'utf8'))).toContain('run build')
    expect(
      buildSpawns(
        "execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-b', 'packages/host/cli'])",
      ),
    ).toHaveLength(1)
    expect(
      buildSpawns("execFileSync(process.execPath, [join(ROOT, 'packages/host/cli/scripts/bundle.mjs')])"),
    ).toHaveLength(1)
    expect(buildSpawns('execSync(`npm run build`)')).toHaveLength(1)
    expect(buildSpawns('// npm run build, then scripts/bundle.mjs\nconst x = 1')).toEqual([])
  })

  test('no test file starts a build: only the global setup does', () => {
    const files = testSources()
    expect(files).toContain(GLOBAL_SETUP)
    expect(files.length).toBeGreaterThan(50)
    const building = files.filter(
      (file) =>
        file !== GLOBAL_SETUP && file !== SELF && buildSpawns(readFileSync(join(ROOT, file), 'utf8')).length > 0,
    )
    expect(building).toEqual([])
  })
})
