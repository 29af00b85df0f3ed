import { execFileSync } from 'node:child_process'
import {
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { readFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { Context } from 'cordis'
import { CREDENTIAL_STORES } from '@deepseek-ai/dsh-tools'
import Workspace, {
  broadness,
  checkReal,
  openDirectory,
  openFile,
  type OpenOptions,
  type WorkspaceError,
} from '../src/index.ts'

/*
 * The open-then-check API on real files: base/home is $HOME for these tests (restored after each), base/home/proj
 * the session cwd; base/ro a read-only root; base/out outside every root.
 */
let base: string
let home: string
let work: string
let savedHome: string | undefined

beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-open-test-')))
  home = join(base, 'home')
  work = join(home, 'proj')
  for (const dir of [join(work, 'sub'), join(home, '.ssh'), join(home, '.cargo'), join(base, 'ro'), join(base, 'out')])
    mkdirSync(dir, { recursive: true })
  writeFileSync(join(work, 'a.txt'), 'a\n')
  writeFileSync(join(home, '.ssh/id_rsa'), 'SECRET\n')
  writeFileSync(join(home, '.cargo/credentials.toml'), 'SECRET\n')
  writeFileSync(join(home, '.cargo/config.toml'), 'plain\n')
  writeFileSync(join(base, 'ro/r.txt'), 'r\n')
  writeFileSync(join(base, 'out/o.txt'), 'o\n')
  savedHome = process.env.HOME
  process.env.HOME = home
})

afterEach(() => {
  process.env.HOME = savedHome
  rmSync(base, { recursive: true, force: true })
})

function service(config: ConstructorParameters<typeof Workspace>[1] = {}): Workspace {
  return new Workspace(new Context(), { readOnly: [join(base, 'ro')], ...config })
}

const options = (workspace: Workspace, access: 'read' | 'write' = 'read', cwd = work): OpenOptions => ({
  cwd,
  tool: 'read',
  access,
  policy: workspace.policy(cwd),
})

async function refusal(promise: Promise<unknown>): Promise<WorkspaceError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught as WorkspaceError,
  )
  expect(error, 'expected a refusal').toBeDefined()
  return error!
}

test('openFile returns the descriptor, its real path, the path as given and the fstat of the descriptor', async () => {
  symlinkSync('sub', join(work, 'to-sub'))
  writeFileSync(join(work, 'sub/b.txt'), 'b\n')
  const file = await openFile('to-sub/b.txt', options(service()))
  try {
    expect(file.real).toBe(join(work, 'sub/b.txt'))
    expect(file.absolute).toBe(join(work, 'to-sub/b.txt'))
    expect(file.stats.isFile()).toBe(true)
    expect((await file.handle.readFile()).toString()).toBe('b\n')
  } finally {
    await file.close()
  }
  await file.close() // idempotent
})

test('refusals: outside, through a link out, hidden (also a credentials* glob), read-only for write; each text says what to do', async () => {
  const ws = service()
  symlinkSync(join(base, 'out/o.txt'), join(work, 'out-link'))
  expect((await refusal(openFile(join(base, 'out/o.txt'), options(ws)))).message).toBe(
    `read refused: "${base}/out/o.txt" is outside the workspace roots (${work}; read-only: ${base}/ro); use a path inside them`,
  )
  expect((await refusal(openFile('out-link', options(ws)))).message).toBe(
    `read refused: "${work}/out-link" resolves through a symbolic link to "${base}/out/o.txt", which is outside the workspace roots (${work}; read-only: ${base}/ro); use a path inside them`,
  )
  const wide = service({ roots: [home], allowBroadRoots: true })
  const hidden = await refusal(openFile(join(home, '.ssh/id_rsa'), options(wide)))
  expect(hidden.code).toBe('WORKSPACE_HIDDEN')
  expect(hidden.message).toBe(
    `read refused: "${home}/.ssh/id_rsa" is hidden: it lies at or below the hidden path ~/.ssh. Credential stores, workspace.denyRead, dsh's token and config file are never read or written by the tools; work with files outside them`,
  )
  expect((await refusal(openFile(join(home, '.cargo/credentials.toml'), options(wide)))).code).toBe('WORKSPACE_HIDDEN')
  await (await openFile(join(home, '.cargo/config.toml'), options(wide))).close()
  const ro = checkRefusal(() => checkReal(join(base, 'ro/r.txt'), options(ws, 'write')))
  expect(ro.code).toBe('WORKSPACE_READ_ONLY')
  expect(ro.message).toBe(
    `read refused: "${base}/ro/r.txt" is not in a writable root (writable: ${work}; read-only: ${base}/ro); write inside a writable root`,
  )
  await (await openFile(join(base, 'ro/r.txt'), options(ws))).close()
})

