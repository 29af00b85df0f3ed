import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

/*
 * The one reader of the workspace's packages for the house and seam tests: each package's manifest and the module
 * specifiers its sources import.
 */

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const SCOPE = '@deepseek-ai/dsh-'

export interface Pkg {
  readonly name: string
  /** `group/name`, e.g. `host/mcp`. */
  readonly dir: string
  /** The sources under `src/` (no declaration files). */
  readonly files: readonly string[]
  /** Workspace packages named in `dependencies`. */
  readonly deps: readonly string[]
  /** And in `devDependencies` (a bundled package, such as the CLI, declares what it bundles there). */
  readonly declared: readonly string[]
  /** Workspace packages its sources import (static, dynamic and type-only imports, re-exports). */
  readonly imports: readonly string[]
}

function sources(dir: string): string[] {
  const found: string[] = []
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) found.push(...sources(path))
    else if (/\.(ts|mts|cts|js|cjs|mjs)$/.test(name) && !name.endsWith('.d.ts')) found.push(path)
  }
  return found
}

/** The module specifiers a source imports or re-exports, statically or dynamically (type-only imports too). */
export function specifiers(text: string): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '')
  const found: string[] = []
  for (const match of code.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"]([^'"]+)['"]/g))
    found.push(match[1]!)
  return found
}

/** The package a specifier names (`@scope/name` or `name`), without the path inside it. */
export function packageOf(specifier: string): string {
  return specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!
}

interface Manifest {
  name: string
  dependencies?: Record<string, string>
  devDependencies?: Record<string, string>
}

/** Every workspace package under `packages/<group>/<name>` (a folder without a package.json is none). */
export function workspacePackages(): Pkg[] {
  const found: Pkg[] = []
  for (const group of readdirSync(join(ROOT, 'packages'))) {
    for (const name of readdirSync(join(ROOT, 'packages', group))) {
      const dir = join(ROOT, 'packages', group, name)
      let manifest: Manifest
      try {
        manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest
      } catch {
        continue
      }
      const ours = (names: Record<string, string> | undefined) =>
        Object.keys(names ?? {}).filter((dep) => dep.startsWith(SCOPE))
      const deps = ours(manifest.dependencies)
      const files = sources(join(dir, 'src'))
      const imports = new Set<string>()
      for (const file of files)
        for (const spec of specifiers(readFileSync(file, 'utf8')))
          if (spec.startsWith(SCOPE)) imports.add(packageOf(spec))
      imports.delete(manifest.name)
      found.push({
        name: manifest.name,
        dir: `${group}/${name}`,
        files,
        deps,
        declared: [...deps, ...ours(manifest.devDependencies)],
        imports: [...imports].sort(),
      })
    }
  }
  return found
}
