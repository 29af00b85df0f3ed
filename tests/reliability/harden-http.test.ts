import { connect as connectSocket } from 'node:net'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { serveHttp, type McpHttpServer } from '@deepseek-ai/dsh-mcp'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { host, processesWith, temp, uniqueSleep, until, type Temp } from './helpers.ts'

/*
 * Issue 33 row 5 (docs/security.md#boundary): an HTTP server under load keeps a bounded number of sessions, ends idle ones (their
 * tasks with them) and closes sockets that never send a request head. Small limits here; the defaults are 64
 * sessions, 30 minutes and 10 s.
 */
const TOKEN = 'harden-http-token'
let ws: Temp
beforeAll(() => {
  ws = temp('harden-http')
})
afterAll(() => ws?.cleanup())

async function serve(limits: { maxSessions?: number; sessionIdleMs?: number; headersTimeoutMs?: number }) {
  const dsh = await host({ 'bash-local': { graceMs: 200 } })
  const server = await serveHttp(dsh.ctx, {
    token: TOKEN,
    cwd: ws.dir,
    serverInfo: { name: 'dsh', version: '0' },
    ...limits,
  })
  return { dsh, server }
}

async function client(server: McpHttpServer): Promise<Client> {
  const c = new Client({ name: 'harden', version: '0' })
  await c.connect(
    new StreamableHTTPClientTransport(new URL(server.url), {
      requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
    }),
  )
  return c
}

const initialize = (server: McpHttpServer) =>
  fetch(server.url, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${TOKEN}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
    }),
  })

test('past mcp.maxSessions the next initialize gets 503 with a coded error that says what to do', async () => {
  const { dsh, server } = await serve({ maxSessions: 2 })
  const clients: Client[] = []
  try {
    clients.push(await client(server), await client(server))
    expect(server.sessions()).toBe(2)
    const refused = await initialize(server)
    expect(refused.status).toBe(503)
    const body = (await refused.json()) as { error: { code: number; message: string } }
    expect(body.error.code).toBe(-32001)
    expect(body.error.message).toContain('2 MCP sessions are open, the most this server keeps (mcp.maxSessions)')
    expect(body.error.message).toContain('DELETE /mcp with its Mcp-Session-Id')
    // Ending one makes room.
    await clients.shift()?.close()
    await (clients[0]?.transport as StreamableHTTPClientTransport | undefined)?.terminateSession?.()
    await until(() => server.sessions() < 2, 'a session ended')
    expect((await initialize(server)).status).toBe(200)
  } finally {
    for (const c of clients) await c.close().catch(() => {})
    await server.close()
    await dsh.dispose()
  }
}, 60_000)

test('a session idle past mcp.sessionIdleMs ends, and its background task with it', async () => {
  const { dsh, server } = await serve({ sessionIdleMs: 300 })
  const c = await client(server)
  const sleep = uniqueSleep()
  try {
    const started = await c.callTool({
      name: 'bash',
      arguments: { command: sleep.command, description: 'task', run_in_background: true },
    })
    expect(JSON.stringify(started.content)).toMatch(/bash-\d+/)
    await until(() => processesWith(sleep.marker).length === 1, 'the task runs')
    await until(() => server.sessions() === 0, 'the idle session ended')
    await until(() => processesWith(sleep.marker).length === 0, "the session's task ended")
  } finally {
    for (const pid of processesWith(sleep.marker)) process.kill(pid, 'SIGKILL')
    await c.close().catch(() => {})
    await server.close()
    await dsh.dispose()
  }
}, 60_000)

test('a socket that never sends a request head is closed after headersTimeoutMs; an open session is kept', async () => {
  const { dsh, server } = await serve({ headersTimeoutMs: 300 })
  const c = await client(server)
  try {
    const silent = connectSocket(server.port, '127.0.0.1')
    const partial = connectSocket(server.port, '127.0.0.1', () => partial.write('POST /mcp HTTP/1.1\r\nHost: 127.0.0'))
    let closed = 0
    for (const socket of [silent, partial]) {
      socket.on('error', () => {})
      socket.on('close', () => {
        closed++
        console.log('CLOSED', socket === silent ? 'silent' : 'partial')
      })
    }
    await until(() => closed === 2, 'both sockets were closed by the server')
    expect(server.sessions()).toBe(1)
    expect((await c.listTools()).tools.length).toBeGreaterThan(0)
  } finally {
    await c.close().catch(() => {})
    await server.close()
    await dsh.dispose()
  }
}, 60_000)
