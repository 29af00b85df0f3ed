import { execFileSync, spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import fc from 'fast-check'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { Context } from 'cordis'
import { within } from '@deepseek-ai/dsh-tools'
import Workspace, { openFile, type WorkspaceError } from '../src/index.ts'

/*
 * openFile() against an independent oracle, GNU `realpath` (every symlink resolved), over random paths through a
 * tree with links that stay inside, lead out, loop, dangle and lead into a hidden directory. A path through a loop
 * is refused (fail closed); so is one outside, existing or not. The oracle gets the lexically normalised path, as
 * the tools do (they open `resolve(cwd, path)`).
 */
let base: string
let work: string
let workspace: Workspace

beforeAll(async () => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-workspace-prop-')))
  work = join(base, 'work')
  mkdirSync(join(work, 'a/b'), { recursive: true })
  mkdirSync(join(base, 'out/c'), { recursive: true })
  writeFileSync(join(work, 'a/f.txt'), 'x')
  writeFileSync(join(base, 'out/s.txt'), 'x')
  symlinkSync('a/b', join(work, 'in'))
  symlinkSync('../out', join(work, 'out'))
  symlinkSync('../../out/c', join(work, 'a/deep-out'))
  symlinkSync('..', join(work, 'a/b/up'))
  symlinkSync('/', join(work, 'slash'))
  symlinkSync('loop', join(work, 'loop'))
  symlinkSync('nowhere', join(work, 'dangling'))
  symlinkSync(join(base, 'work', 'a'), join(base, 'out/back-in'))
  mkdirSync(join(work, 'h/k'), { recursive: true })
  writeFileSync(join(work, 'h/k/key'), 'SECRET')
  symlinkSync('h/k', join(work, 'to-h'))
  symlinkSync('../work/h', join(base, 'out/to-h'))
  const ctx = new Context()
  workspace = new Workspace(ctx, { denyRead: [join(work, 'h')] })
})

afterAll(() => rmSync(base, { recursive: true, force: true }))

const segment = fc.constantFrom(
  'a',
  'b',
  'f.txt',
  'in',
  'out',
  'deep-out',
  'up',
  'slash',
  'loop',
  'dangling',
  'back-in',
  'c',
  's.txt',
  'missing',
  '..',
  '.',
  'h',
  'k',
  'key',
  'to-h',
)

test('openFile opens exactly the paths whose real path (realpath -e) lies in the root and is not hidden, and reports that real path', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(segment, { minLength: 1, maxLength: 6 }), async (segments) => {
      const path = segments.join('/')
      const absolute = resolve(work, path)
      const oracle = execFileSync('realpath', ['-m', '--', absolute], { encoding: 'utf8' }).trimEnd()
      const existing = spawnSync('realpath', ['-e', '--', absolute], { encoding: 'utf8' })
      const loops = existing.stderr.includes('Too many levels of symbolic links')
      let got: string | NodeJS.ErrnoException
      try {
        const file = await openFile(path, { cwd: work, tool: 'read', access: 'read', policy: workspace.policy(work) })
        got = file.real
        await file.close()
      } catch (error) {
        got = error as NodeJS.ErrnoException
      }
      const hidden = within(oracle, join(work, 'h')) || within(absolute, join(work, 'h'))
      if (loops) expect((got as WorkspaceError).code).toBe('WORKSPACE_OUTSIDE_ROOTS')
      else if (!within(oracle, work)) expect((got as WorkspaceError).code).toBe('WORKSPACE_OUTSIDE_ROOTS')
      else if (hidden) expect((got as WorkspaceError).code).toBe('WORKSPACE_HIDDEN')
      else if (existing.status === 0) expect(got).toBe(oracle)
      else expect(['ENOENT', 'ENOTDIR']).toContain((got as NodeJS.ErrnoException).code)
    }),
    { numRuns: 300 },
  )
})
