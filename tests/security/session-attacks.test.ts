import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs'
import { userInfo } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { hiddenBy } from '@deepseek-ai/dsh-workspace'
import { attack, leaked, type Attack } from './helpers.ts'

/*
 * The six rows of "One session, one object" in docs/security.md (docs/seams.md#sessions), played against the
 * shipped composition under --sandbox with real bubblewrap: each got through while a session's state lived in six
 * services' maps.
 */

let a: Attack | undefined
afterEach(async () => {
  await a?.cleanup()
  a = undefined
})

test('row 1: a claimed root renamed and replaced by a link never moves the session: its write and its bash fail WORKSPACE_ROOT_MOVED', async () => {
  a = await attack()
  const sub = join(a.project, 'sub')
  mkdirSync(sub)
  // Session Y claims `sub` (pinned now); session Z, rooted above it, swaps a link to a directory outside in its place.
  expect((await a.call('write', { path: 'y.txt', content: 'y\n' }, 'Y', sub)).isError).toBe(false)
  expect(await a.bash(`mv sub sub.real && ln -s ${a.outside} sub && echo swapped`, 'Z')).toBe('swapped')
  const write = await a.call('write', { path: 'x.txt', content: 'PWNED\n' }, 'Y', sub)
  expect(write).toMatchObject({ isError: true, code: 'WORKSPACE_ROOT_MOVED' })
  const bash = await a.call('bash', { command: 'echo PWNED > x.txt; echo done', description: 'attack' }, 'Y', sub)
  expect(bash).toMatchObject({ isError: true, code: 'WORKSPACE_ROOT_MOVED' })
  expect(readdirSync(a.outside)).toEqual([])
  expect(readdirSync(join(a.project, 'sub.real'))).toEqual(['y.txt'])
})

