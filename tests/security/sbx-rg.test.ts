import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, expect, test } from 'vitest'
import { attack, type Attack } from './helpers.ts'
import { RG } from '../reliability/helpers.ts'

/*
 * Attack #2 in docs/security.md#attacks (docs/security.md#boundary, trusted launch of rg): dsh installed inside the workspace — here its ripgrep,
 * at `<project>/node_modules/.../rg` — and a sandboxed command replaces that binary. The next grep runs on the host:
 * it must not run the replacement: an rg inside a writable root runs only when a SHA-256 recorded at pack time vouches
 * for it (search-rg-trust.test.ts plays the packed case).
 */
let a: Attack | undefined
const savedPath = process.env.PATH
afterEach(async () => {
  process.env.PATH = savedPath
  await a?.cleanup()
  a = undefined
})

const fake = (marker: string) => `#!/bin/sh\necho "ran $0 on the host" >> ${marker}\nexec ${RG} "$@"\n`

test('a ripgrep inside the workspace, replaced by a command, is never run by grep or glob: no recorded digest vouches for it', async () => {
  a = await attack({
    config: ({ project }) => {
      const installed = join(project, 'node_modules/@vscode/ripgrep-linux-x64/bin/rg')
      mkdirSync(join(installed, '..'), { recursive: true })
      copyFileSync(RG, installed)
      writeFileSync(join(project, 'notes.txt'), 'needle here\n')
      return { 'tool-fs-search': { rgPath: installed } }
    },
  })
  const marker = join(a.outside, 'pwned')
  const installed = 'node_modules/@vscode/ripgrep-linux-x64/bin/rg'
  const replaced = await a.bash(
    `printf '%s' '${fake(marker)}' > ${installed} && chmod 755 ${installed} && echo replaced`,
  )
  expect(replaced).toBe('replaced')
  expect(readFileSync(join(a.project, installed), 'utf8')).toContain('on the host')
  const grep = await a.call('grep', { pattern: 'needle' })
  const glob = await a.call('glob', { pattern: '*.txt' })
  // No recorded SHA-256 vouches for a configured rg that lies in a writable root: refused, saying which rg to use.
  for (const result of [grep, glob]) {
    expect(result.code).toBe('SEARCH_FAILED')
    expect(result.text).toContain('it is not trusted: it lies inside the writable directory')
  }
  expect(existsSync(marker) ? readFileSync(marker, 'utf8') : '').toBe('')
})

test('an rgPath given as a bare name is looked up in the system directories only: a planted one on PATH never runs', async () => {
  a = await attack({ sandbox: false, config: () => ({ 'tool-fs-search': { rgPath: 'rg' } }) })
  const marker = join(a.outside, 'pwned')
  await a.bash(
    `mkdir -p node_modules/.bin && printf '%s' '${fake(marker)}' > node_modules/.bin/rg && chmod 755 node_modules/.bin/rg`,
  )
  process.env.PATH = `${join(a.project, 'node_modules/.bin')}:${savedPath}`
  const grep = await a.call('grep', { pattern: 'needle' })
  expect(existsSync(marker)).toBe(false)
  if (existsSync('/usr/bin/rg') || existsSync('/usr/local/bin/rg')) {
    expect(grep.isError).toBe(false)
  } else {
    expect(grep.code).toBe('SEARCH_FAILED')
    expect(grep.text).toBe(
      'Error: grep search failed: could not start ripgrep (rg): no "rg" in /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin; ' +
        'set "tool-fs-search": {"rgPath": "/absolute/path/to/rg"}',
    )
  }
})
