import { spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { processesWith } from '@deepseek-ai/dsh-testing'

/** The folder the pinned agent CLIs are installed into (tests/clients/setup.ts). */
export const PINNED_DIR = join(dirname(fileURLToPath(import.meta.url)), 'pinned')
/** Written after a complete install: the pin list it installed, so a changed list installs again. */
export const MARKER = join(PINNED_DIR, 'node_modules', '.dsh-pinned.json')

export type AgentCli = 'claude' | 'codex' | 'gemini' | 'opencode'

/** The pin list as the marker records it. */
export function pinList(): string {
  return JSON.stringify(
    (JSON.parse(readFileSync(join(PINNED_DIR, 'package.json'), 'utf8')) as { dependencies: unknown }).dependencies,
  )
}

export function installed(): boolean {
  return existsSync(MARKER) && readFileSync(MARKER, 'utf8') === pinList()
}

/** The command of a pinned agent CLI; throws, naming the install, when the global setup did not install it. */
export function agentCli(name: AgentCli): string {
  const bin = join(PINNED_DIR, 'node_modules', '.bin', name)
  if (!installed() || !existsSync(bin)) {
    throw new Error(
      `${name} is not installed in ${PINNED_DIR}: vitest's global setup (tests/clients/setup.ts) installs the pinned CLIs with npm on first use; see its output`,
    )
  }
  return bin
}

/**
 * Starts a stand-in model server on 127.0.0.1, on a free port. `close` ends open connections too: a CLI may keep
 * one alive after its last request.
 */
export async function listenOnLoopback(server: Server): Promise<{ port: number; close: () => Promise<void> }> {
  await new Promise<void>((listening, fail) => {
    server.once('error', fail)
    server.listen(0, '127.0.0.1', () => listening())
  })
  const { port } = server.address() as AddressInfo
  const close = () =>
    new Promise<void>((closed) => {
      server.closeAllConnections()
      server.close(() => closed())
    })
  return { port, close }
}

/** How an agent CLI's run ended, and what it printed. */
export interface CliRun {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

/** A hang guard, not a speed check: below the client tests' 120 s timeout, so a hung CLI fails its own test. */
export const CLI_RUN_BOUND_MS = 100_000

/**
 * Runs an agent CLI in `cwd` with exactly `env`, in a process group of its own (it starts dsh mcp, and some
 * relaunch themselves, as children); resolves when it exited. A run still going after CLI_RUN_BOUND_MS is killed
 * with its whole group, and resolves with that signal.
 */
export function runCli(
  bin: string,
  args: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<CliRun> {
  return new Promise((done, fail) => {
    const child = spawn(bin, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    })
    const guard = setTimeout(() => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL')
      } catch {
        // the group ended meanwhile
      }
    }, CLI_RUN_BOUND_MS)
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk
    })
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk
    })
    child.on('error', (error) => {
      clearTimeout(guard)
      fail(error)
    })
    child.on('close', (code, signal) => {
      clearTimeout(guard)
      done({ code, signal, stdout, stderr })
    })
  })
}

/** After a test: SIGKILL whatever still runs with `marker` (a fixture's temp dir) in its command line. */
export function killLeftovers(marker: string): void {
  for (const pid of processesWith(marker)) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // it exited meanwhile
    }
  }
}
