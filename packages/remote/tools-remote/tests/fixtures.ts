import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { installedDsh } from '../../../host/cli/tests/helpers.ts'

export { BIN, installedDsh } from '../../../host/cli/tests/helpers.ts'
export { processesWith, uniqueSleep, until } from '@deepseek-ai/dsh-testing'

/** A workspace every transport is checked against: the same files, mtimes pinned. */
export function workspace(): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-remote-ws-'))
  const files: Record<string, string> = {
    'a.txt': 'alpha\nbeta\n',
    'src/one.ts': 'export const one = 1 // TODO: two\n',
    'src/two.ts': 'export const two = 2\n',
    'notes/todo.md': '- TODO: write the docs\n',
  }
  let mtime = 1_700_000_000
  for (const [name, text] of Object.entries(files)) {
    const path = join(dir, name)
    mkdirSync(dirname(path), { recursive: true })
    writeFileSync(path, text)
    utimesSync(path, mtime, mtime++)
  }
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) }
}

/**
 * The remote side of every command transport: `dsh mcp` as a user installs it (the packed tarball, installed with
 * npm alone into a fresh prefix, once per test run), found on the PATH as the README's recipes run it. The PATH is
 * set in the command itself (`env PATH=…`): ssh runs it with the remote account's own PATH.
 */
export function dshMcpArgv(cwd: string): string[] {
  const { binDir } = installedDsh()
  return ['env', `PATH=${binDir}:${dirname(process.execPath)}:/usr/bin:/bin`, 'dsh', 'mcp', '--cwd', cwd]
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

export interface Sshd {
  port: number
  /** `ssh …` argv up to and including the destination; append the remote command's words. */
  ssh: string[]
  /** A string only this fixture's ssh client command lines contain (the client key's path). */
  clientMarker: string
  stop(): Promise<void>
}

/**
 * A real OpenSSH server on a free loopback port, with throwaway host and client keys in a temp dir and its own
 * config (root may log in with the key only). `-D -e`: it stays in the foreground, logs to stderr, and is
 * stopped by the test.
 */
export async function startSshd(): Promise<Sshd> {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-sshd-'))
  chmodSync(dir, 0o700)
  for (const name of ['host_key', 'client_key']) {
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', `dsh-test-${name}`, '-f', join(dir, name)])
  }
  copyFileSync(join(dir, 'client_key.pub'), join(dir, 'authorized_keys'))
  chmodSync(join(dir, 'authorized_keys'), 0o600)
  // sshd insists on its privilege-separation directory.
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 })
  let port = 0
  let child: ChildProcess | undefined
  for (let attempt = 0; attempt < 5 && !child; attempt++) {
    port = await freePort()
    writeFileSync(
      join(dir, 'sshd_config'),
      [
        `ListenAddress 127.0.0.1`,
        `Port ${port}`,
        `HostKey ${join(dir, 'host_key')}`,
        `PidFile ${join(dir, 'sshd.pid')}`,
        `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
        'PermitRootLogin prohibit-password',
        'PubkeyAuthentication yes',
        'PasswordAuthentication no',
        'KbdInteractiveAuthentication no',
        'UsePAM no',
        'StrictModes no',
        'AllowTcpForwarding no',
        'X11Forwarding no',
        'PrintMotd no',
        'LogLevel ERROR',
        '',
      ].join('\n'),
    )
    const started = spawn('/usr/sbin/sshd', ['-D', '-e', '-f', join(dir, 'sshd_config')], {
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    let stderr = ''
    started.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk
    })
    const ready = await probe(port, started)
    if (ready) child = started
    else if (!/Address already in use/.test(stderr)) throw new Error(`sshd did not start: ${stderr}`)
  }
  if (!child) throw new Error('sshd found no free port')
  const ssh = [
    'ssh',
    '-T',
    '-p',
    String(port),
    '-i',
    join(dir, 'client_key'),
    '-o',
    'StrictHostKeyChecking=no',
    '-o',
    `UserKnownHostsFile=${join(dir, 'known_hosts')}`,
    '-o',
    'BatchMode=yes',
    '-o',
    'LogLevel=ERROR',
    '-o',
    'IdentitiesOnly=yes',
    'root@127.0.0.1',
  ]
  const running = child
  return {
    port,
    ssh,
    clientMarker: join(dir, 'client_key'),
    async stop() {
      const exited = new Promise((resolve) => running.once('exit', resolve))
      running.kill('SIGTERM')
      await exited
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** True once something accepts connections on the port (bounded); false if sshd exited first. */
async function probe(port: number, child: ChildProcess): Promise<boolean> {
  const { connect } = await import('node:net')
  for (let turn = 0; turn < 500; turn++) {
    if (child.exitCode !== null) return false
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1')
      socket.once('connect', () => {
        socket.destroy()
        resolve(true)
      })
      socket.once('error', () => resolve(false))
    })
    if (open) return true
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return false
}

export interface HttpDsh {
  url: string
  token: string
  child: ChildProcess
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

/** The installed `dsh mcp --http` as a child on a free loopback port, its token in an env var named on the command line. */
export async function startHttpDsh(cwd: string, options: { port?: number; token?: string } = {}): Promise<HttpDsh> {
  const token = options.token ?? randomBytes(32).toString('hex')
  // The installed dsh, as on a remote host (its shim runs under the node on the PATH).
  const child = spawn(
    installedDsh().bin,
    ['mcp', '--http', '--port', String(options.port ?? 0), '--token-env', 'DSH_TEST_HTTP_TOKEN', '--cwd', cwd],
    {
      env: {
        ...process.env,
        PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
        DSH_TEST_HTTP_TOKEN: token,
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  )
  let stderr = ''
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  )
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk
      const match = /listening on (http:\/\/\S+)/.exec(stderr)
      if (match) resolve(match[1]!)
    })
    void exited.then(() => reject(new Error(`dsh mcp --http exited before listening: ${stderr}`)))
  })
  return {
    url,
    token,
    child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      return exited
    },
  }
}

/**
 * The same tool checks for every transport: each entry is one call, compared as `{ text, isError, code }` with
 * the in-process result in the same workspace.
 */
export const SUITE: readonly [string, Record<string, unknown>][] = [
  ['read', { path: 'a.txt' }],
  ['read', { path: 'missing.txt' }],
  ['read', { path: 'src' }],
  ['glob', { pattern: '**/*.ts' }],
  ['glob', { pattern: '*.nothing' }],
  ['grep', { pattern: 'TODO' }],
  ['grep', { pattern: 'TODO', include: '*.md' }],
  ['grep', { pattern: '(' }],
  ['bash', { command: 'echo out; echo err >&2; exit 3', description: 'Mixed streams' }],
  ['bash', { command: 'pwd', description: 'Where' }],
  ['bash_output', { task_id: 'bash-999' }],
  ['read', { path: 'a.txt', limt: 3 }],
  ['nope', {}],
]
