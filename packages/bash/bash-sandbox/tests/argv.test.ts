import { spawn } from 'node:child_process'
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { createServer, type Server } from 'node:net'
import { join } from 'node:path'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { CREDENTIAL_STORES, expandHome } from '@deepseek-ai/dsh-tools'
import { bwrapArgs, hiddenPaths, type SandboxPolicy, withoutCovered } from '../src/policy.ts'

/*
 * The confinement of the argv itself, with the real bubblewrap: each test builds a policy over temp dirs, runs
 * `bwrap <args> -- bash -c <command>` and looks at the host's files afterwards. The fixtures live under /var/tmp:
 * inside the sandbox the host's /tmp is replaced by the private one, so nothing of it would be visible.
 */
const FIXTURES = '/var/tmp'
let base: string
let root: string
let outside: string
let home: string
let tmp: string

beforeEach(() => {
  base = realpathSync(mkdtempSync(join(FIXTURES, 'dsh-sandbox-argv-')))
  root = join(base, 'root')
  outside = join(base, 'outside')
  home = join(base, 'home')
  tmp = join(base, 'tmp')
  for (const dir of [root, outside, home, tmp, join(home, '.ssh'), join(home, '.aws')])
    mkdirSync(dir, { recursive: true })
  writeFileSync(join(outside, 'keep.txt'), 'original\n')
  writeFileSync(join(home, '.ssh/id_rsa'), 'PRIVATE KEY\n')
  writeFileSync(join(home, '.aws/credentials'), 'AWS SECRET\n')
  writeFileSync(join(home, 'notes.txt'), 'plain notes\n')
})

afterEach(() => {
  rmSync(base, { recursive: true, force: true })
})

function policy(overrides: Partial<SandboxPolicy> = {}): SandboxPolicy {
  return {
    writable: [root],
    readOnly: [],
    hidden: hiddenPaths(CREDENTIAL_STORES.map((path) => expandHome(path, root, home))),
    tmpDir: tmp,
    network: 'none',
    ...overrides,
  }
}

interface Run {
  code: number | null
  stdout: string
  stderr: string
}

function sandboxed(command: string, p: SandboxPolicy = policy(), workdir = root): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn('bwrap', [...bwrapArgs(p, workdir), '--', 'bash', '-c', '--', command], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, HOME: home, TMPDIR: '/tmp' },
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => {
      stdout += chunk
    })
    child.stderr.on('data', (chunk) => {
      stderr += chunk
    })
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

test('the argv mounts in order: system read-only, init memory masked, private /tmp, roots, read-only roots, pinned ancestors, masks, then namespaces', () => {
  const args = bwrapArgs(
    {
      writable: ['/w'],
      readOnly: ['/r'],
      pinned: ['/w/a', '/w/a/b'],
      hidden: [
        { path: '/h', kind: 'dir' },
        { path: '/f', kind: 'file' },
      ],
      tmpDir: '/t',
      network: 'none',
    },
    '/w/sub',
  )
  expect(args).toEqual([
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    '--ro-bind',
    '/dev/null',
    '/proc/1/mem',
    '--ro-bind',
    '/dev/null',
    '/proc/1/task/1/mem',
    '--bind',
    '/t',
    '/tmp',
    '--bind',
    '/w',
    '/w',
    '--ro-bind',
    '/r',
    '/r',
    '--bind',
    '/w/a',
    '/w/a',
    '--bind',
    '/w/a/b',
    '/w/a/b',
    '--tmpfs',
    '/h',
    '--remount-ro',
    '/h',
    '--ro-bind',
    '/dev/null',
    '/f',
    '--unshare-all',
    '--cap-drop',
    'ALL',
    '--chdir',
    '/w/sub',
  ])
  expect(bwrapArgs({ writable: [], readOnly: [], hidden: [], tmpDir: '/t', network: 'host' }, '/')).toContain(
    '--share-net',
  )
  // A file kept visible below a hidden directory is bound before the directory becomes read-only.
  const kept = bwrapArgs(
    {
      writable: [],
      readOnly: [],
      hidden: [{ path: '/run', kind: 'dir', keep: ['/run/r/resolv.conf'] }],
      tmpDir: '/t',
      network: 'host',
    },
    '/',
  ).join(' ')
  expect(kept).toContain('--tmpfs /run --ro-bind /run/r/resolv.conf /run/r/resolv.conf --remount-ro /run')
})

test('a write inside the root lands; a write outside it fails and leaves the outside file untouched', async () => {
  const run = await sandboxed(
    `echo made > ${root}/new.txt && echo changed > ${outside}/keep.txt; echo "exit=$?"; touch ${outside}/other.txt`,
  )
  expect(readFileSync(join(root, 'new.txt'), 'utf8')).toBe('made\n')
  expect(readFileSync(join(outside, 'keep.txt'), 'utf8')).toBe('original\n')
  expect(existsSync(join(outside, 'other.txt'))).toBe(false)
  expect(run.stdout).toBe('exit=1\n')
  expect(run.stderr).toContain('Read-only file system')
})

test('a write to /etc fails: the system is read-only', async () => {
  const run = await sandboxed('echo x > /etc/dsh-sandbox-test && echo wrote')
  expect(run.stdout).toBe('')
  expect(run.stderr).toContain('Read-only file system')
  expect(existsSync('/etc/dsh-sandbox-test')).toBe(false)
})

