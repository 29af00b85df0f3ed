import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, test } from 'vitest'

/**
 * The seam rules of DESIGN §1/§19 and STYLE 1, 10, 13, read from the packages themselves: their package.json
 * `dependencies` and the workspace imports of their sources (tests may load any provider they compose). No import
 * cycle and hosts on top: `tests/house.test.ts`.
 */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..')
const SCOPE = '@deepseek-ai/dsh-'

interface Pkg {
  readonly name: string
  readonly dir: string
  /** Workspace packages named in `dependencies`. */
  readonly deps: readonly string[]
  /** And in `devDependencies` (a bundled package, such as the CLI, declares what it bundles there). */
  readonly declared: readonly string[]
  /** Workspace packages imported by `src/` (static and dynamic imports, type imports included). */
  readonly imports: readonly string[]
}

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry)
    return statSync(path).isDirectory() ? sources(path) : /\.(ts|mts|js|mjs)$/.test(entry) ? [path] : []
  })
}

function packages(): Pkg[] {
  const found: Pkg[] = []
  for (const area of readdirSync(join(ROOT, 'packages'))) {
    for (const name of readdirSync(join(ROOT, 'packages', area))) {
      const dir = join(ROOT, 'packages', area, name)
      let manifest: { name: string; dependencies?: Record<string, string>; devDependencies?: Record<string, string> }
      try {
        manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
      } catch {
        continue
      }
      const deps = Object.keys(manifest.dependencies ?? {}).filter((dep) => dep.startsWith(SCOPE))
      const declared = [...deps, ...Object.keys(manifest.devDependencies ?? {}).filter((dep) => dep.startsWith(SCOPE))]
      const imports = new Set<string>()
      for (const file of sources(join(dir, 'src'))) {
        for (const match of readFileSync(file, 'utf8').matchAll(
          /(?:from\s+|import\s*\(\s*|import\s+)'(@deepseek-ai\/dsh-[a-z-]+)'/g,
        ))
          imports.add(match[1]!)
      }
      imports.delete(manifest.name)
      found.push({ name: manifest.name, dir: `packages/${area}/${name}`, deps, declared, imports: [...imports].sort() })
    }
  }
  return found
}

const all = packages()
const byName = new Map(all.map((pkg) => [pkg.name, pkg]))
/** Service providers: one implementation of a seam each. */
const PROVIDER = /-(local|sandbox)$/
const isProvider = (name: string) => PROVIDER.test(name) && byName.has(name)
const uses = (pkg: Pkg) => [...new Set([...pkg.deps, ...pkg.imports])]

describe('the import graph', () => {
  test('the seams the rules speak of exist (the graph is read, not empty)', () => {
    for (const name of [
      'dsh-tasks',
      'dsh-tasks-local',
      'dsh-bash',
      'dsh-bash-runner',
      'dsh-bash-local',
      'dsh-bash-sandbox',
      'dsh-tool-bash',
      'dsh-mcp',
    ]) {
      expect(byName.has(`@deepseek-ai/${name}`), name).toBe(true)
    }
    expect(all.filter((pkg) => isProvider(pkg.name)).length).toBeGreaterThanOrEqual(5)
  })

  test('every workspace package a source imports is a declared dependency', () => {
    const undeclared = all.flatMap((pkg) =>
      pkg.imports.filter((name) => !pkg.declared.includes(name)).map((name) => `${pkg.name} imports ${name}`),
    )
    expect(undeclared).toEqual([])
  })

  test('no provider imports or depends on another provider', () => {
    const crossings = all
      .filter((pkg) => isProvider(pkg.name))
      .flatMap((pkg) =>
        uses(pkg)
          .filter(isProvider)
          .map((name) => `${pkg.name} → ${name}`),
      )
    expect(crossings).toEqual([])
  })

  test('no consumer (a tool package) imports a provider', () => {
    const crossings = all
      .filter((pkg) => /\/dsh-tool(s-remote|-[a-z-]+)$/.test(pkg.name))
      .flatMap((pkg) =>
        uses(pkg)
          .filter(isProvider)
          .map((name) => `${pkg.name} → ${name}`),
      )
    expect(crossings).toEqual([])
  })

  test('the MCP host imports neither bash nor tasks (nor any tool or provider)', () => {
    const mcp = byName.get('@deepseek-ai/dsh-mcp')!
    expect(uses(mcp).filter((name) => /dsh-(bash|tasks|tool-)/.test(name) || isProvider(name))).toEqual([])
  })
})
