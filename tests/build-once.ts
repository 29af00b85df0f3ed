import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { TestProject } from 'vitest/node'

declare module 'vitest' {
  export interface ProvidedContext {
    /** A directory of this test run (removed at its end): the packed and installed dsh goes there, once. */
    dshRun: string
  }
}

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
/** The build's last output: the bundled `dsh` entry. */
export const BUNDLE = join(ROOT, 'packages/host/cli/dist/dsh.cjs')

/** What the build reads: every package's sources and manifest, the tsconfigs, the bundle's scripts and loader. */
function newestInput(): number {
  let newest = 0
  const visit = (path: string): void => {
    const stat = statSync(path)
    if (stat.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name))
    else newest = Math.max(newest, stat.mtimeMs)
  }
  for (const file of readdirSync(ROOT))
    if (/^tsconfig.*\.json$/.test(file) && file !== 'tsconfig.tests.json') visit(join(ROOT, file))
  for (const group of readdirSync(join(ROOT, 'packages'))) {
    for (const name of readdirSync(join(ROOT, 'packages', group))) {
      const pkg = join(ROOT, 'packages', group, name)
      for (const part of ['src', 'package.json', 'tsconfig.json', 'scripts', 'bin']) {
        try {
          visit(join(pkg, part))
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
        }
      }
    }
  }
  return newest
}

/** Whether the bundle is missing or older than something the build reads. */
export function stale(): boolean {
  try {
    return statSync(BUNDLE).mtimeMs < newestInput()
  } catch {
    return true
  }
}

/**
 * vitest's global setup: the one place a test run builds. `npm test` has built just before, so this finds the tree
 * fresh and builds nothing; `npx vitest run <file>` on a tree changed since its last build builds it here, once,
 * before any test file runs. No test file builds (tests/build-once.test.ts checks): host tests spawn this build's
 * bundle, and the tests that need the packed, installed `dsh` share one install per run (helpers.ts installedDsh).
 */
export default function setup(project: TestProject): () => void {
  if (stale()) {
    console.log('building dsh (the tree changed since its last build): npm run build')
    try {
      execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] })
    } catch {
      throw new Error('npm run build failed (its output is above): no test runs against a build older than the sources')
    }
  }
  const run = mkdtempSync(join(tmpdir(), 'dsh-test-run-'))
  project.provide('dshRun', run)
  return () => rmSync(run, { recursive: true, force: true })
}
