import { afterAll, beforeAll, expect, test } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { processRuns } from '@deepseek-ai/dsh-subprocess'
import { BIN, processesWith, temp, uniqueSleep, until, type Temp } from './helpers.ts'

let ws: Temp
beforeAll(() => {
  const files: Record<string, string> = {}
  for (let i = 0; i < 10; i++) files[`src/f${i}.ts`] = `export const v${i} = ${i}\n`
  ws = temp('mcp', files)
}, 120_000)
afterAll(() => ws?.cleanup())

async function connect(): Promise<{ client: Client; pid: number }> {
  const client = new Client({ name: 'dsh-reliability', version: '1.0.0' })
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp', '--cwd', ws.dir],
    stderr: 'pipe',
  })
  await client.connect(transport)
  return { client, pid: transport.pid! }
}

/** Call `i` of a burst, with the text it must return: each answer is checked against its own question. */
function call(i: number): { name: string; args: Record<string, unknown>; expect: (text: string) => void } {
  switch (i % 5) {
    case 0:
      return {
        name: 'bash',
        args: { command: `echo call-${i}`, description: 'echo' },
        expect: (t) => expect(t).toBe(`call-${i}`),
      }
    case 1:
      return {
        name: 'read',
        args: { path: `src/f${i % 10}.ts` },
        expect: (t) => expect(t).toContain(`export const v${i % 10} = ${i % 10}`),
      }
    case 2:
      return {
        name: 'grep',
        args: { pattern: `v${i % 10} =` },
        expect: (t) => expect(t).toContain(`src/f${i % 10}.ts`),
      }
    case 3:
      return {
        name: 'glob',
        args: { pattern: '*.ts', path: 'src' },
        expect: (t) => expect(t.split('\n')).toHaveLength(10),
      }
    default:
      return { name: 'read', args: { path: 'missing' }, expect: (t) => expect(t).toMatch(/^Error: file not found/) }
  }
}

async function burst(client: Client, count: number, offset = 0): Promise<void> {
  const calls = Array.from({ length: count }, (_, i) => call(i + offset))
  const results = await Promise.all(
    calls.map((c) => client.callTool({ name: c.name, arguments: c.args }) as Promise<CallToolResult>),
  )
  results.forEach((result, i) => {
    const block = result.content[0]
    calls[i]!.expect(block?.type === 'text' ? block.text : '')
  })
}

test('50 concurrent calls over one MCP connection each get their own answer; closing leaves no process', async () => {
  const { client, pid } = await connect()
  const { command, marker } = uniqueSleep()
  await client.callTool({ name: 'bash', arguments: { command, description: 'bg', run_in_background: true } })
  await burst(client, 50)
  await until(() => processesWith(marker).length === 1, 'the background sleep runs')
  await client.close()
  await until(() => !processRuns(pid) && processesWith(marker).length === 0, 'the server and its task are gone')
}, 60_000)

test('two MCP clients hammering at once: every answer correct, then both close cleanly', async () => {
  const [a, b] = await Promise.all([connect(), connect()])
  // A background task in each server: if a server died instead of disposing, its sleep would survive it.
  const { command, marker } = uniqueSleep()
  await Promise.all(
    [a, b].map(({ client }) =>
      client.callTool({ name: 'bash', arguments: { command, description: 'bg', run_in_background: true } }),
    ),
  )
  await Promise.all(
    [a, b].map(async ({ client }, n) => {
      for (let round = 0; round < 4; round++) await burst(client, 50, n * 1000 + round * 50)
    }),
  )
  expect(processesWith(marker)).toHaveLength(2)
  await Promise.all([a.client.close(), b.client.close()])
  await until(
    () => !processRuns(a.pid) && !processRuns(b.pid) && processesWith(marker).length === 0,
    'both servers and their tasks are gone',
  )
}, 90_000)
