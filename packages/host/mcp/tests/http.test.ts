import { afterEach, describe, expect, test } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { createTestContext, rejection, type TestContext } from '@deepseek-ai/dsh-testing'
import { serveHttp, type McpHttpServer } from '../src/index.ts'
import { allowedHostHeaders, refusal } from '../src/http.ts'

const TOKEN = 'correct-horse-battery-staple'

interface Probe {
  calls: number
  waiting: boolean
  aborted: Promise<unknown>
}

function tools(t: TestContext): Probe {
  let sawAbort!: (reason: unknown) => void
  const probe: Probe = {
    calls: 0,
    waiting: false,
    aborted: new Promise((resolve) => {
      sawAbort = resolve
    }),
  }
  t.ctx.tools.register({
    name: 'touch',
    description: 'Counts its calls.',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    execute: () => `call ${++probe.calls}`,
  })
  t.ctx.tools.register({
    name: 'where',
    description: 'Says which session it runs in.',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    execute: (_args, exec) => exec.session?.id ?? 'none',
  })
  t.ctx.tools.register({
    name: 'wait_for_abort',
    description: 'Runs until its call is aborted.',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    execute: (_args, exec) =>
      new Promise<string>((resolve) => {
        probe.waiting = true
        exec.signal.addEventListener(
          'abort',
          () => {
            sawAbort(exec.signal.reason)
            resolve('stopped')
          },
          { once: true },
        )
      }),
  })
  return probe
}

let t: TestContext | undefined
let server: McpHttpServer | undefined
const clients: Client[] = []
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close().catch(() => {})))
  await server?.close()
  server = undefined
  await t?.dispose()
  t = undefined
})

async function client(
  url: string,
  token = TOKEN,
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  })
  const made = new Client({ name: 'test', version: '1.0.0' })
  clients.push(made)
  await made.connect(transport)
  return { client: made, transport }
}

const text = (result: unknown) => ((result as CallToolResult).content[0] as { text: string }).text

/** One raw POST: full control of the headers a client sends. */
async function post(
  url: string,
  headers: Record<string, string>,
  body: unknown = { jsonrpc: '2.0', id: 1, method: 'ping' },
) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  })
  return { status: response.status, headers: response.headers, body: await response.text() }
}

