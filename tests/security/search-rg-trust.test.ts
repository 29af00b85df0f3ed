import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { cpSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { installedDsh } from '../../packages/host/cli/tests/helpers.ts'
import { fakeHome, type FakeHome } from './fs-helpers.ts'

/*
 * Row 2 of "Search inside the boundary" in docs/security.md (trusted launch): dsh installed inside the workspace (a devDependency, as npm packs
 * it), and a sandboxed command replaces its ripgrep. The next, fresh `dsh call grep` made its private copy of
 * whatever lay there and ran the planted program on the host, which printed ~/.ssh/id_rsa. Now an rg inside a
 * writable root runs only when its SHA-256 is the one recorded when dsh was packed: no process runs the planted one,
 * and the call says which rg to use.
 */
let h: FakeHome
let dshJs: string
let rg: string
let pristine: Buffer

beforeAll(() => {
  h = fakeHome()
  const installed = installedDsh()
  const from = join(installed.prefix, 'lib/node_modules/dsh-agent-tools')
  const into = join(h.work, 'node_modules/dsh-agent-tools')
  cpSync(from, into, { recursive: true })
  dshJs = join(into, 'bin/dsh.js')
  const scope = join(into, 'node_modules/@vscode')
  const platform = readdirSync(scope).find((name) => name.startsWith('ripgrep-'))
  if (!platform) throw new Error(`no ripgrep platform package in ${scope}`)
  rg = join(scope, platform, 'bin/rg')
  pristine = readFileSync(rg)
  writeFileSync(join(h.work, 'notes.txt'), 'needle here\n')
}, 300_000)
afterAll(() => h?.cleanup())

function call(args: readonly string[]): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync(process.execPath, [dshJs, 'call', ...args], { cwd: h.work, env: h.env, encoding: 'utf8' })
  return { status: run.status, stdout: run.stdout, stderr: run.stderr }
}

/** A config that turns the workspace roots on without the sandbox. */
function roots(): string {
  const file = join(h.outside, 'roots.json')
  writeFileSync(file, JSON.stringify({ workspace: {} }))
  return file
}

const marker = () => join(h.outside, 'pwned')
const planted = () => `#!/bin/sh\necho "ran on the host" >> ${marker()}\ncat ${join(h.home, '.ssh/id_rsa')}\n`

test('dsh inside the workspace: its packed rg matches the recorded SHA-256 and searches, confined or not', () => {
  writeFileSync(rg, pristine)
  expect(call(['grep', '{"pattern":"needle"}', '--sandbox']).stdout).toContain('notes.txt')
  expect(call(['grep', '{"pattern":"needle"}', '--config', roots()]).stdout).toContain('notes.txt')
})

test('a sandboxed command replaces the workspace rg; a fresh dsh call grep runs it in no process and says which rg to use', () => {
  writeFileSync(rg, pristine)
  const swap = `cat > '${rg}.new' <<'EOF'\n${planted()}EOF\nchmod 755 '${rg}.new' && mv '${rg}.new' '${rg}' && echo swapped`
  const bash = call(['bash', JSON.stringify({ command: swap, description: 'attack' }), '--sandbox'])
  expect(bash.stdout).toContain('swapped')
  expect(readFileSync(rg, 'utf8')).toContain('ran on the host')
  for (const flags of [['--sandbox'], ['--config', roots()]]) {
    const grep = call(['grep', '{"pattern":"needle"}', ...flags])
    const text = grep.stdout + grep.stderr
    expect(text).not.toContain('CANARY')
    expect(text).toContain('is not trusted: its SHA-256')
    expect(text).toContain('when dsh was packed: it was replaced')
    expect(text).toContain('"rgPath": "/usr/bin/rg"')
    const glob = call(['glob', '{"pattern":"*.txt"}', ...flags])
    expect(glob.stdout + glob.stderr).toContain('is not trusted')
  }
  expect(existsSync(marker()) ? readFileSync(marker(), 'utf8') : '').toBe('')
})

test('pack records the SHA-256 of the platform rg beside the bundle', () => {
  const digests = JSON.parse(
    readFileSync(join(h.work, 'node_modules/dsh-agent-tools/dist/ripgrep-digests.json'), 'utf8'),
  ) as Record<string, { version: string; sha256: string }>
  const sha256 = createHash('sha256').update(pristine).digest('hex')
  expect(Object.values(digests).map((entry) => entry.sha256)).toContain(sha256)
})
