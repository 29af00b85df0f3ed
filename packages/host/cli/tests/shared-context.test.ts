import { afterEach, describe, expect, test } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { connect, type McpConnection } from '@deepseek-ai/dsh-mcp'
import { createDefaultContext, type DefaultContext } from '../src/index.ts'
import { processesWith, uniqueSleep, until, workspace } from './helpers.ts'

/** Several MCP connections served by one process on one default composition (the library case). */

let host: DefaultContext | undefined
let ws: ReturnType<typeof workspace> | undefined
afterEach(async () => {
  await host?.dispose()
  ws?.cleanup()
  host = ws = undefined
})

async function open(cwd: string): Promise<{ client: Client; connection: McpConnection }> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  const connection = await connect(host!.ctx, serverSide, { cwd })
  const client = new Client({ name: 'test', version: '1.0.0' })
  await client.connect(clientSide)
  return { client, connection }
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult
}

const text = (result: CallToolResult) => (result.content[0]?.type === 'text' ? result.content[0].text : '')

describe('connections sharing one context', () => {
  test("one session cannot read or kill another session's background task", async () => {
    host = await createDefaultContext()
    ws = workspace({ 'a.txt': 'a\n' })
    const [a, b] = [await open(ws.dir), await open(ws.dir)]
    const sleep = uniqueSleep()
    expect(
      text(await call(a.client, 'bash', { command: sleep.command, description: 'a task', run_in_background: true })),
    ).toMatch(/^started background task bash-1/)
    for (const tool of ['bash_output', 'bash_kill']) {
      const foreign = await call(b.client, tool, { task_id: 'bash-1' })
      // Another session's task is simply unknown here: ids count per session, and nothing says the id is in use.
      expect(foreign).toMatchObject({ isError: true, _meta: { 'dsh/error': { code: 'BASH_UNKNOWN_TASK' } } })
      expect(text(foreign)).not.toContain('another session')
    }
    expect(text(await call(a.client, 'bash_kill', { task_id: 'bash-1' }))).toBe('killed background task bash-1')
    await a.client.close()
    await b.client.close()
  })

  test("a connection that closes kills its own session's background tasks, and only those", async () => {
    host = await createDefaultContext()
    ws = workspace({ 'a.txt': 'a\n' })
    const [a, b] = [await open(ws.dir), await open(ws.dir)]
    const [sleepA, sleepB] = [uniqueSleep(), uniqueSleep()]
    await call(a.client, 'bash', { command: sleepA.command, description: 'a task', run_in_background: true })
    await call(b.client, 'bash', { command: sleepB.command, description: 'b task', run_in_background: true })
    await until(
      () => processesWith(sleepA.marker).length > 0 && processesWith(sleepB.marker).length > 0,
      'both sleeps to start',
    )
    await a.client.close()
    await a.connection.closed
    expect(processesWith(sleepA.marker)).toEqual([])
    expect(processesWith(sleepB.marker).length).toBeGreaterThan(0)
    expect(text(await call(b.client, 'bash_output', { task_id: 'bash-1' }))).toBe('(no new output)\n[status: running]')
    await b.client.close()
    await b.connection.closed
    expect(processesWith(sleepB.marker)).toEqual([])
  })
})
