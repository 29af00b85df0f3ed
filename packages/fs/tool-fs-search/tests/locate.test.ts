import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'
import { afterEach, expect, test } from 'vitest'
import { type Harness, harness, write } from './helpers.ts'
import { RipgrepLocator } from '../src/ripgrep.ts'

// Runs in its own file (its own module graph): @vscode/ripgrep must not have been imported before this test.
let h: Harness
afterEach(async () => { await h?.cleanup() })

test('the packaged ripgrep is resolved on the first call, not at load, and a failed resolution is retried on the next call', async () => {
  const arch = process.env.npm_config_arch
  // @vscode/ripgrep picks its platform package by npm_config_arch: a bogus one makes its module throw at import.
  process.env.npm_config_arch = 'no-such-arch'
  try {
    h = await harness()
    write(h.dir, { 'a.txt': 'hit\n' })
    const first = await h.call('grep', { pattern: 'hit' })
    expect(first.error?.code).toBe('SEARCH_FAILED')
    expect(first.content[0].text).toBe(`Error: grep search failed: could not start ripgrep (@vscode/ripgrep): Could not find @vscode/ripgrep-${process.platform}-no-such-arch. Ensure optionalDependencies are installed for this platform (${process.platform}-no-such-arch).`)
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
  const { rgPath } = await import(url.href) as { rgPath: string }
  h = await harness()
  write(h.dir, { 'a.txt': 'hit\n' })
  expect(await h.text('grep', { pattern: 'hit' })).toBe('Found 1 match\n\na.txt\nLine 1: hit')
  const locator = new RipgrepLocator(undefined)
  expect(await locator.path('grep')).toBe(rgPath)
})
