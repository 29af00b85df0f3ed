import { execFileSync, spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import fc from 'fast-check'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { Context } from 'cordis'
import Workspace, { within, WorkspaceError } from '../src/index.ts'

/*
 * confine() against an independent oracle, GNU `realpath -m` (every symlink resolved, missing components allowed),
 * over random paths through a tree with links that stay inside, lead out, loop and dangle. A path through a loop
 * is refused (fail closed). The oracle gets the
 * lexically normalised path, as the tools do (they open `resolve(cwd, path)`).
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
  const ctx = new Context()
  workspace = new Workspace(ctx, {})
})

afterAll(() => rmSync(base, { recursive: true, force: true }))

const segment = fc.constantFrom('a', 'b', 'f.txt', 'in', 'out', 'deep-out', 'up', 'slash', 'loop', 'dangling', 'back-in', 'c', 's.txt', 'missing', '..', '.')

test('confine accepts exactly the paths whose real path (realpath -m) lies in the root, and returns that real path', async () => {
  await fc.assert(fc.asyncProperty(fc.array(segment, { minLength: 1, maxLength: 6 }), async (segments) => {
    const path = segments.join('/')
    const absolute = resolve(work, path)
    const oracle = execFileSync('realpath', ['-m', '--', absolute], { encoding: 'utf8' }).trimEnd()
    const loops = spawnSync('realpath', ['-e', '--', absolute], { encoding: 'utf8' }).stderr.includes('Too many levels of symbolic links')
    let got: string | WorkspaceError
    try {
      got = await workspace.confine(path, { cwd: work, tool: 'read' })
    } catch (error) {
      got = error as WorkspaceError
    }
    // Through a link loop confine fails closed (realpath -m still names a path).
    if (loops) {
      expect(got).toBeInstanceOf(WorkspaceError)
      return
    }
    if (within(oracle, work)) expect(got).toBe(oracle)
    else expect(got).toBeInstanceOf(WorkspaceError)
  }), { numRuns: 300 })
})
