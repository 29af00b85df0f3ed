import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, expect, test } from 'vitest'
import { attack, type Attack } from './helpers.ts'

/*
 * Row 3 of "Search inside the boundary" in docs/security.md (traps answered): `sub/.gitignore` a link to /dev/zero made ripgrep read without end
 * until its memory bound, and grep failed. Under --sandbox too (ripgrep is then a process tree in the session's
 * sandbox, measured as a whole), grep runs again without that file's rules and answers, naming it.
 */
let a: Attack | undefined
afterEach(async () => {
  await a?.cleanup()
  a = undefined
})

test('under --sandbox, sub/.gitignore linked to /dev/zero: grep answers, says its rules were not applied, keeps the rest', async () => {
  a = await attack({ config: () => ({ 'tool-fs-search': { rgMaxMemoryBytes: 64 * 1024 * 1024 } }) })
  mkdirSync(join(a.project, 'sub'))
  writeFileSync(join(a.project, '.gitignore'), 'build/\n')
  mkdirSync(join(a.project, 'build'))
  writeFileSync(join(a.project, 'build/out.txt'), 'needle\n')
  writeFileSync(join(a.project, 'a.txt'), 'needle\n')
  writeFileSync(join(a.project, 'sub/b.txt'), 'needle\n')
  symlinkSync('/dev/zero', join(a.project, 'sub/.gitignore'))
  const result = await a.call('grep', { pattern: 'needle' })
  expect(result.isError).toBe(false)
  expect(result.text).toBe(
    [
      'Found 2 matches',
      'a.txt\nLine 1: needle',
      'sub/b.txt\nLine 1: needle',
      '[sub/.gitignore is a symbolic link to /dev/zero (a character device): its rules were not applied, and no .gitignore rules were applied within sub/. Files those rules would hide were searched; fix or remove that file to have its rules apply.]',
    ].join('\n\n'),
  )
}, 120_000)
