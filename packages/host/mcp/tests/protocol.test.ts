import type { ToolSession } from '@deepseek-ai/dsh-tools'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import fc from 'fast-check'
import { afterEach, describe, expect, test } from 'vitest'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js'
import {
  isInitializeRequest as sdkIsInitializeRequest,
  JSONRPCMessageSchema,
  LATEST_PROTOCOL_VERSION as SDK_LATEST,
  SUPPORTED_PROTOCOL_VERSIONS as SDK_SUPPORTED,
  type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js'
import { createTestContext, until, type TestContext } from '@deepseek-ai/dsh-testing'
import {
  connect,
  LATEST_PROTOCOL_VERSION,
  McpEngine,
  SUPPORTED_PROTOCOL_VERSIONS,
  type McpOptions,
} from '../src/index.ts'
import { isInitializeRequest, messageKind } from '../src/jsonrpc.ts'

/** The protocol engine, driven message by message as a raw client would: what the SDK's Server 1.32.2 answered too. */

type Message = Record<string, unknown> & {
  id?: unknown
  method?: string
  result?: Record<string, unknown>
  error?: { code: number; message: string }
}

interface Raw {
  send(message: unknown): Promise<void>
  /** Every message the server sent, in order. */
  received: Message[]
  /** The answer to request `id`, once it arrives. */
  answer(id: string | number): Promise<Message>
  initialize(params?: Record<string, unknown>): Promise<Message>
  sessionId: string
  /** The connection's session (settled on first use). */
  session: () => Promise<ToolSession>
}

let t: TestContext
afterEach(async () => {
  await t?.dispose()
})

interface Probe {
  /** Resolves with the signal's reason once a `wait_for_abort` call sees it abort. */
  aborted: Promise<unknown>
  dispatched: Promise<void>
}

async function serve(options: McpOptions = {}): Promise<Raw & Probe> {
  t = await createTestContext()
  let sawAbort!: (reason: unknown) => void
  let sawStart!: () => void
  const aborted = new Promise<unknown>((resolve) => {
    sawAbort = resolve
  })
  const dispatched = new Promise<void>((resolve) => {
    sawStart = resolve
  })
  t.ctx.tools.register<{ text: string }>({
    name: 'echo',
    description: 'Returns its text.',
    parameters: {
      type: 'object',
      properties: { text: { type: 'string', description: 'what to return' } },
      required: ['text'],
      additionalProperties: false,
    },
    execute: (args) => args.text,
  })
  t.ctx.tools.register({
    name: 'where',
    description: 'Says where it runs.',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    execute: (_args, exec) => exec.session?.cwd ?? '',
  })
  t.ctx.tools.register({
    name: 'wait_for_abort',
    description: 'Runs until its call is cancelled.',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    execute: (_args, exec) =>
      new Promise<string>((resolve) => {
        exec.signal.addEventListener(
          'abort',
          () => {
            sawAbort(exec.signal.reason)
            resolve('stopped')
          },
          { once: true },
        )
        sawStart()
      }),
  })
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  const received: Message[] = []
  clientSide.onmessage = (message) => void received.push(message as Message)
  await clientSide.start()
  const connection = await connect(t.ctx, serverSide, options)
  const send = (message: unknown) => clientSide.send(message as JSONRPCMessage)
  const answer = async (id: string | number) => {
    await until(() => received.some((m) => m.id === id && ('result' in m || 'error' in m)), `the answer to ${id}`)
    return received.find((m) => m.id === id && ('result' in m || 'error' in m))!
  }
  const initialize = async (params: Record<string, unknown> = {}) => {
    await send({
      jsonrpc: '2.0',
      id: 'init',
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' }, ...params },
    })
    const reply = await answer('init')
    await send({ jsonrpc: '2.0', method: 'notifications/initialized' })
    return reply
  }
  return {
    send,
    received,
    answer,
    initialize,
    sessionId: connection.sessionId,
    session: () => connection.session(),
    aborted,
    dispatched,
  }
}

/** Lets every message already sent be handled and answered (a round trip behind them). */
async function settle(raw: Raw, id: string): Promise<void> {
  await raw.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { text: id } } })
  await raw.answer(id)
}

