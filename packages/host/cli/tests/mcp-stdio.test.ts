import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { JSONRPCMessageSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { ChildTransport, startDsh, until, workspace } from './helpers.ts'

/** The stdio wire of `dsh mcp`, line by line: framing errors, what stdout carries, backpressure. */

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 'init',
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
}
const INITIALIZED = { jsonrpc: '2.0', method: 'notifications/initialized' }

let ws: ReturnType<typeof workspace>
beforeAll(() => {
  // 2000 lines of 24 bytes: one read answer is about 50 KB of JSON.
  ws = workspace({
    'big.txt': Array.from({ length: 2000 }, (_, i) => `line ${String(i).padStart(6, '0')} of filler`).join('\n'),
  })
})
afterAll(() => ws?.cleanup())

/** A raw `dsh mcp`: the test writes lines and reads stdout lines itself. */
function raw() {
  const { child, exited } = startDsh(['mcp', '--cwd', ws.dir])
  const lines: string[] = []
  let partial = ''
  child.stdout.removeAllListeners('data')
  child.stdout.on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n')
    partial = parts.pop()!
    lines.push(...parts)
  })
  const send = (line: string) => child.stdin.write(`${line}\n`)
  const replies = (count: number) => until(() => lines.length >= count, `${count} stdout lines`)
  return { child, exited, lines, send, replies }
}