function checkRefusal(run: () => void): WorkspaceError {
  try {
    run()
  } catch (error) {
    return error as WorkspaceError
  }
  throw new Error('expected a refusal')
}

test('a missing path inside is the OS error as is; outside it is the refusal (nothing tells what exists there)', async () => {
  const ws = service()
  expect((await refusal(openFile('nope.txt', options(ws)))).code).toBe('ENOENT')
  expect((await refusal(openFile(join(base, 'out/nope.txt'), options(ws)))).code).toBe('WORKSPACE_OUTSIDE_ROOTS')
  symlinkSync('loop', join(work, 'loop'))
  expect((await refusal(openFile('loop', options(ws)))).message).toContain('its symbolic links loop')
})

test('hidden by identity: a hidden directory renamed, or a hidden file hard-linked, inside a root stays hidden', async () => {
  mkdirSync(join(work, 'cfg/deep'), { recursive: true })
  writeFileSync(join(work, 'cfg/deep/key'), 'SECRET\n')
  writeFileSync(join(work, 'token'), 'SECRET\n')
  const ws = service({ denyRead: ['cfg', 'token'] })
  expect((await refusal(openFile('cfg/deep/key', options(ws)))).code).toBe('WORKSPACE_HIDDEN')
  renameSync(join(work, 'cfg'), join(work, 'moved'))
  linkSync(join(work, 'token'), join(work, 'token-link'))
  const moved = await refusal(openFile('moved/deep/key', options(ws)))
  expect(moved.code).toBe('WORKSPACE_HIDDEN')
  expect(moved.message).toContain(`renamed or linked from "${work}/cfg"`)
  expect((await refusal(openDirectory('moved/deep', options(ws)))).code).toBe('WORKSPACE_HIDDEN')
  expect((await refusal(openFile('token-link', options(ws)))).code).toBe('WORKSPACE_HIDDEN')
  // A walk learns where it went: the fresh policy has it among its hidden paths.
  expect(ws.policy(work, 'glob', true).hidden).toContain(join(work, 'moved'))
})

test('openDirectory gives a /proc path that names the opened directory even after a link is swapped in', async () => {
  const ws = service()
  const dir = await openDirectory('sub', options(ws))
  try {
    expect(dir.fdPath).toMatch(new RegExp(`^/proc/${process.pid}/fd/\\d+$`))
    renameSync(join(work, 'sub'), join(work, 'sub.old'))
    symlinkSync(join(base, 'out'), join(work, 'sub'))
    writeFileSync(join(dir.fdPath, 'new.txt'), 'n\n')
    expect(existsSync(join(work, 'sub.old/new.txt'))).toBe(true)
    expect(existsSync(join(base, 'out/new.txt'))).toBe(false)
  } finally {
    await dir.close()
  }
})

test('openDirectory with create makes missing components inside a writable root only', async () => {
  const ws = service()
  const made = await openDirectory('x/y/z', { ...options(ws, 'write'), create: true })
  expect(made.real).toBe(join(work, 'x/y/z'))
  await made.close()
  expect((await refusal(openDirectory(join(base, 'ro/new'), { ...options(ws, 'write'), create: true }))).code).toBe(
    'WORKSPACE_READ_ONLY',
  )
  expect(existsSync(join(base, 'ro/new'))).toBe(false)
  expect((await refusal(openDirectory(join(base, 'out/new'), { ...options(ws, 'write'), create: true }))).code).toBe(
    'WORKSPACE_OUTSIDE_ROOTS',
  )
  expect(existsSync(join(base, 'out/new'))).toBe(false)
})

