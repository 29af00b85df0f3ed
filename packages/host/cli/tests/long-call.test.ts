import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { BIN, dsh, processesWith, uniqueSleep, workspace } from './helpers.ts'

/**
 * docs/seams.md#tasks: a long foreground command is never lost to a client's request timeout. The official MCP SDK's client
 * gives a request 60 s unless told otherwise; these clients keep that default.
 */
let ws: ReturnType<typeof workspace>
const clients: Client[] = []

beforeAll(() => {
  ws = workspace({ 'README.md': 'fixture\n' })
})

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()))
})

afterAll(() => ws?.cleanup())

async function server(args: string[] = []): Promise<Client> {
  const client = new Client({ name: 'dsh-long-call-test', version: '1.0.0' })
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp', '--cwd', ws.dir, ...args],
      stderr: 'pipe',
    }),
  )
  clients.push(client)
  return client
}

/** One call with the SDK's default request options (60 s timeout, no progress). */
async function text(client: Client, name: string, args: Record<string, unknown>): Promise<string> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult
  const block = result.content[0]
  expect(result.isError, block?.type === 'text' ? block.text : '').toBeFalsy()
  return block?.type === 'text' ? block.text : ''
}

/** Waits for `pattern` in a task's output with calls that each stay under the client's request timeout. */
async function waitFor(client: Client, taskId: string, pattern: string): Promise<string> {
  let seen = ''
  for (let round = 0; round < 10; round++) {
    const read = await text(client, 'bash_output', { task_id: taskId, wait_for: pattern, timeout_ms: 40_000 })
    seen += read
    if (read.includes('[wait_for matched]') || !read.includes('[status: running]')) return seen
  }
  return seen
}

function configFile(config: unknown): string {
  const path = join(ws.dir, `config-${Math.random().toString(36).slice(2)}.json`)
  writeFileSync(path, JSON.stringify(config))
  return path
}

test('over MCP, a foreground bash call still running after backgroundAfterMs returns as a task; wait_for reaches its end', async () => {
  const client = await server(['--config', configFile({ 'tool-bash': { backgroundAfterMs: 2000 } })])
  const first = await text(client, 'bash', {
    command: 'echo started; sleep 5; echo done',
    description: 'a long command',
  })
  expect(first).toBe(
    'started\n[still running after 2000ms: it continues as background task bash-1. Wait for it with bash_output {"task_id":"bash-1","wait_for":"<regex for a line it prints>"} (or timeout_ms alone to wait for its end); bash_kill stops it]',
  )
  expect(await waitFor(client, 'bash-1', '^done$')).toMatch(/^done\n\[wait_for matched\]/)
})

test('an explicit timeoutMs still kills, and no process is left', async () => {
  const sleep = uniqueSleep()
  const client = await server(['--config', configFile({ 'tool-bash': { backgroundAfterMs: 200 } })])
  expect(await text(client, 'bash', { command: sleep.command, description: 'sleep', timeoutMs: 1500 })).toMatch(
    /\[timed out after 1500ms\]\n\[killed by signal: SIGTERM\]$/,
  )
  expect(processesWith(sleep.marker)).toEqual([])
})

test('dsh call keeps every command in the foreground, whatever backgroundAfterMs says', async () => {
  const run = await dsh([
    'call',
    'bash',
    JSON.stringify({ command: 'sleep 2; echo done', description: 'wait' }),
    '--cwd',
    ws.dir,
    '--config',
    configFile({ 'tool-bash': { backgroundAfterMs: 300 } }),
  ])
  expect(run.stdout).toBe('done\n')
  expect(run.code).toBe(0)
})

test("with the defaults, an SDK client runs a 90 s command to its end: the call returns within the client's 60 s as a task, wait_for reaches its last line", async () => {
  const client = await server()
  const first = await text(client, 'bash', {
    command: "echo building; sleep 90; echo 'all 90 s done'",
    description: 'a 90 s build',
  })
  expect(first).toMatch(/^building\n\[still running after 45000ms: it continues as background task bash-1\. /)
  expect(await waitFor(client, 'bash-1', 'all 90 s done')).toMatch(/all 90 s done\n\[wait_for matched\]/)
}, 180_000)