describe('dsh mcp on stdio', () => {
  test('a line that is not JSON gets a -32700 parse error on stdout; JSON that is no JSON-RPC message gets -32600; the connection goes on', async () => {
    const server = raw()
    server.send('hello')
    server.send('{"jsonrpc":"2.0","id":5,"method":"tools/list"')
    server.send('')
    server.send('{"a":1}')
    server.send('{"jsonrpc":"2.0","id":7,"method":3}')
    server.send(JSON.stringify(INITIALIZE))
    await server.replies(5)
    const [notJson, cutShort, notRpc, badMethod, init] = server.lines.map((line) => JSON.parse(line))
    expect(notJson).toEqual({
      jsonrpc: '2.0',
      error: { code: -32700, message: expect.stringMatching(/^Parse error: .*not valid JSON/) },
    })
    expect(cutShort).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 } })
    expect(notRpc).toEqual({
      jsonrpc: '2.0',
      error: { code: -32600, message: 'Invalid Request: not a JSON-RPC 2.0 request, notification or response' },
    })
    expect(badMethod).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32600 } })
    expect(init).toMatchObject({ jsonrpc: '2.0', id: 'init', result: { serverInfo: { name: 'dsh' } } })
    server.child.stdin.end()
    const run = await server.exited
    expect(run.code).toBe(0)
    // The reason is on stderr for whoever reads the client's MCP log.
    expect(run.stderr).toContain('dsh mcp: stdin line is not JSON')
  })

  test('a bash call and its cancellation in one write: the command never runs, nothing answers it, the next call is served', async () => {
    const server = raw()
    const marker = join(ws.dir, `cancelled-${process.pid}`)
    const call = {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'bash', arguments: { command: `touch ${marker}`, description: 'Create a marker' } },
    }
    const cancel = {
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: 1, reason: 'the user pressed Esc' },
    }
    const next = {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'bash', arguments: { command: 'echo served', description: 'Print a word' } },
    }
    server.child.stdin.write(
      [INITIALIZE, INITIALIZED, call, cancel, next].map((m) => `${JSON.stringify(m)}\n`).join(''),
    )
    await server.replies(2)
    const [init, answer] = server.lines.map((line) => JSON.parse(line))
    expect(init).toMatchObject({ id: 'init', result: {} })
    expect(answer).toEqual({
      jsonrpc: '2.0',
      id: 2,
      result: { content: [{ type: 'text', text: 'served' }], isError: false },
    })
    server.child.stdin.end()
    expect((await server.exited).code).toBe(0)
    expect(server.lines).toHaveLength(2)
    expect(existsSync(marker)).toBe(false)
  })

  test('a line longer than 16 MiB is dropped with a -32700 error and the next line is served', async () => {
    const server = raw()
    const chunk = 'x'.repeat(1024 * 1024)
    for (let i = 0; i < 17; i++) server.child.stdin.write(chunk)
    server.send('')
    server.send(JSON.stringify(INITIALIZE))
    await server.replies(2)
    expect(JSON.parse(server.lines[0]!)).toEqual({
      jsonrpc: '2.0',
      error: { code: -32700, message: 'Parse error: message longer than 16777216 bytes' },
    })
    expect(JSON.parse(server.lines[1]!)).toMatchObject({ id: 'init', result: {} })
    server.child.stdin.end()
    expect((await server.exited).code).toBe(0)
  })

  test('stdout carries only JSON-RPC: every line of a session with every tool, errors and bad input is a JSON-RPC message', async () => {
    const transport = new ChildTransport(['mcp', '--cwd', ws.dir])
    const client = new Client({ name: 'dsh-test', version: '1.0.0' })
    await client.connect(transport)
    const call = async (name: string, args: Record<string, unknown>) =>
      (await client.callTool({ name, arguments: args })) as CallToolResult
    await client.listTools()
    await call('glob', { pattern: '*.txt' })
    await call('grep', { pattern: 'line 000001' })
    await call('read', { path: 'big.txt', limit: 3 })
    await call('read', { path: 'missing.txt' })
    // Output of commands goes into results, never to the server's stdout.
    await call('bash', {
      command: 'echo to-stdout; echo to-stderr >&2; printf "no newline"',
      description: 'Write to both streams',
    })
    const started = await call('bash', {
      command: 'echo bg; sleep 0.2',
      description: 'Background echo',
      run_in_background: true,
    })
    const id = /bash-\d+/.exec((started.content[0] as { text: string }).text)![0]
    await call('bash_output', { task_id: id })
    await call('bash_kill', { task_id: id })
    await call('nope', {})
    transport.child.stdin.write('garbage that is not JSON\n')
    await client.ping()
    await client.close()
    const run = await transport.exited
    expect(run.code).toBe(0)
    const lines = run.stdout.split('\n')
    expect(lines.pop()).toBe('')
    expect(lines.length).toBeGreaterThan(12)
    for (const line of lines) expect(JSONRPCMessageSchema.safeParse(JSON.parse(line)).success, line).toBe(true)
  })

  test("backpressure: a client that sends requests but never reads stdout leaves the server's memory bounded, and nothing is lost once it reads", async () => {
    const { child, exited } = startDsh(['mcp', '--cwd', ws.dir])
    child.stdout.removeAllListeners('data')
    let received = ''
    const onData = (chunk: string) => {
      received += chunk
    }
    child.stdout.on('data', onData)
    child.stdin.write(`${JSON.stringify(INITIALIZE)}\n`)
    await until(() => received.includes('"id":"init"'), 'the initialize answer')
    child.stdin.write(`${JSON.stringify(INITIALIZED)}\n`)
    // A warm-up call, read, so that the baseline includes a loaded read tool.
    child.stdin.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 'warm', method: 'tools/call', params: { name: 'read', arguments: { path: 'big.txt' } } })}\n`,
    )
    await until(() => received.includes('"id":"warm"'), 'the warm-up answer')
    const baseline = rssBytes(child.pid!)

    // Stop reading, then ask for 1000 answers of ~50 KB each: about 50 MB the client never reads. Each request is
    // padded to ~8 KB (an ignored _meta key): 8 MB of requests, more than the server queues (4 MiB) and the pipe holds.
    child.stdout.off('data', onData)
    child.stdout.pause()
    const calls = 1000
    const pad = 'p'.repeat(8000)
    for (let i = 0; i < calls; i++) {
      const params = { name: 'read', arguments: { path: 'big.txt' }, _meta: { pad } }
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/call', params })}\n`)
    }
    // The server stops reading its stdin: most of the requests stay in this process's write buffer.
    let peak = baseline
    let previous = -1
    let steady = 0
    // Sampled every 100 ms (at most 60 s) until the server's memory has not moved by 1 MiB for ten samples.
    for (let sample = 0; steady < 10; sample++) {
      if (sample === 600) throw new Error("the server's memory never settled")
      await new Promise((resolve) => setTimeout(resolve, 100))
      const rss = rssBytes(child.pid!)
      peak = Math.max(peak, rss)
      steady = Math.abs(rss - previous) < 1024 * 1024 ? steady + 1 : 0
      previous = rss
    }
    const growth = peak - baseline
    const unsent = child.stdin.writableLength
    process.stdout.write(
      `[backpressure] server rss ${mib(baseline)} MiB -> peak ${mib(peak)} MiB (+${mib(growth)}) with ${calls} unread answers of ~50 KB requested; ${mib(unsent)} MiB of requests still unsent\n`,
    )
    // Without backpressure the server took every request and held ~50 MB of answers (several times that in RSS).
    expect(unsent).toBeGreaterThan(2 * 1024 * 1024)
    expect(growth).toBeLessThan(64 * 1024 * 1024)

    // Reading again: every request is answered, in full.
    let tail = ''
    const ids = new Set<unknown>()
    child.stdout.on('data', (chunk: string) => {
      const parts = (tail + chunk).split('\n')
      tail = parts.pop()!
      for (const line of parts) {
        const message = JSON.parse(line) as { id?: unknown; result?: { isError?: boolean } }
        if (typeof message.id === 'number' && message.result?.isError === false) ids.add(message.id)
      }
    })
    child.stdout.resume()
    await until(() => ids.size === calls, `${calls} answers`, 6000)
    child.stdin.end()
    expect((await exited).code).toBe(0)
  })
})

const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(1)

/** Resident set size of a process, from /proc. */
function rssBytes(pid: number): number {
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]
  return Number(kb) * 1024
}
