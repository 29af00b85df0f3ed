export { processesWith, uniqueSleep, until } from '@deepseek-ai/dsh-testing'
import { withBuildLock } from '@deepseek-ai/dsh-testing'
import { execFileSync, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..')
/** The shipped `dsh`: the bundle that `npm run build` (and `ensureBuilt`) makes of the built packages. */
export const BIN = join(ROOT, 'packages/host/cli/dist/dsh.cjs')

/** Builds the `dsh` command (and what it references, then the bundle), under the tests' build lock. */
export function ensureBuilt(): void {
  withBuildLock(() => {
    try {
      execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-b', 'packages/host/cli'], { cwd: ROOT, stdio: 'pipe' })
      execFileSync(process.execPath, [join(ROOT, 'packages/host/cli/scripts/bundle.mjs')], { cwd: ROOT, stdio: 'pipe' })
    } catch (error) {
      const { stdout, stderr } = error as { stdout?: Buffer; stderr?: Buffer }
      throw new Error(`building dsh (tsc -b packages/host/cli, then the bundle) failed:\n${stdout?.toString() ?? ''}${stderr?.toString() ?? ''}`)
    }
  })
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
export function dsh(args: readonly string[], options: { cwd?: string; input?: string; stdinFile?: string; env?: NodeJS.ProcessEnv; nodeArgs?: readonly string[]; bin?: string } = {}): Promise<Run> {
  return new Promise((done, fail) => {
    const argv = [...(options.nodeArgs ?? []), options.bin ?? BIN, ...args]
    // stdinFile: the child reads that file (a device such as /dev/zero, say) as its stdin.
    const stdin = options.stdinFile === undefined ? 'pipe' : openSync(options.stdinFile, 'r')
    const child = spawn(process.execPath, argv, { cwd: options.cwd ?? ROOT, env: options.env ?? process.env, stdio: [stdin, 'pipe', 'pipe'] })
    if (typeof stdin === 'number') closeSync(stdin)
    let stdout = ''
    let stderr = ''
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk })
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
    child.on('error', fail)
    child.on('close', (code, signal) => done({ code, signal, stdout, stderr }))
    child.stdin?.end(options.input ?? '')
  })
}

/** Starts the built `dsh` without waiting for it (for signals). */
export function startDsh(args: readonly string[], options: { cwd?: string; env?: Record<string, string> } = {}): { child: ChildProcessWithoutNullStreams; exited: Promise<Run> } {
  const env = options.env ? { ...process.env, ...options.env } : process.env
  const child = spawn(process.execPath, [BIN, ...args], { cwd: options.cwd ?? ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
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
      for (let message = this.buffer.readMessage(); message; message = this.buffer.readMessage()) this.onmessage?.(message)
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
