import { execFileSync } from 'node:child_process'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { installed, MARKER, PINNED_DIR, pinList } from './clients.ts'

/** The packages whose install script links their platform binary: [package, script]. */
const LINK_STEPS: ReadonlyArray<readonly [string, string]> = [
  ['@anthropic-ai/claude-code', 'install.cjs'],
  ['opencode-ai', 'postinstall.mjs'],
]

/**
 * vitest's global setup: installs the pinned agent CLIs (tests/clients/pinned/package.json) once, before any test
 * file runs, so that the client tests never race to install them. Reused while the pin list is unchanged. No
 * lockfile: npm cannot write one for opencode's per-platform packages that `npm ci` accepts on another platform;
 * the CLIs themselves are pinned exactly. No install scripts of the dependency tree (node-pty would build itself
 * with node-gyp): only the two steps that put a CLI's native binary in place, from the platform package npm
 * already installed, nothing downloaded. More fetch retries than npm's default: a registry hiccup should cost time,
 * not the client tests.
 */
export default function setup(): void {
  if (installed()) return
  console.log(`installing the pinned agent CLIs into ${PINNED_DIR} (once; tests/clients)`)
  rmSync(join(PINNED_DIR, 'node_modules'), { recursive: true, force: true })
  try {
    execFileSync(
      'npm',
      [
        'install',
        '--no-package-lock',
        '--no-save',
        '--ignore-scripts',
        '--no-audit',
        '--no-fund',
        '--workspaces=false',
        '--loglevel=error',
        '--fetch-retries=5',
      ],
      {
        cwd: PINNED_DIR,
        stdio: ['ignore', 'inherit', 'inherit'],
      },
    )
    for (const [pkg, script] of LINK_STEPS)
      execFileSync(process.execPath, [script], { cwd: join(PINNED_DIR, 'node_modules', pkg), stdio: 'inherit' })
    writeFileSync(MARKER, pinList())
  } catch (error) {
    // Only the client tests need them: they fail, naming this install (agentCli); the rest of the suite runs.
    console.error(`the pinned agent CLIs could not be installed: ${(error as Error).message}`)
  }
}