describe('initialize', () => {
  test("the revisions served are the SDK 1.32.2's", () => {
    expect(LATEST_PROTOCOL_VERSION).toBe(SDK_LATEST)
    expect(SUPPORTED_PROTOCOL_VERSIONS).toEqual(SDK_SUPPORTED)
  })

  test('a known older revision is served as asked; the result names the capabilities, server and instructions', async () => {
    const raw = await serve({ serverInfo: { name: 'dsh', version: '9.9.9' } })
    const reply = await raw.initialize({ protocolVersion: '2024-11-05' })
    expect(reply).toEqual({
      jsonrpc: '2.0',
      id: 'init',
      result: {
        protocolVersion: '2024-11-05',
        capabilities: { tools: {}, logging: {} },
        serverInfo: { name: 'dsh', version: '9.9.9' },
      },
    })
  })

  test('an unknown revision is answered with the newest one served', async () => {
    const raw = await serve()
    expect((await raw.initialize({ protocolVersion: '1999-01-01' })).result?.protocolVersion).toBe('2025-11-25')
  })

  test('initialize without a protocol version is invalid params (-32602)', async () => {
    const raw = await serve()
    await raw.send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    })
    expect((await raw.answer(1)).error).toEqual({
      code: -32602,
      message: 'Invalid initialize request: params.protocolVersion must be a string',
    })
  })

  test("the engine remembers the client's capabilities and name", async () => {
    const engine = new McpEngine({
      serverInfo: { name: 's', version: '1' },
      listTools: () => [],
      callTool: () => {
        throw new Error('unused')
      },
    })
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    await engine.connect(serverSide)
    await clientSide.start()
    const initialized = new Promise<void>((resolve) => {
      engine.oninitialized = resolve
    })
    await clientSide.send({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: { roots: { listChanged: true } },
        clientInfo: { name: 'c', version: '2' },
      },
    })
    await clientSide.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
    await initialized
    expect(engine.getClientCapabilities()).toEqual({ roots: { listChanged: true } })
    expect(engine.getClientVersion()).toEqual({ name: 'c', version: '2' })
    await engine.close()
  })
})

describe('requests', () => {
  test('ping is answered with an empty result', async () => {
    const raw = await serve()
    await raw.initialize()
    await raw.send({ jsonrpc: '2.0', id: 7, method: 'ping' })
    expect(await raw.answer(7)).toEqual({ jsonrpc: '2.0', id: 7, result: {} })
  })

  test('an unknown method (server/discover included) is -32601 Method not found', async () => {
    const raw = await serve()
    await raw.initialize()
    await raw.send({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: {} })
    await raw.send({ jsonrpc: '2.0', id: 2, method: 'resources/list' })
    await raw.send({ jsonrpc: '2.0', id: 3, method: 'constructor' })
    for (const id of [1, 2, 3])
      expect(await raw.answer(id)).toEqual({ jsonrpc: '2.0', id, error: { code: -32601, message: 'Method not found' } })
  })

  test('tools/call with bad params is -32602 and says what is wrong', async () => {
    const raw = await serve()
    await raw.initialize()
    await raw.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: {} })
    await raw.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: ['hi'] } })
    await raw.send({ jsonrpc: '2.0', id: 3, method: 'tools/call' })
    expect((await raw.answer(1)).error).toEqual({
      code: -32602,
      message: 'Invalid tools/call request: params.name must be a string',
    })
    expect((await raw.answer(2)).error).toEqual({
      code: -32602,
      message: 'Invalid tools/call request: params.arguments must be an object',
    })
    expect((await raw.answer(3)).error).toEqual({
      code: -32602,
      message: 'Invalid tools/call request: params must be an object',
    })
  })

  test('tools/list lists the registered tools; tools/call runs one', async () => {
    const raw = await serve()
    await raw.initialize()
    await raw.send({ jsonrpc: '2.0', id: 1, method: 'tools/list' })
    expect(((await raw.answer(1)).result!.tools as { name: string }[]).map((tool) => tool.name)).toEqual([
      'echo',
      'wait_for_abort',
      'where',
    ])
    await raw.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } })
    expect(await raw.answer(2)).toEqual({
      jsonrpc: '2.0',
      id: 2,
      result: { content: [{ type: 'text', text: 'hi' }], isError: false },
    })
  })

  test("a handler that throws is answered with the error's integer code, message and data, else -32603", async () => {
    const failures = [
      Object.assign(new Error('coded'), { code: 42, data: { why: 'test' } }),
      new Error('plain'),
      Object.assign(new Error('fractional'), { code: 1.5 }),
    ]
    const engine = new McpEngine({
      serverInfo: { name: 's', version: '1' },
      listTools: () => [],
      callTool: async () => {
        throw failures.shift()
      },
    })
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    const received: Message[] = []
    clientSide.onmessage = (message) => void received.push(message as Message)
    await engine.connect(serverSide)
    await clientSide.start()
    for (const id of [1, 2, 3])
      await clientSide.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'x' } })
    await until(() => received.length === 3, 'three answers')
    expect(received.sort((a, b) => Number(a.id) - Number(b.id)).map((m) => m.error)).toEqual([
      { code: 42, message: 'coded', data: { why: 'test' } },
      { code: -32603, message: 'plain' },
      { code: -32603, message: 'fractional' },
    ])
    await engine.close()
  })
})