test("row 2: session B cannot read, grep or glob session A's full output or saved result, nor list the spill root", async () => {
  a = await attack()
  const big = await a.bash('seq 1 200000 | sed "s/^/A-OUTPUT-/"', 'A')
  const output = /full output: (\/\S+?)\]/.exec(big)?.[1] ?? ''
  expect(output, big.slice(-300)).toMatch(/^\//)
  expect(await a.bash('seq 1 40000 | sed "s/^/A-SAVED-/" > lines.txt && echo made', 'A')).toBe('made')
  const grep = await a.call('grep', { pattern: 'A-SAVED-', path: 'lines.txt' }, 'A')
  const saved = /saved at (\/\S+?)\.? /.exec(grep.text)?.[1] ?? ''
  expect(saved, grep.text.slice(-600)).toMatch(/^\//)
  // A itself reads both with the file tools.
  expect((await a.call('read', { path: output, offset: 200000, limit: 1 }, 'A')).text).toContain('A-OUTPUT-200000')
  expect((await a.call('read', { path: saved, limit: 1 }, 'A')).isError).toBe(false)
  for (const path of [output, saved]) {
    const read = await a.call('read', { path }, 'B')
    expect(read).toMatchObject({ isError: true, code: 'WORKSPACE_HIDDEN' })
    const found = await a.call('grep', { pattern: 'A-(OUTPUT|SAVED)-1\\b', path }, 'B')
    expect(found.text).not.toMatch(/A-(OUTPUT|SAVED)-1\b/)
  }
  const spillRoot = saved.split('/').slice(0, -2).join('/')
  const listed = await a.call('glob', { pattern: '**/*', path: spillRoot }, 'B')
  expect(listed.text).not.toContain(saved.split('/').pop() as string)
  expect(listed.text).not.toContain(output.split('/').pop() as string)
  // Directory names are random, not `<pid>-<n>`.
  expect(saved.split('/').at(-2)).toMatch(/^[0-9a-f]{24}$/)
})

test('row 3: bash-sandbox.denyRead hides a path from read, grep and glob, not only from commands', async () => {
  a = await attack({ config: ({ project }) => ({ 'bash-sandbox': { denyRead: [join(project, 'secrets')] } }) })
  mkdirSync(join(a.project, 'secrets'))
  writeFileSync(join(a.project, 'secrets', 'prod.env'), 'CANARY-PROD\n')
  expect(await a.call('read', { path: 'secrets/prod.env' })).toMatchObject({ isError: true, code: 'WORKSPACE_HIDDEN' })
  expect((await a.call('grep', { pattern: 'CANARY' })).text).not.toContain('CANARY-PROD')
  expect((await a.call('glob', { pattern: '**/*.env' })).text).not.toContain('prod.env')
  expect(await a.bash('cat secrets/prod.env 2>&1; true')).not.toContain('CANARY-PROD')
})

test("row 4: with allowBroadRoots and cwd = $HOME, the agents' stores the sandbox hides are hidden from read too", async () => {
  a = await attack({ config: () => ({ workspace: { allowBroadRoots: true } }) })
  mkdirSync(join(a.home, '.local/share/opencode'), { recursive: true })
  writeFileSync(join(a.home, '.local/share/opencode/auth.json'), 'CANARY-OPENCODE-AUTH\n')
  writeFileSync(join(a.home, '.claude.json'), 'CANARY-CLAUDE-JSON\n')
  for (const path of ['.claude.json', '.local/share/opencode/auth.json']) {
    const read = await a.call('read', { path }, 'H', a.home)
    expect(read, read.text).toMatchObject({ isError: true, code: 'WORKSPACE_HIDDEN' })
    expect(await a.bash(`cat ${join(a.home, path)} 2>&1; true`)).not.toContain('CANARY')
  }
  expect(leaked((await a.call('grep', { pattern: 'CANARY', path: '.' }, 'H', a.home)).text)).toEqual([])
})

test("row 5: a new session's first background task is bash-1, and another session's task is unknown to it", async () => {
  a = await attack()
  const background = { command: 'sleep 30', description: 'wait', run_in_background: true }
  for (let i = 0; i < 3; i++) await a.call('bash', background, 'A')
  const started = await a.call('bash', background, 'B')
  expect(started.text).toContain('bash-1')
  const theirs = await a.call('bash_output', { task_id: 'bash-3' }, 'B')
  expect(theirs).toMatchObject({ isError: true, code: 'BASH_UNKNOWN_TASK' })
  expect(theirs.text).not.toContain('another session')
})

test('row 6: stores under the real home (password database) are hidden when HOME points elsewhere', async () => {
  a = await attack()
  const real = userInfo().homedir
  expect(real).not.toBe(a.home)
  const policy = a.host.ctx.get('workspace')?.policy(a.session('A', a.project), 'read')
  expect(policy).toBeDefined()
  for (const store of ['.ssh/id_rsa', '.claude/x', '.npmrc', '.local/share/opencode/auth.json'])
    expect(hiddenBy(join(real, store), policy?.rules ?? [])?.shown, store).toBeDefined()
  // The sandbox masks the real home's existing stores too (checked only where this machine has one).
  const present = ['.npmrc', '.claude/settings.json', '.ssh/id_rsa'].find((store) => existsSync(join(real, store)))
  if (present) {
    const secret = readFileSync(join(real, present), 'utf8').trim()
    const inside = await a.bash(`cat ${join(real, present)} 2>/dev/null; true`)
    expect(secret.length).toBeGreaterThan(0)
    expect(inside.includes(secret)).toBe(false)
  }
})

/*
 * The same rows without --sandbox (the workspace policy on: a `workspace` section; bash unconfined): what the file tools and tasks promise
 * holds there too. A command itself can read what the user can; that is the sandbox's part (docs/security.md).
 */
describe('without --sandbox: the file tools and tasks hold the same rows', () => {
  test('row 1: a write of the session whose claimed root was swapped for a link fails WORKSPACE_ROOT_MOVED', async () => {
    a = await attack({ sandbox: false, config: () => ({ workspace: {} }) })
    const sub = join(a.project, 'sub')
    mkdirSync(sub)
    expect((await a.call('write', { path: 'y.txt', content: 'y\n' }, 'Y', sub)).isError).toBe(false)
    renameSync(sub, join(a.project, 'sub.real'))
    symlinkSync(a.outside, sub)
    for (const tool of ['write', 'edit', 'read', 'grep', 'glob', 'bash'] as const) {
      const args: Record<string, Record<string, unknown>> = {
        write: { path: 'x.txt', content: 'PWNED\n' },
        edit: { path: 'y.txt', old_string: 'y', new_string: 'PWNED' },
        read: { path: 'y.txt' },
        grep: { pattern: 'y' },
        glob: { pattern: '*' },
        bash: { command: 'echo PWNED > x.txt', description: 'attack' },
      }
      expect(await a.call(tool, args[tool] ?? {}, 'Y', sub), tool).toMatchObject({
        isError: true,
        code: 'WORKSPACE_ROOT_MOVED',
      })
    }
    expect(readdirSync(a.outside)).toEqual([])
  })

  test("row 2: session B's file tools cannot reach session A's saved result", async () => {
    a = await attack({ sandbox: false, config: () => ({ workspace: {} }) })
    writeFileSync(join(a.project, 'lines.txt'), Array.from({ length: 40000 }, (_, i) => `A-SAVED-${i}\n`).join(''))
    const grep = await a.call('grep', { pattern: 'A-SAVED-', path: 'lines.txt' }, 'A')
    const saved = /saved at (\/\S+?)\.? /.exec(grep.text)?.[1] ?? ''
    expect(saved, grep.text.slice(-600)).toMatch(/^\//)
    expect((await a.call('read', { path: saved, limit: 1 }, 'A')).isError).toBe(false)
    expect(await a.call('read', { path: saved }, 'B')).toMatchObject({ isError: true, code: 'WORKSPACE_HIDDEN' })
    expect((await a.call('grep', { pattern: 'A-SAVED-1\\b', path: saved }, 'B')).text).not.toMatch(/A-SAVED-1\b/)
    const listed = await a.call('glob', { pattern: '**/*', path: saved.split('/').slice(0, -2).join('/') }, 'B')
    expect(listed.text).not.toContain(saved.split('/').pop() as string)
  })

  test("rows 3, 4 and 6: bash-sandbox.denyRead, the agents' stores and the real home are hidden from read", async () => {
    a = await attack({
      sandbox: false,
      config: ({ project }) => ({
        'bash-sandbox': { denyRead: [join(project, 'secrets')] },
        workspace: { allowBroadRoots: true },
      }),
    })
    mkdirSync(join(a.project, 'secrets'))
    writeFileSync(join(a.project, 'secrets', 'prod.env'), 'CANARY-PROD\n')
    expect(await a.call('read', { path: 'secrets/prod.env' })).toMatchObject({
      isError: true,
      code: 'WORKSPACE_HIDDEN',
    })
    writeFileSync(join(a.home, '.claude.json'), 'CANARY-CLAUDE-JSON\n')
    const read = await a.call('read', { path: '.claude.json' }, 'H', a.home)
    expect(read, read.text).toMatchObject({ isError: true, code: 'WORKSPACE_HIDDEN' })
    const policy = a.host.ctx.get('workspace')?.policy(a.session('A', a.project), 'read')
    expect(hiddenBy(join(userInfo().homedir, '.ssh/id_rsa'), policy?.rules ?? [])?.shown).toBeDefined()
  })

  test("row 5: ids count per session and another session's task is unknown", async () => {
    a = await attack({ sandbox: false, config: () => ({ workspace: {} }) })
    const background = { command: 'sleep 30', description: 'wait', run_in_background: true }
    for (let i = 0; i < 2; i++) await a.call('bash', background, 'A')
    expect((await a.call('bash', background, 'B')).text).toContain('bash-1')
    expect(await a.call('bash_output', { task_id: 'bash-2' }, 'B')).toMatchObject({
      isError: true,
      code: 'BASH_UNKNOWN_TASK',
    })
  })
})