describe('dsh mcp over Streamable HTTP', () => {
  test('serves tools at /mcp on loopback, one tool session per MCP session', async () => {
    t = await createTestContext()
    tools(t)
    server = await serveHttp(t.ctx, { token: TOKEN, cwd: '/tmp' })
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
    const a = await client(server.url)
    const b = await client(server.url)
    const whereA = text(await a.client.callTool({ name: 'where', arguments: {} }))
    const whereB = text(await b.client.callTool({ name: 'where', arguments: {} }))
    expect(whereA).toMatch(/^mcp-http-\d+-\d+-\d+$/)
    expect(whereB).toMatch(/^mcp-http-\d+-\d+-\d+$/)
    expect(whereA).not.toBe(whereB)
    expect(server.sessions()).toBe(2)
    // Ending a session (DELETE) closes its connection only.
    await a.transport.terminateSession()
    await expectEventually(() => server!.sessions() === 1)
    expect(text(await b.client.callTool({ name: 'where', arguments: {} }))).toBe(whereB)
  })

  test('a request without the token, or with a wrong one, is 401 and runs nothing', async () => {
    t = await createTestContext()
    const probe = tools(t)
    server = await serveHttp(t.ctx, { token: TOKEN })
    const { transport } = await client(server.url)
    const session = { 'Mcp-Session-Id': transport.sessionId!, 'Mcp-Protocol-Version': '2025-06-18' }
    const call = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'touch', arguments: {} } }
    const missing = await post(server.url, session, call)
    expect(missing.status).toBe(401)
    expect(missing.headers.get('www-authenticate')).toBe('Bearer')
    expect(JSON.parse(missing.body)).toMatchObject({
      error: { message: 'Unauthorized: send Authorization: Bearer <token>' },
    })
    const wrong = await post(server.url, { ...session, Authorization: 'Bearer not-the-token' }, call)
    expect(wrong.status).toBe(401)
    expect(JSON.parse(wrong.body)).toMatchObject({ error: { message: 'Unauthorized: wrong token' } })
    expect(probe.calls).toBe(0)
    // The same request with the token does run.
    const right = await post(server.url, { ...session, Authorization: `Bearer ${TOKEN}` }, call)
    expect(right.status).toBe(200)
    expect(probe.calls).toBe(1)
    // And a client with a wrong token cannot even initialize.
    const refused = await rejection(client(server.url, 'nope'))
    expect(refused).toMatchObject({ code: 401 })
    expect(refused.message).toContain('Unauthorized: wrong token')
  })

  test('a foreign Host or Origin is 403 even with the token (DNS rebinding), a same-origin one is served', async () => {
    t = await createTestContext()
    const probe = tools(t)
    server = await serveHttp(t.ctx, { token: TOKEN })
    const auth = { Authorization: `Bearer ${TOKEN}` }
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    }
    const host = await fetch(server.url.replace('127.0.0.1', 'localhost'), {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify(init),
    })
    expect(host.status).toBe(200)
    await host.body?.cancel()
    const origin = await post(server.url, { ...auth, Origin: 'http://evil.example.com' }, init)
    expect(origin.status).toBe(403)
    expect(JSON.parse(origin.body)).toMatchObject({
      error: { message: 'Forbidden: Origin "http://evil.example.com" is not this server' },
    })
    const sameOrigin = await post(server.url, { ...auth, Origin: `http://127.0.0.1:${server.port}` }, init)
    expect(sameOrigin.status).toBe(200)
    expect(server.sessions()).toBe(2)
    expect(probe.calls).toBe(0)
  })

  test("the Host header check itself: only this server's names and port", () => {
    const allowed = allowedHostHeaders('127.0.0.1', 8765)
    const digest = Buffer.alloc(32)
    expect([...allowed].sort()).toEqual(['127.0.0.1:8765', '[::1]:8765', 'localhost:8765'])
    expect(refusal({ host: 'evil.example.com:8765' }, allowed, digest)).toEqual({
      status: 403,
      message: 'Forbidden: Host "evil.example.com:8765" is not this server',
    })
    expect(refusal({ host: '127.0.0.1:9999' }, allowed, digest)?.status).toBe(403)
    expect(refusal({}, allowed, digest)?.status).toBe(403)
    expect(refusal({ host: 'localhost:8765', origin: 'null' }, allowed, digest)?.status).toBe(403)
    expect(refusal({ host: 'localhost:8765' }, allowed, digest)).toEqual({
      status: 401,
      message: 'Unauthorized: send Authorization: Bearer <token>',
    })
    expect([...allowedHostHeaders('10.1.2.3', 80, ['dsh.internal'])].sort()).toEqual([
      '10.1.2.3',
      '10.1.2.3:80',
      'dsh.internal',
      'dsh.internal:80',
    ])
  })

  test('any other path is 404; a request that is not an initialize and names no session is 400', async () => {
    t = await createTestContext()
    tools(t)
    server = await serveHttp(t.ctx, { token: TOKEN })
    const auth = { Authorization: `Bearer ${TOKEN}` }
    expect((await post(server.url.replace('/mcp', '/other'), auth)).status).toBe(404)
    expect((await post(server.url, auth)).status).toBe(400)
    expect((await post(server.url, { ...auth, 'Mcp-Session-Id': 'not-a-session' })).status).toBe(404)
  })

  test('a body that is not JSON is 400 with a JSON-RPC parse error (-32700), not an invalid request', async () => {
    t = await createTestContext()
    tools(t)
    server = await serveHttp(t.ctx, { token: TOKEN })
    const response = await fetch(server.url, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        Authorization: `Bearer ${TOKEN}`,
      },
      body: '{"jsonrpc":"2.0",',
    })
    expect(response.status).toBe(400)
    const answer = (await response.json()) as { error: { code: number; message: string }; id: null }
    expect(answer.error.code).toBe(-32700)
    expect(answer.error.message).toMatch(/^Parse error: /)
    expect(answer.id).toBeNull()
  })

  test('refuses to start without a token', async () => {
    t = await createTestContext()
    const error = await rejection(serveHttp(t.ctx, { token: '  ' }))
    expect(error).toMatchObject({ code: 'MCP_HTTP_CONFIG_INVALID' })
    expect(error.message).toBe(
      'dsh mcp --http needs a token (--token-file FILE or --token-env NAME): it refuses to serve without one',
    )
    expect(await rejection(serveHttp(t.ctx, { token: 'two words' }))).toMatchObject({
      code: 'MCP_HTTP_CONFIG_INVALID',
      message: 'the --http token must not contain whitespace',
    })
  })

  test('a cancelled call: its tool is aborted, nothing answers it, and the response stream of its POST is closed', async () => {
    t = await createTestContext()
    const probe = tools(t)
    server = await serveHttp(t.ctx, { token: TOKEN })
    const headers = {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      Authorization: `Bearer ${TOKEN}`,
    }
    const init = await post(
      server.url,
      { Authorization: `Bearer ${TOKEN}` },
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      },
    )
    const session = {
      ...headers,
      'Mcp-Session-Id': init.headers.get('mcp-session-id')!,
      'Mcp-Protocol-Version': '2025-11-25',
    }
    await post(server.url, session, { jsonrpc: '2.0', method: 'notifications/initialized' })
    const call = await fetch(server.url, {
      method: 'POST',
      headers: session,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'wait_for_abort', arguments: {} },
      }),
    })
    expect(call.headers.get('content-type')).toBe('text/event-stream')
    let ended = false
    const body = call.text().then((text) => {
      ended = true
      return text
    })
    await expectEventually(() => probe.waiting)
    const cancel = await post(server.url, session, {
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: 2, reason: 'the user pressed Esc' },
    })
    expect(cancel.status).toBe(202)
    expect(await probe.aborted).toBe('the user pressed Esc')
    // The session lives on; before, the stream stayed open until the session ended.
    await expectEventually(() => ended)
    expect(await body).not.toContain('"id":2')
    expect(server.sessions()).toBe(1)
  })

  test('close() aborts calls in flight, closes every session and stops listening', async () => {
    t = await createTestContext()
    const probe = tools(t)
    server = await serveHttp(t.ctx, { token: TOKEN })
    const { client: c } = await client(server.url)
    // Never answered: the server goes away under it (the client's own close in afterEach settles it).
    void c.callTool({ name: 'wait_for_abort', arguments: {} }).catch(() => {})
    await expectEventually(() => probe.waiting)
    const url = server.url
    await server.close()
    await probe.aborted
    expect(server.sessions()).toBe(0)
    await expect(fetch(url, { method: 'POST' })).rejects.toThrow()
  })
})

async function expectEventually(check: () => boolean | Promise<boolean>): Promise<void> {
  for (let turn = 0; turn < 500; turn++) {
    if (await check()) return
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  throw new Error('condition never held')
}