test('broad roots: /, the home directory, its ancestors and directories holding credential stores; allowBroadRoots lets them', () => {
  expect(broadness('/')).toBe('it is the filesystem root')
  expect(broadness(home)).toBe('it is the home directory')
  expect(broadness(base)).toBe(`it holds the home directory ${home}`)
  expect(broadness(join(home, '.config'))).toBe('it holds the credential store ~/.config/gcloud')
  expect(broadness(join(home, '.cargo'))).toBe('it holds the credential store ~/.cargo/credentials*')
  expect(broadness(work)).toBeUndefined()
  const ws = service()
  expect(() => ws.policy(home, 'glob')).toThrow(expect.objectContaining({ code: 'WORKSPACE_ROOT_REFUSED' }))
  expect(() => service({ roots: ['/'] }).policy(work)).toThrow(
    expect.objectContaining({ code: 'WORKSPACE_ROOT_REFUSED' }),
  )
  expect(service({ allowBroadRoots: true }).policy(home).writable).toEqual([home])
})

test('the default hidden list holds the credential stores of docs/security.md#boundary, and the policy lists those that exist by real path', () => {
  for (const path of [
    '~/.ssh',
    '~/.claude',
    '~/.codex',
    '~/.gemini',
    '~/.config/opencode',
    '~/.cargo/credentials*',
    '~/.config/hub',
    '~/.config/git/credentials',
    '~/.pgpass',
    '~/.vault-token',
    '~/.terraform.d',
    '~/.m2/settings.xml',
    '~/.local/share/keyrings',
    '~/.mozilla',
    '~/.config/google-chrome',
    '~/.config/chromium',
  ]) {
    expect(CREDENTIAL_STORES).toContain(path)
  }
  const hidden = service().policy(work).hidden
  expect(hidden).toContain(join(home, '.ssh'))
  expect(hidden).toContain(join(home, '.cargo/credentials.toml'))
  expect(hidden).not.toContain(join(home, '.cargo/config.toml'))
})

test('a hidden path created after the policy was computed is hidden too (matched by name)', async () => {
  const ws = service({ roots: [home], allowBroadRoots: true })
  const policy = ws.policy(work)
  mkdirSync(join(home, '.aws'))
  writeFileSync(join(home, '.aws/credentials'), 'SECRET\n')
  expect(
    (await refusal(openFile(join(home, '.aws/credentials'), { cwd: work, tool: 'read', access: 'read', policy }))).code,
  ).toBe('WORKSPACE_HIDDEN')
})

test('without a policy nothing is checked, with the same mechanics (FIFO opened without blocking)', async () => {
  execFileSync('mkfifo', [join(work, 'pipe')])
  const fifo = await openFile('pipe', { cwd: work, tool: 'read', access: 'read', policy: undefined })
  expect(fifo.stats.isFIFO()).toBe(true)
  await fifo.close()
  const out = await openFile(join(base, 'out/o.txt'), { cwd: work, tool: 'read', access: 'read', policy: undefined })
  expect(await readFile(out.real, 'utf8')).toBe('o\n')
  await out.close()
})

test('a deleted hidden entry whose inode a new file reuses does not hide that file (the birth time tells them apart)', async () => {
  writeFileSync(join(work, 'token'), 'SECRET\n')
  const ws = service({ denyRead: ['token'] })
  const policy = ws.policy(work)
  const seen = [...policy.identities.keys()].find((id) => policy.identities.get(id) === join(work, 'token'))!
  rmSync(join(work, 'token'))
  // Create files until one gets the freed inode (ext4 and tmpfs reuse it at once), then read it.
  const [dev, ino] = seen.split(':')
  for (let i = 0; i < 50; i++) {
    const path = join(work, `new-${i}`)
    writeFileSync(path, 'fresh\n')
    const stats = statSync(path)
    if (`${stats.dev}` === dev && `${stats.ino}` === ino) {
      const file = await openFile(path, options(ws))
      expect((await file.handle.readFile()).toString()).toBe('fresh\n')
      await file.close()
      return
    }
  }
  // No reuse on this filesystem: nothing to show (the identity check alone is tested above).
})
