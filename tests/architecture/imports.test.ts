import { readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, test } from 'vitest'
import { type Pkg, ROOT, workspacePackages } from './packages.ts'

/**
 * The seam rules of docs/architecture.md, docs/seams.md#tasks and docs/architecture.md#house-rules, read from the packages themselves: their package.json
 * `dependencies` and the workspace imports of their sources (tests may load any provider they compose). No import
 * cycle and hosts on top: `tests/house.test.ts`.
 */
const all = workspacePackages()
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

  test('every workspace package a source imports is a tsconfig reference: the build compiles it first on a fresh clone', () => {
    const dirOf = new Map(all.map((pkg) => [pkg.name, pkg.dir]))
    const missing = all.flatMap((pkg) => {
      const config = JSON.parse(readFileSync(join(ROOT, 'packages', pkg.dir, 'tsconfig.json'), 'utf8')) as {
        references?: { path: string }[]
      }
      const referenced = new Set(
        (config.references ?? []).map((ref) =>
          relative(join(ROOT, 'packages'), join(ROOT, 'packages', pkg.dir, ref.path)),
        ),
      )
      return pkg.imports
        .filter((name) => name !== pkg.name && dirOf.has(name) && !referenced.has(dirOf.get(name) as string))
        .map((name) => `${pkg.name} imports ${name}`)
    })
    expect(missing).toEqual([])
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
