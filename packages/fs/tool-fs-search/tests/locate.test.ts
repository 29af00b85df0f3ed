import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { type Harness, harness, write } from './helpers.ts'
import { packagedRipgrep, RipgrepLocator } from '../src/ripgrep.ts'

// Runs in its own file (its own module graph): @vscode/ripgrep must not have been imported before this test.
let h: Harness
afterEach(async () => {
  await h?.cleanup()
})

test('the packaged ripgrep is resolved on the first call, not at load, and a failed resolution is retried on the next call', async () => {
  const arch = process.env.npm_config_arch
  // @vscode/ripgrep picks its platform package by npm_config_arch: a bogus one makes its module throw at import.
  process.env.npm_config_arch = 'no-such-arch'
  try {
    h = await harness()
    write(h.dir, { 'a.txt': 'hit\n' })
    const first = await h.call('grep', { pattern: 'hit' })
    expect(first.error?.code).toBe('SEARCH_FAILED')
    expect(first.content[0].text).toBe(
      `Error: grep search failed: could not start ripgrep (@vscode/ripgrep): Could not find @vscode/ripgrep-${process.platform}-no-such-arch. Ensure optionalDependencies are installed for this platform (${process.platform}-no-such-arch).`,
    )
  } finally {
    if (arch === undefined) delete process.env.npm_config_arch
    else process.env.npm_config_arch = arch
  }
  expect(await h.text('grep', { pattern: 'hit' })).toBe('Found 1 match\n\na.txt\nLine 1: hit')
  expect(await h.text('glob', { pattern: '*' })).toBe('a.txt')
})

test('the packaged ripgrep found without loading its module is the binary that module exports', async () => {
  // A fresh evaluation of the package (the test above left a failed one in the ES module cache).
  const url = pathToFileURL(createRequire(import.meta.url).resolve('@vscode/ripgrep'))
  url.searchParams.set('fresh', '1')
  const { rgPath } = (await import(url.href)) as { rgPath: string }
  h = await harness()
  write(h.dir, { 'a.txt': 'hit\n' })
  expect(await h.text('grep', { pattern: 'hit' })).toBe('Found 1 match\n\na.txt\nLine 1: hit')
  const locator = new RipgrepLocator(undefined)
  expect(await locator.path('grep')).toBe(rgPath)
})

describe('packagedRipgrep: node_modules walked by hand, in the order Node would resolve them', () => {
  const platformPackage = `@vscode/ripgrep-${process.platform}-${process.env.npm_config_arch || process.arch}`
  const binary = process.platform === 'win32' ? 'rg.exe' : 'rg'
  let root: string
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'dsh-locate-'))
  })
  afterEach(() => rmSync(root, { recursive: true, force: true }))

  /** A stand-in of @vscode/ripgrep (with its `exports`) and platform packages at the given node_modules folders. */
  function layout(ripgrepAt: string, platformAt: readonly string[]): string {
    const pkg = join(root, ripgrepAt, '@vscode/ripgrep')
    mkdirSync(join(pkg, 'lib'), { recursive: true })
    writeFileSync(
      join(pkg, 'package.json'),
      JSON.stringify({ name: '@vscode/ripgrep', type: 'module', exports: { '.': { default: './lib/index.js' } } }),
    )
    writeFileSync(join(pkg, 'lib/index.js'), 'export const rgPath = "stand-in"\n')
    for (const at of platformAt) {
      mkdirSync(join(root, at, platformPackage, 'bin'), { recursive: true })
      writeFileSync(join(root, at, platformPackage, 'package.json'), JSON.stringify({ name: platformPackage }))
      writeFileSync(join(root, at, platformPackage, 'bin', binary), '')
    }
    const from = join(root, 'app/src/index.js')
    mkdirSync(dirname(from), { recursive: true })
    return from
  }

  /** What the package's own `require.resolve` gives (the oracle), or undefined when it throws. */
  function oracle(from: string): string | undefined {
    try {
      return createRequire(createRequire(from).resolve('@vscode/ripgrep')).resolve(`${platformPackage}/bin/${binary}`)
    } catch {
      return undefined
    }
  }

  test.each([
    ['hoisted side by side', 'node_modules', ['node_modules']],
    ['the package nearer than a hoisted platform package', 'app/node_modules', ['node_modules']],
    [
      'a platform package nested in the package wins over a hoisted one',
      'node_modules',
      ['node_modules/@vscode/ripgrep/node_modules', 'node_modules'],
    ],
    ['no platform package at all', 'node_modules', []],
    ["a platform package only beside the caller, out of the package's reach", 'node_modules', ['app/node_modules']],
  ])('%s', (_, ripgrepAt, platformAt) => {
    const from = layout(ripgrepAt, platformAt)
    expect(packagedRipgrep(from)).toBe(oracle(from))
  })

  test('through a symlinked package folder (a pnpm store), the lookup starts from its real folder, as Node resolves', () => {
    const from = layout('store/node_modules', ['store/node_modules'])
    mkdirSync(join(root, 'node_modules/@vscode'), { recursive: true })
    symlinkSync(join(root, 'store/node_modules/@vscode/ripgrep'), join(root, 'node_modules/@vscode/ripgrep'))
    const found = packagedRipgrep(from)
    expect(found).toBe(realpathSync(join(root, 'store/node_modules', platformPackage, 'bin', binary)))
    expect(found).toBe(oracle(from))
  })
})