describe('cancellation', () => {
  test("a cancelled call is not answered, and its tool sees the abort with the client's reason", async () => {
    const raw = await serve()
    await raw.initialize()
    await raw.send({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'wait_for_abort', arguments: {} } })
    await raw.dispatched
    await raw.send({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: 5, reason: 'user pressed stop' },
    })
    expect(await raw.aborted).toBe('user pressed stop')
    await settle(raw, 'after')
    expect(raw.received.filter((m) => m.id === 5)).toEqual([])
  })

  test('a cancellation of an unknown request, and an unknown notification, change nothing', async () => {
    const raw = await serve()
    await raw.initialize()
    await raw.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 99 } })
    await raw.send({ jsonrpc: '2.0', method: 'notifications/something_new', params: { x: 1 } })
    await settle(raw, 'after')
    expect(raw.received.map((m) => m.id)).toEqual(['init', 'after'])
  })
})

describe('logging', () => {
  test('logging/setLevel silences messages below the level, and a lower level lets them through again', async () => {
    const raw = await serve()
    await raw.initialize()
    const notice = async (text: string) => t.ctx.tools.notify({ session: await raw.session(), text })
    await raw.send({ jsonrpc: '2.0', id: 1, method: 'logging/setLevel', params: { level: 'warning' } })
    expect(await raw.answer(1)).toEqual({ jsonrpc: '2.0', id: 1, result: {} })
    await notice('silenced')
    await raw.send({ jsonrpc: '2.0', id: 2, method: 'logging/setLevel', params: { level: 'debug' } })
    await raw.answer(2)
    await notice('heard')
    await until(() => raw.received.some((m) => m.method === 'notifications/message'), 'a log message')
    await settle(raw, 'after')
    expect(raw.received.filter((m) => m.method === 'notifications/message').map((m) => m.params)).toEqual([
      { level: 'info', logger: 'dsh', data: 'heard' },
    ])
  })

  test('an unknown level is invalid params', async () => {
    const raw = await serve()
    await raw.initialize()
    await raw.send({ jsonrpc: '2.0', id: 1, method: 'logging/setLevel', params: { level: 'loud' } })
    expect((await raw.answer(1)).error).toEqual({
      code: -32602,
      message:
        'Invalid logging/setLevel request: params.level must be one of debug, info, notice, warning, error, critical, alert, emergency',
    })
  })
})

