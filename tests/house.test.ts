import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { describe, expect, test } from 'vitest'
import { type Pkg, packageOf, ROOT, specifiers, workspacePackages } from './architecture/packages.ts'

// The house rules (STYLE: no import runs back up the house, no circle): the hosts (packages/host/*) sit
// on top and nothing below imports them; the package graph of the sources has no circle; core/text's modules import
// each other without a circle. Judged on the import specifiers of every package's src/ (comments stripped).

/** One circle in a directed graph (its nodes in order), or undefined. */
export function findCircle(graph: ReadonlyMap<string, readonly string[]>): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>()
  const path: string[] = []
  const visit = (node: string): string[] | undefined => {
    if (state.get(node) === 'done') return undefined
    if (state.get(node) === 'open') return [...path.slice(path.indexOf(node)), node]
    state.set(node, 'open')
    path.push(node)
    for (const next of graph.get(node) ?? []) {
      const circle = visit(next)
      if (circle) return circle
    }
    path.pop()
    state.set(node, 'done')
    return undefined
  }
  for (const node of graph.keys()) {
    const circle = visit(node)
    if (circle) return circle
  }
  return undefined
}

const PKGS = workspacePackages()
const BY_NAME = new Map(PKGS.map((pkg) => [pkg.name, pkg]))

/** Package → the workspace packages its sources import. */
function packageGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>()
  for (const pkg of PKGS) {
    const targets = new Set<string>()
    for (const file of pkg.files) {
      for (const spec of specifiers(readFileSync(file, 'utf8'))) {
        const target = BY_NAME.get(packageOf(spec))
        if (target && target !== pkg) targets.add(target.dir)
      }
    }
    graph.set(pkg.dir, [...targets].sort())
  }
  return graph
}

/** Module → the modules of the same package it imports (relative specifiers). */
function moduleGraph(pkg: Pkg): Map<string, string[]> {
  const graph = new Map<string, string[]>()
  const root = join(ROOT, 'packages', pkg.dir)
  for (const file of pkg.files) {
    const local = specifiers(readFileSync(file, 'utf8')).filter((spec) => spec.startsWith('.'))
    graph.set(
      relative(root, file),
      local.map((spec) => relative(root, resolve(dirname(file), spec.replace(/\.js$/, '.ts')))),
    )
  }
  return graph
}

describe('the checks can fail', () => {
  test('specifiers sees static, type-only, dynamic imports and re-exports, and no commented-out import', () => {
    expect(
      specifiers(
        [
          "import { a } from '@x/a'",
          "import type { B } from './b.ts'",
          'export { c } from "./c.ts"',
          "const d = await import('d')",
          "import 'side-effect'",
          "// import { e } from 'e'",
          "/* import { f } from 'f' */",
        ].join('\n'),
      ),
    ).toEqual(['@x/a', './b.ts', './c.ts', 'd', 'side-effect'])
  })

  test('findCircle finds a two-node and a longer circle, and none in a graph without one', () => {
    expect(
      findCircle(
        new Map([
          ['index.ts', ['lines.ts']],
          ['lines.ts', ['index.ts']],
        ]),
      ),
    ).toEqual(['index.ts', 'lines.ts', 'index.ts'])
    expect(
      findCircle(
        new Map([
          ['a', ['b']],
          ['b', ['c']],
          ['c', ['a']],
          ['d', []],
        ]),
      ),
    ).toEqual(['a', 'b', 'c', 'a'])
    expect(
      findCircle(
        new Map([
          ['a', ['b', 'c']],
          ['b', ['c']],
          ['c', []],
        ]),
      ),
    ).toBeUndefined()
  })
})

describe('the house', () => {
  test("the package graph is read from every package's sources", () => {
    const graph = packageGraph()
    expect(graph.get('host/mcp')).toContain('core/mcp-wire')
    expect(graph.get('remote/tools-remote')).toContain('core/mcp-wire')
    expect(graph.get('host/cli')).toContain('host/mcp')
  })

  test('no package below the hosts imports a host: tools-remote takes the wire conventions from core/mcp-wire', () => {
    const graph = packageGraph()
    const upward = [...graph].flatMap(([from, targets]) =>
      from.startsWith('host/') ? [] : targets.filter((to) => to.startsWith('host/')).map((to) => `${from} -> ${to}`),
    )
    expect(upward).toEqual([])
    // The two ends of the MCP wire do not import each other.
    expect(graph.get('host/mcp')).not.toContain('remote/tools-remote')
  })

  test('the package graph has no circle', () => {
    expect(findCircle(packageGraph())).toBeUndefined()
  })

  test('core/text and core/mcp-wire have no circle among their modules', () => {
    for (const dir of ['core/text', 'core/mcp-wire']) {
      const pkg = PKGS.find((candidate) => candidate.dir === dir)!
      expect(pkg.files.length, dir).toBeGreaterThan(0)
      expect(findCircle(moduleGraph(pkg)), dir).toBeUndefined()
    }
  })
})

describe('the contract lives in the repository', () => {
  // Built from parts, so that this file does not cite what it forbids.
  const NOTES = ['..', 'shared', ''].join('/')
  const SECTION = new RegExp(['DESIGN', '(?:\\.md)?\\s+§'].join(''))

  /** Tracked text files outside docs/ that point at the notes outside the repository, with the line. */
  function outsideCitations(): string[] {
    const files = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' })
      .split('\0')
      .filter((file) => /\.(md|ts|mts|mjs|cjs|js|json|sh|txt|ya?ml)$/.test(file) && !file.startsWith('docs/'))
    const found: string[] = []
    for (const file of files) {
      let text: string
      try {
        text = readFileSync(join(ROOT, file), 'utf8')
      } catch {
        continue
      }
      text.split('\n').forEach((line, index) => {
        if (line.includes(NOTES) || SECTION.test(line)) found.push(`${file}:${index + 1}: ${line.trim()}`)
      })
    }
    return found
  }

  test('the check sees a citation of the notes outside the repository', () => {
    expect(SECTION.test(['see DESIGN', '§', '17'].join(' '))).toBe(true)
    expect(`the contract is \`${NOTES}DESIGN.md\``.includes(NOTES)).toBe(true)
    expect(SECTION.test('see docs/security.md#boundary')).toBe(false)
  })

  test('no tracked file outside docs/ cites the design notes outside the repository (run docs/tools/cite-contract.mjs)', () => {
    expect(outsideCitations()).toEqual([])
  })
})
