import { existsSync, readFileSync } from 'node:fs'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The folder the pinned agent CLIs are installed into (tests/clients/setup.ts). */
export const PINNED_DIR = join(dirname(fileURLToPath(import.meta.url)), 'pinned')
/** Written after a complete install: the pin list it installed, so a changed list installs again. */
export const MARKER = join(PINNED_DIR, 'node_modules', '.dsh-pinned.json')

export type AgentCli = 'claude' | 'codex' | 'gemini' | 'opencode'

/** The pin list as the marker records it. */
export function pinList(): string {
  return JSON.stringify((JSON.parse(readFileSync(join(PINNED_DIR, 'package.json'), 'utf8')) as { dependencies: unknown }).dependencies)
}

export function installed(): boolean {
  return existsSync(MARKER) && readFileSync(MARKER, 'utf8') === pinList()
}

/** The command of a pinned agent CLI; throws, naming the install, when the global setup did not install it. */
export function agentCli(name: AgentCli): string {
  const bin = join(PINNED_DIR, 'node_modules', '.bin', name)
  if (!installed() || !existsSync(bin)) {
    throw new Error(`${name} is not installed in ${PINNED_DIR}: vitest's global setup (tests/clients/setup.ts) installs the pinned CLIs with npm on first use; see its output`)
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
  const close = () => new Promise<void>((closed) => {
    server.closeAllConnections()
    server.close(() => closed())
  })
  return { port, close }
}