describe('roots/list', () => {
  test('a client that never answers roots/list: the request times out, is cancelled, and the call runs in the process directory', async () => {
    const lines: string[] = []
    const raw = await serve({ rootsTimeoutMs: 50, log: (line) => lines.push(line) })
    await raw.initialize({ capabilities: { roots: {} } })
    await until(() => raw.received.some((m) => m.method === 'roots/list'), 'roots/list')
    const ask = raw.received.find((m) => m.method === 'roots/list')!
    expect(ask).toEqual({ jsonrpc: '2.0', id: 0, method: 'roots/list' })
    await raw.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'where', arguments: {} } })
    expect((await raw.answer(1)).result?.content).toEqual([{ type: 'text', text: process.cwd() }])
    expect(raw.received.find((m) => m.method === 'notifications/cancelled')).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: 0, reason: 'McpError: MCP error -32001: Request timed out' },
    })
    expect(lines).toEqual([
      'roots/list got no usable answer within 50ms (MCP error -32001: Request timed out); using the process directory',
    ])
  })

  test('an error answer to roots/list is reported, and the process directory used', async () => {
    const lines: string[] = []
    const raw = await serve({ log: (line) => lines.push(line) })
    await raw.initialize({ capabilities: { roots: {} } })
    await until(() => raw.received.some((m) => m.method === 'roots/list'), 'roots/list')
    await raw.send({ jsonrpc: '2.0', id: 0, error: { code: -32601, message: 'Method not found' } })
    await raw.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'where', arguments: {} } })
    expect((await raw.answer(1)).result?.content).toEqual([{ type: 'text', text: process.cwd() }])
    expect(lines).toEqual([
      'roots/list got no usable answer within 1000ms (MCP error -32601: Method not found); using the process directory',
    ])
  })
})

describe('roots/list when a client pipelines its first messages', () => {
  test('initialize, initialized and a call delivered together: the roots are still asked, and the call runs in the first root', async () => {
    const root = mkdtempSync(join(tmpdir(), 'dsh-mcp-root-'))
    try {
      t = await createTestContext()
      t.ctx.tools.register({
        name: 'where',
        description: 'Says where it runs.',
        parameters: { type: 'object', properties: {}, additionalProperties: false },
        execute: (_args, exec) => exec.session?.cwd ?? '',
      })
      const transport = new RecordingTransport()
      await connect(t.ctx, transport)
      // One read of stdin can hold all three lines: they arrive before any of them is handled.
      transport.onmessage?.({
        jsonrpc: '2.0',
        id: 'init',
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: { roots: {} }, clientInfo: { name: 'r', version: '1' } },
      })
      transport.onmessage?.({ jsonrpc: '2.0', method: 'notifications/initialized' })
      transport.onmessage?.({
        jsonrpc: '2.0',
        id: 'call',
        method: 'tools/call',
        params: { name: 'where', arguments: {} },
      })
      const sentIndex = (test: (message: Message) => boolean) =>
        transport.sent.findIndex(({ message }) => test(message))
      await until(
        () => sentIndex((m) => m.method === 'roots/list' || m.id === 'call') >= 0,
        'roots/list or the answer to the call',
      )
      // The initialize answer first, then the question, and no answer to the call before it.
      expect(transport.sent.map(({ message }) => message.method ?? message.id)).toEqual(['init', 'roots/list'])
      const ask = transport.sent[1]!.message
      transport.onmessage?.({
        jsonrpc: '2.0',
        id: ask.id as number,
        result: { roots: [{ uri: pathToFileURL(root).href }] },
      })
      await until(() => transport.sent.some(({ message }) => message.id === 'call'), 'the answer to the call')
      expect(transport.sent.find(({ message }) => message.id === 'call')!.message.result?.content).toEqual([
        { type: 'text', text: root },
      ])
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  })
})

/** A transport that records what is sent and with which options (Streamable HTTP routes by `relatedRequestId`). */
class RecordingTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void
  readonly sent: { message: Message; options: TransportSendOptions | undefined }[] = []
  async start(): Promise<void> {}
  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    this.sent.push({ message: message as unknown as Message, options })
  }
  async close(): Promise<void> {
    this.onclose?.()
  }
}

