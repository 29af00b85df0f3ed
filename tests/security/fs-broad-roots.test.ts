import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { dsh, fakeHome, type FakeHome } from './fs-helpers.ts'

/*
 * Attack #7 (docs/security.md#boundary "roots a user meant"): `--sandbox --cwd /`, or a cwd of $HOME (or of a directory
 * that holds credential stores, ~/.config), made everything below writable and readable. Such a root is refused
 * with WORKSPACE_ROOT_REFUSED, whose text says to pass a project directory; `workspace.allowBroadRoots` lets it.
 */
let h: FakeHome
beforeAll(() => {
  h = fakeHome()
  writeFileSync(join(h.base, 'broad.json'), JSON.stringify({ workspace: { allowBroadRoots: true } }))
}, 120_000)
afterAll(() => h?.cleanup())

async function call(tool: string, args: Record<string, unknown>, cwd: string, extra: string[] = []) {
  const run = await dsh(['call', tool, JSON.stringify(args), '--cwd', cwd, '--sandbox', '--json', ...extra], {
    env: h.env,
    cwd: h.work,
  })
  return JSON.parse(run.stdout) as { text: string; isError: boolean; error: { code: string } | null }
}

test('attack #7: --cwd /, the home directory and ~/.config are refused as roots by read, glob and grep; the text says to pass --cwd', async () => {
  const root = await call('read', { path: 'etc/hostname' }, '/')
  expect(root.error?.code).toBe('WORKSPACE_ROOT_REFUSED')
  expect(root.text).toBe(
    'Error: read refused: the workspace root "/" is too broad (it is the filesystem root): a model could read or change everything below it. Pass a project directory with --cwd (or as the client\'s root); to allow this root anyway, set "workspace": { "allowBroadRoots": true } in the config',
  )
  const home = await call('read', { path: '.bashrc' }, h.home)
  expect(home.error?.code).toBe('WORKSPACE_ROOT_REFUSED')
  expect(home.text).toContain(`the workspace root "${h.home}" is too broad (it is the home directory)`)
  const config = await call('glob', { pattern: '**' }, join(h.home, '.config'))
  expect(config.error?.code).toBe('WORKSPACE_ROOT_REFUSED')
  expect(config.text).toContain('(it holds the credential store ~/.config/gcloud)')
  expect((await call('grep', { pattern: 'CANARY' }, h.home)).error?.code).toBe('WORKSPACE_ROOT_REFUSED')
  // A project directory is fine.
  expect((await call('read', { path: 'inside.txt' }, h.work)).isError).toBe(false)
}, 120_000)

test('attack #7: workspace.allowBroadRoots: true lets a broad root be used (credential stores stay hidden)', async () => {
  const extra = ['--config', join(h.base, 'broad.json')]
  expect(await call('read', { path: '.bashrc' }, h.home, extra)).toMatchObject({
    isError: false,
    text: expect.stringContaining('1: # rc'),
  })
  expect((await call('read', { path: '.ssh/id_rsa' }, h.home, extra)).error?.code).toBe('WORKSPACE_HIDDEN')
}, 120_000)

test('attack #7: bash under --sandbox refuses a broad root too (WORKSPACE_ROOT_REFUSED) and runs nothing', async () => {
  const marker = join(h.home, 'ran-in-home')
  const home = await call(
    'bash',
    {
      command: `echo appended >> ${JSON.stringify(join(h.home, '.bashrc'))}; touch ${JSON.stringify(marker)}`,
      description: 'Write in home',
    },
    h.home,
  )
  expect(home.error?.code).toBe('WORKSPACE_ROOT_REFUSED')
  expect(home.text).toContain(
    `Error: bash refused: the workspace root "${h.home}" is too broad (it is the home directory)`,
  )
  expect(existsSync(marker)).toBe(false)
  expect(readFileSync(join(h.home, '.bashrc'), 'utf8')).toBe('# rc\n')
  const root = await call('bash', { command: 'touch /etc/dsh-broad-root-probe', description: 'Write in etc' }, '/')
  expect(root.error?.code).toBe('WORKSPACE_ROOT_REFUSED')
  expect(existsSync('/etc/dsh-broad-root-probe')).toBe(false)
  // A project directory runs.
  expect(await call('bash', { command: 'echo ok', description: 'Say ok' }, h.work)).toMatchObject({
    isError: false,
    text: 'ok',
  })
}, 120_000)
