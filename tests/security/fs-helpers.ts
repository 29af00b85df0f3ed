import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { ListRootsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { BIN } from '../../packages/host/cli/tests/helpers.ts'

export { BIN, dsh } from '../../packages/host/cli/tests/helpers.ts'

/**
 * A fake HOME with fake secrets (every one holds "CANARY"), and a project inside it. Under /var/tmp: inside the
 * sandbox the host's /tmp is a private one. The dsh under test gets `HOME` = this home; the real one is never used.
 */
export interface FakeHome {
  readonly base: string
  readonly home: string
  readonly work: string
  /** Outside every root, not hidden: a plain file a link may lead to. */
  readonly outside: string
  readonly env: NodeJS.ProcessEnv
  cleanup(): void
}

export const SECRETS: Record<string, string> = {
  '.ssh/id_rsa': 'CANARY-SSH-KEY\n',
  '.aws/credentials': 'aws_secret_access_key = CANARY-AWS\n',
  '.config/gh/hosts.yml': 'oauth_token: CANARY-GH\n',
  '.claude/.credentials.json': '{"token":"CANARY-CLAUDE"}\n',
  '.codex/auth.json': '{"token":"CANARY-CODEX"}\n',
  '.cargo/credentials.toml': 'token = "CANARY-CARGO"\n',
  '.pgpass': 'db:5432:*:me:CANARY-PG\n',
  '.config/git/credentials': 'https://me:CANARY-GIT@example.com\n',
}

export function fakeHome(files: Record<string, string> = {}): FakeHome {
  const base = realpathSync(mkdtempSync('/var/tmp/dsh-security-'))
  const home = join(base, 'home')
  const work = join(home, 'proj')
  const outside = join(base, 'outside')
  const all: Record<string, string> = {
    ...Object.fromEntries(Object.entries(SECRETS).map(([path, text]) => [join(home, path), text])),
    [join(home, '.bashrc')]: '# rc\n',
    [join(work, 'inside.txt')]: 'inside ok\n',
    [join(work, 'src/a.ts')]: 'export const a = 1\n',
    [join(outside, 'secret.txt')]: 'CANARY-OUTSIDE\n',
    ...Object.fromEntries(Object.entries(files).map(([path, text]) => [join(base, path), text])),
  }
  for (const [path, text] of Object.entries(all)) {
    mkdirSync(dirname(path), { recursive: true })
    writeFileSync(path, text)
  }
  chmodSync(join(home, '.ssh'), 0o700)
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home }
  return { base, home, work, outside, env, cleanup: () => rmSync(base, { recursive: true, force: true }) }
}

export interface Called {
  readonly text: string
  readonly isError: boolean
  readonly code: string | undefined
}

export interface McpSession {
  call(tool: string, args: Record<string, unknown>): Promise<Called>
  close(): Promise<void>
}

export function called(result: unknown): Called {
  const value = result as CallToolResult
  const first = value.content[0] as { text?: string } | undefined
  const meta = value._meta?.['dsh/error'] as { code?: string } | undefined
  return { text: first?.text ?? '', isError: value.isError === true, code: meta?.code }
}

/** `dsh mcp <args>` over stdio, as a client without roots (the session cwd is `--cwd`). */
export async function mcp(args: readonly string[], home: FakeHome, roots?: readonly string[]): Promise<McpSession> {
  const client = new Client({ name: 'security', version: '1.0.0' }, roots ? { capabilities: { roots: {} } } : {})
  if (roots) client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: roots.map((uri) => ({ uri })) }))
  const env = Object.fromEntries(
    Object.entries(home.env).filter((entry): entry is [string, string] => entry[1] !== undefined),
  )
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp', ...args],
      env,
      cwd: home.work,
      stderr: 'ignore',
    }),
  )
  return {
    call: async (tool, callArgs) =>
      called(await client.callTool({ name: tool, arguments: callArgs }, undefined, { timeout: 60_000 })),
    close: () => client.close(),
  }
}