describe('the transport sees what each message relates to', () => {
  test('a notification sent while handling a request names it; a response or a free-standing notification names none', async () => {
    t = await createTestContext()
    let release!: () => void
    t.ctx.tools.register({
      name: 'slow',
      description: 'Waits for the test.',
      parameters: { type: 'object', properties: {}, additionalProperties: false },
      execute: () =>
        new Promise<string>((resolve) => {
          release = () => resolve('done')
        }),
    })
    const transport = new RecordingTransport()
    const connection = await connect(t.ctx, transport, { cwd: process.cwd(), progressIntervalMs: 5 })
    transport.onmessage?.({
      jsonrpc: '2.0',
      id: 'a',
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'r', version: '1' } },
    })
    transport.onmessage?.({
      jsonrpc: '2.0',
      id: 'b',
      method: 'tools/call',
      params: { name: 'slow', arguments: {}, _meta: { progressToken: 'tok' } },
    })
    await until(
      () => transport.sent.some((s) => s.message.method === 'notifications/progress'),
      'a progress notification',
    )
    t.ctx.tools.notify({ session: await connection.session(), text: 'a notice' })
    release()
    await until(() => transport.sent.some((s) => s.message.id === 'b'), "the call's answer")
    const progress = transport.sent.find((s) => s.message.method === 'notifications/progress')!
    expect(progress.options).toEqual({ relatedRequestId: 'b' })
    expect((progress.message.params as { progressToken: unknown }).progressToken).toBe('tok')
    expect(transport.sent.find((s) => s.message.method === 'notifications/message')?.options).toEqual({})
    expect(transport.sent.find((s) => s.message.id === 'a')?.options).toBeUndefined()
    expect(transport.sent.find((s) => s.message.id === 'b')?.options).toBeUndefined()
    await connection.close()
  })
})

describe('message shapes, checked by hand', () => {
  const ids = fc.oneof(fc.string({ maxLength: 3 }), fc.integer(), fc.double(), fc.constant(null), fc.constant(2 ** 60))
  const meta = fc.oneof(fc.constant(undefined), fc.record({ progressToken: ids }, { requiredKeys: [] }), fc.jsonValue())
  const params = fc.oneof(
    fc.constant(undefined),
    fc.jsonValue(),
    fc.record({ _meta: meta, x: fc.jsonValue() }, { requiredKeys: [] }),
  )
  const messages = fc.record(
    {
      jsonrpc: fc.oneof(fc.constant('2.0'), fc.constant('1.0'), fc.constant(2)),
      id: ids,
      method: fc.oneof(fc.string({ maxLength: 8 }), fc.integer()),
      params,
      result: params,
      error: fc.oneof(
        fc.jsonValue(),
        fc.record(
          { code: ids, message: fc.oneof(fc.string(), fc.integer()), data: fc.jsonValue() },
          { requiredKeys: [] },
        ),
      ),
      extra: fc.jsonValue(),
    },
    { requiredKeys: [] },
  )

  test("give the SDK's JSONRPCMessageSchema verdict on any JSON-like value", () => {
    fc.assert(
      fc.property(fc.oneof(messages, fc.jsonValue()), (value) => {
        // JSON has no undefined: what a line on stdin can hold.
        const json = value === undefined ? value : (JSON.parse(JSON.stringify(value)) as unknown)
        expect(messageKind(json) !== undefined).toBe(JSONRPCMessageSchema.safeParse(json).success)
      }),
      { numRuns: 1000 },
    )
  })

  test('an initialize request is recognised as the SDK recognises it', () => {
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
    }
    const cases: unknown[] = [
      init,
      { ...init, params: { ...init.params, capabilities: { roots: {}, sampling: {} } } },
      { ...init, method: 'ping' },
      { ...init, params: { ...init.params, protocolVersion: 1 } },
      { ...init, params: { ...init.params, clientInfo: { name: 'c' } } },
      { ...init, params: undefined },
      { ...init, id: undefined },
      [init],
    ]
    for (const value of cases) expect(isInitializeRequest(value)).toBe(sdkIsInitializeRequest(value))
  })
})
