import { realpathSync } from 'node:fs'
import { join } from 'node:path'
import { type ConfineRequest, type ConfinedProcess, Confinement, spawnWrapped } from '@deepseek-ai/dsh-confinement'
import type { ExitStatus } from '@deepseek-ai/dsh-subprocess'
import { afterEach, expect, test } from 'vitest'
import { type Harness, harness, RecordingSubprocess, write } from './helpers.ts'

/**
 * A tiny second provider of ctx.confinement (docs/architecture.md#house-rules: a provider swap): it confines nothing and only launches the
 * program through env(1), recording what it was asked. The search tools must hand every ripgrep run to whatever
 * provider is loaded, with the session, read access and the verified real root.
 */
class EnvLauncher extends Confinement {
  static readonly inject = ['subprocess']
  static readonly requests: ConfineRequest[] = []
  async start(request: ConfineRequest): Promise<ConfinedProcess> {
    EnvLauncher.requests.push(request)
    const wrapped = {
      argv: ['/usr/bin/env', '--', ...request.argv],
      cwd: request.cwd,
      status: (exit: ExitStatus) => exit,
      failure: () => undefined,
    }
    return spawnWrapped(this.ctx.subprocess, wrapped, request)
  }
}

let h: Harness | undefined
afterEach(async () => {
  await h?.cleanup()
  h = undefined
  EnvLauncher.requests.length = 0
  RecordingSubprocess.reset()
})

test('with a ctx.confinement provider loaded, grep and glob run ripgrep through it: session, read access, real root', async () => {
  h = await harness({ subprocess: RecordingSubprocess, plugins: async (t) => void (await t.ctx.plugin(EnvLauncher)) })
  write(h.dir, { 'sub/a.txt': 'needle\n', 'b.txt': 'needle\n' })
  expect(await h.text('grep', { pattern: 'needle' })).toBe(
    'Found 2 matches\n\nb.txt\nLine 1: needle\n\nsub/a.txt\nLine 1: needle',
  )
  expect(await h.text('glob', { pattern: '**/*.txt', path: 'sub' })).toBe('sub/a.txt')
  expect(await h.text('grep', { pattern: 'needle', path: 'sub/a.txt' })).toBe(
    'Found 1 match\n\nsub/a.txt\nLine 1: needle',
  )
  const real = realpathSync(h.dir)
  expect(EnvLauncher.requests.map((r) => [r.session?.id, r.access, r.cwd, r.argv.at(-1)])).toEqual([
    ['session-1', 'read', real, '.'],
    ['session-1', 'read', join(real, 'sub'), '.'],
    ['session-1', 'read', join(real, 'sub'), join(real, 'sub/a.txt')],
  ])
  expect(RecordingSubprocess.requests.every((r) => r.argv[0] === '/usr/bin/env')).toBe(true)
})