test("a fake HOME's .ssh/id_rsa and .aws/credentials are unreadable; the rest of HOME reads", async () => {
  const run = await sandboxed('cat ~/.ssh/id_rsa; cat ~/.aws/credentials; ls -A ~/.ssh | wc -l; cat ~/notes.txt')
  expect(run.stdout).not.toContain('PRIVATE KEY')
  expect(run.stdout).not.toContain('AWS SECRET')
  expect(run.stdout).toBe('0\nplain notes\n')
  expect(run.stderr).toContain('No such file or directory')
})

test('a configured denyRead file is masked too, also inside a writable root', async () => {
  writeFileSync(join(root, '.env'), 'TOKEN=abc\n')
  const run = await sandboxed(
    'cat .env; echo "[$(cat .env)]"',
    policy({ hidden: hiddenPaths([join(root, '.env'), join(home, '.ssh')]) }),
  )
  expect(run.stdout).toBe('[]\n')
  expect(readFileSync(join(root, '.env'), 'utf8')).toBe('TOKEN=abc\n')
})

test('a mask inside a masked directory is dropped unless inside what it keeps (then mounted after it); all stays hidden', async () => {
  const store = join(root, 'store')
  for (const name of ['own', 'other-1', 'other-2']) {
    mkdirSync(join(store, name), { recursive: true })
    writeFileSync(join(store, name, 'saved.txt'), `SAVED-${name}\n`)
  }
  mkdirSync(join(store, 'own', 'deny'))
  writeFileSync(join(store, 'own', 'deny', 'x.txt'), 'DENIED\n')
  const hidden = withoutCovered([
    ...hiddenPaths([join(store, 'other-1'), join(store, 'other-2'), join(store, 'own', 'deny')]),
    { path: store, kind: 'dir', keep: [join(store, 'own')] },
  ])
  // The two other directories are under the store's mask; the one inside what it keeps is not, and comes after it.
  expect(hidden.map((item) => item.path)).toEqual([store, join(store, 'own', 'deny')])
  const run = await sandboxed(`cat ${store}/*/saved.txt ${store}/own/deny/x.txt 2>/dev/null; true`, policy({ hidden }))
  expect(run.stdout).toBe('SAVED-own\n')
})

test('the private /tmp is the host dir given, not the host /tmp, and it persists between commands', async () => {
  await sandboxed('echo kept > /tmp/state')
  expect(readFileSync(join(tmp, 'state'), 'utf8')).toBe('kept\n')
  const marker = mkdtempSync('/tmp/dsh-sandbox-host-tmp-')
  try {
    const run = await sandboxed(`cat /tmp/state; ls /tmp`)
    expect(run.stdout).toBe('kept\nstate\n')
  } finally {
    rmSync(marker, { recursive: true })
  }
})

test('no network by default: a TCP listener on the host loopback is unreachable; network "host" reaches it', async () => {
  const server: Server = createServer((socket) => socket.end('hello from host\n'))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  try {
    const probe = `exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3 || echo unreachable`
    const none = await sandboxed(probe)
    expect(none.stdout).toBe('unreachable\n')
    const host = await sandboxed(probe, policy({ network: 'host' }))
    expect(host.stdout).toBe('hello from host\n')
  } finally {
    await new Promise((resolve) => server.close(resolve))
  }
})

test('its own PID namespace: /proc shows no host process, so no host environ can be read', async () => {
  const run = await sandboxed(
    `ls /proc | grep -E '^[0-9]+$' | sort -n | tr '\\n' ' '; echo; cat /proc/${process.pid}/environ 2>&1 | head -c 80`,
  )
  const [pids, environ] = run.stdout.split('\n')
  // bwrap's init (1), the shell (2) and its children (ls, grep, sort…): all small numbers of the new namespace.
  expect(
    pids!
      .trim()
      .split(' ')
      .map(Number)
      .every((pid) => pid < 20),
  ).toBe(true)
  expect(environ).toContain('No such file or directory')
})

test('the command runs in the workdir given', async () => {
  mkdirSync(join(root, 'sub'))
  expect((await sandboxed('pwd', policy(), join(root, 'sub'))).stdout).toBe(`${join(root, 'sub')}\n`)
})

test('the same argv confines an unprivileged user (run as nobody through setpriv when the tests run as root)', async () => {
  const asRoot = process.getuid?.() === 0
  chmodSync(base, 0o755)
  chmodSync(root, 0o777)
  const argv = [
    ...bwrapArgs(policy({ hidden: [] }), root),
    '--',
    'bash',
    '-c',
    '--',
    `id -u; echo mine > ${root}/by-user; touch /etc/dsh-x 2>&1; touch ${outside}/x 2>&1`,
  ]
  const [program, ...args] = asRoot
    ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', 'bwrap', ...argv]
    : ['bwrap', ...argv]
  const run = await new Promise<string>((resolve, reject) => {
    const child = spawn(program!, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.on('data', (chunk) => {
      out += chunk
    })
    child.stderr.on('data', (chunk) => {
      out += chunk
    })
    child.on('error', reject)
    child.on('close', () => resolve(out))
  })
  const lines = run.trim().split('\n')
  expect(Number(lines[0])).not.toBe(0)
  expect(readFileSync(join(root, 'by-user'), 'utf8')).toBe('mine\n')
  expect(lines.slice(1).every((line) => line.includes('Read-only file system'))).toBe(true)
  expect(lines).toHaveLength(3)
})
