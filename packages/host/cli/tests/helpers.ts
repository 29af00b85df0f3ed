export { processesWith, uniqueSleep, until } from '@deepseek-ai/dsh-testing'
import { withLock } from '@deepseek-ai/dsh-testing'
import { inject } from 'vitest'
import { execFileSync, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..')
/**
 * The shipped `dsh`: the bundle that `npm run build` makes of the built packages. No test file builds: `npm test`
 * builds first, and vitest's global setup (tests/build-once.ts) builds a tree changed since its last build.
 */
export const BIN = join(ROOT, 'packages/host/cli/dist/dsh.cjs')

/** Where installedDsh puts the packed package: an npm prefix, so `<prefix>/bin/dsh` is what lands on the PATH. */
export interface Installed {
  /** The packed tarball (scripts/pack.mjs). */
  tarball: string
  prefix: string
  /** `<prefix>/bin`: put it on the PATH and `dsh` is the installed one. */
  binDir: string
  /** `<prefix>/bin/dsh`, npm's link to the installed package's shim (run it directly: `#!/usr/bin/env node`). */
  bin: string
  /** The tarball's size in bytes and how long `npm install -g` of it took (ms). */
  tarballBytes: number
  installMs: number
}

/**
 * The built `dsh` as a user gets it: packed with `npm pack` of this package (scripts/pack.mjs, no build) and installed
 * with `npm install -g --prefix <fresh empty dir> <tarball>`, npm alone, once per test run (the first test file to
 * ask does it; the others wait for it under a lock in the run's directory).
 */
export function installedDsh(): Installed {
  const run = inject('dshRun')
  const prefix = join(run, 'prefix')
  const facts = join(run, 'installed.json')
  withLock(join(run, 'install.lock'), () => {
    if (existsSync(facts)) return
    // Into the run's own directory: two test runs of one checkout never write the same tarball.
    const packed = execFileSync(process.execPath, [join(ROOT, 'packages/host/cli/scripts/pack.mjs'), run], {
      cwd: ROOT,
      encoding: 'utf8',
    })
    const tarball = packed.trimEnd().split('\n').at(-1)!
    mkdirSync(prefix)
    const started = performance.now()
    // From another directory than the checkout: npm must not see this workspace, only the tarball and the registry.
    execFileSync(
      'npm',
      ['install', '-g', '--prefix', prefix, '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', tarball],
      { cwd: run, stdio: 'pipe' },
    )
    const installMs = Math.round(performance.now() - started)
    const installed: Installed = {
      tarball,
      prefix,
      binDir: join(prefix, 'bin'),
      bin: join(prefix, 'bin', 'dsh'),
      tarballBytes: statSync(tarball).size,
      installMs,
    }
    writeFileSync(facts, JSON.stringify(installed))
  })
  return JSON.parse(readFileSync(facts, 'utf8')) as Installed
}

export interface Run {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

/**
 * Runs the built `dsh` (or another copy of it, `bin`) with `args`, Node's own flags before it (`nodeArgs`);
 * resolves when it exited.
 */
export function dsh(
  args: readonly string[],
  options: {
    cwd?: string
    input?: string
    stdinFile?: string
    env?: NodeJS.ProcessEnv
    nodeArgs?: readonly string[]
    bin?: string
  } = {},
): Promise<Run> {
  return new Promise((done, fail) => {
    const argv = [...(options.nodeArgs ?? []), options.bin ?? BIN, ...args]
    // stdinFile: the child reads that file (a device such as /dev/zero, say) as its stdin.
    const stdin = options.stdinFile === undefined ? 'pipe' : openSync(options.stdinFile, 'r')
    const child = spawn(process.execPath, argv, {
      cwd: options.cwd ?? ROOT,
      env: options.env ?? process.env,
      stdio: [stdin, 'pipe', 'pipe'],
    })
    if (typeof stdin === 'number') closeSync(stdin)
    let stdout = ''
    let stderr = ''
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk
    })
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk
    })
    child.on('error', fail)
    child.on('close', (code, signal) => done({ code, signal, stdout, stderr }))
    child.stdin?.end(options.input ?? '')
  })
}

/** Starts the built `dsh` without waiting for it (for signals). */
export function startDsh(
  args: readonly string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): { child: ChildProcessWithoutNullStreams; exited: Promise<Run> } {
  const env = options.env ? { ...process.env, ...options.env } : process.env
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: options.cwd ?? ROOT,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk
  })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
  })
  const exited = new Promise<Run>((done) => child.on('close', (code, signal) => done({ code, signal, stdout, stderr })))
  return { child, exited }
}

/** A temp directory with files (mtimes pinned one second apart, in the given order); remove with `cleanup`. */
export function workspace(files: Record<string, string>): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-host-test-'))
  let mtime = 1_700_000_000
  for (const [path, content] of Object.entries(files)) {
    const full = join(dir, path)
    mkdirSync(dirname(full), { recursive: true })
    writeFileSync(full, content)
    utimesSync(full, mtime, mtime)
    mtime++
  }
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) }
}

/**
 * Whether process `pid` has started reading its stdin pipe: Node's event loop switches fd 0 to non-blocking
 * (O_NONBLOCK, octal 04000, in /proc/<pid>/fdinfo/0) when `process.stdin` is first read.
 */
export function readsStdin(pid: number): boolean {
  try {
    const flags = /^flags:\s*([0-7]+)$/m.exec(readFileSync(`/proc/${pid}/fdinfo/0`, 'utf8'))?.[1]
    return flags !== undefined && (parseInt(flags, 8) & 0o4000) !== 0
  } catch {
    return false
  }
}

/**
 * An MCP client transport over a `dsh mcp` child that the test owns, so it can end stdin, send signals and read
 * the exit status (the SDK's StdioClientTransport hides the child and escalates to signals on close).
 */
export class ChildTransport implements Transport {
  readonly child: ChildProcessWithoutNullStreams
  readonly exited: Promise<Run>
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void
  private readonly buffer = new ReadBuffer()

  constructor(args: readonly string[], options: { cwd?: string } = {}) {
    const started = startDsh(args, options)
    this.child = started.child
    this.exited = started.exited
  }

  async start(): Promise<void> {
    this.child.stdout.removeAllListeners('data')
    this.child.stdout.setEncoding('utf8')
    let stdout = ''
    this.child.stdout.on('data', (chunk: string) => {
      stdout += chunk
      this.buffer.append(Buffer.from(chunk))
      for (let message = this.buffer.readMessage(); message; message = this.buffer.readMessage())
        this.onmessage?.(message)
    })
    void this.exited.then((run) => {
      run.stdout = stdout
      this.onclose?.()
    })
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((done) => {
      if (this.child.stdin.write(serializeMessage(message))) done()
      else this.child.stdin.once('drain', done)
    })
  }

  /** Ends the server's stdin: the client went away. */
  async close(): Promise<void> {
    this.child.stdin.end()
  }
}
