import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterEach, describe, expect, test } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import {
  CallToolResultSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  type CallToolResult,
  type JSONRPCMessage,
  type LoggingMessageNotification,
} from '@modelcontextprotocol/sdk/types.js'
import { createTestContext, until, type TestContext } from '@deepseek-ai/dsh-testing'
import { HarnessError } from '@deepseek-ai/dsh-tools'
import SystemPromptService from '@deepseek-ai/dsh-system-prompt'
import { connect, ERROR_META_KEY, instructionsPreamble, type McpConnection, type McpOptions } from '../src/index.ts'

/** Test-only tools: each exposes one behaviour of the host. */
interface Probe {
  /** Resolves with the reason once a `wait_for_abort` call sees its signal abort. */
  aborted: Promise<unknown>
  /** Releases every pending `gate` call. */
  open(): void
}

async function fixture(t: TestContext): Promise<Probe> {
  await t.active(await t.ctx.plugin(SystemPromptService))
  const { ctx } = t
  let sawAbort!: (reason: unknown) => void
  const aborted = new Promise<unknown>((resolve) => {
    sawAbort = resolve
  })
  const gates: (() => void)[] = []
  const open = () => {
    for (const release of gates.splice(0)) release()
  }
  ctx.tools.register<{ text: string }>({
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
  ctx.tools.register({
    name: 'fail',
    description: 'Always fails.',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    execute: () => {
      throw new HarnessError('it failed on purpose', { code: 'TEST_FAILURE' })
    },
  })
  ctx.tools.register({
    name: 'where',
    description: 'Says which session it runs in.',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    execute: (_args, exec) => JSON.stringify(exec.session ?? null),
  })
  ctx.tools.register({
    name: 'wait_for_abort',
    description: 'Runs until its call is cancelled.',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    execute: (_args, exec) =>
      new Promise<string>((resolve) => {
        const stop = () => {
          sawAbort(exec.signal.reason)
          resolve('stopped')
        }
        if (exec.signal.aborted) stop()
        else exec.signal.addEventListener('abort', stop, { once: true })
      }),
  })
  ctx.tools.register({
    name: 'gate',
    description: 'Runs until the test opens the gate.',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    execute: async () => {
      await new Promise<void>((resolve) => gates.push(resolve))
      return 'through'
    },
  })
  ctx.systemPrompt.register({ id: 'test:a', order: 2, text: 'Second section.' })
  ctx.systemPrompt.register({ id: 'test:b', order: 1, text: 'First section.' })
  return { aborted, open }
}

interface Pair {
  client: Client
  connection: McpConnection
  /** Every message the client received, in order. */
  received: JSONRPCMessage[]
}

async function pair(t: TestContext, options: McpOptions = {}, roots?: string[]): Promise<Pair> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  const connection = await connect(t.ctx, serverSide, options)
  const client = new Client({ name: 'test', version: '1.0.0' }, { capabilities: roots ? { roots: {} } : {} })
  if (roots) client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: roots.map((uri) => ({ uri })) }))
  await client.connect(clientSide)
  const received: JSONRPCMessage[] = []
  const deliver = clientSide.onmessage
  clientSide.onmessage = (message, extra) => {
    received.push(message)
    deliver?.(message, extra)
  }
  return { client, connection, received }
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult
}

function textOf(result: CallToolResult): string {
  const block = result.content[0]
  return block?.type === 'text' ? block.text : ''
}

let t: TestContext
let dirs: string[] = []
afterEach(async () => {
  await t?.dispose()
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })))
  dirs = []
})

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'dsh-mcp-test-'))
  dirs.push(dir)
  return dir
}

describe('mcp connection', () => {
  test('tools/list gives every registered tool with its JSON Schema passed through verbatim', async () => {
    t = await createTestContext()
    await fixture(t)
    const { client } = await pair(t)
    const { tools } = await client.listTools()
    expect(tools).toEqual(
      t.ctx.tools.schemas().map((s) => ({ name: s.name, description: s.description, inputSchema: s.parameters })),
    )
    await client.close()
  })

  test("the initialize result's instructions tie the tool names to this server, then carry the assembled system prompt", async () => {
    t = await createTestContext()
    await fixture(t)
    const { client } = await pair(t, { serverInfo: { name: 'dsh', version: '1.0.0' } })
    expect(client.getInstructions()).toBe(
      'These instructions are about the tools of the MCP server dsh: echo, fail, gate, wait_for_abort, where. Your client may' +
        " list them under longer names (such as mcp__dsh__echo); wherever a tool is named below, this server's tool of that" +
        ' name is meant, not a similar tool of the client.' +
        '\n\nFirst section.\n\nSecond section.',
    )
    expect(client.getInstructions()).toBe(
      `${instructionsPreamble('dsh', ['echo', 'fail', 'gate', 'wait_for_abort', 'where'])}\n\n${t.ctx.systemPrompt.assemble()}`,
    )
    await client.close()
  })

  test('a call returns the same text as the in-process pipeline', async () => {
    t = await createTestContext()
    await fixture(t)
    const { client } = await pair(t)
    const result = await call(client, 'echo', { text: 'héllo\nworld' })
    expect(result).toEqual({ content: [{ type: 'text', text: 'héllo\nworld' }], isError: false })
    await client.close()
  })

  test('an error result is isError with "Error: <message>" and names its error and code in _meta', async () => {
    t = await createTestContext()
    await fixture(t)
    const { client } = await pair(t)
    expect(await call(client, 'fail')).toEqual({
      content: [{ type: 'text', text: 'Error: it failed on purpose' }],
      isError: true,
      _meta: { [ERROR_META_KEY]: { name: 'HarnessError', code: 'TEST_FAILURE' } },
    })
    const unknown = await call(client, 'nope')
    expect(unknown.isError).toBe(true)
    expect(unknown._meta).toEqual({ [ERROR_META_KEY]: { name: 'HarnessError', code: 'UNKNOWN_TOOL' } })
    const invalid = await call(client, 'echo', { text: 1 })
    expect(textOf(invalid)).toBe('Error: invalid arguments: property "text" must be a string')
    expect(invalid._meta).toEqual({ [ERROR_META_KEY]: { name: 'HarnessError', code: 'INVALID_ARGS' } })
    await client.close()
  })

  test('50 concurrent calls on one connection are all answered, each with its own text', async () => {
    t = await createTestContext()
    await fixture(t)
    const { client } = await pair(t)
    const texts = Array.from({ length: 50 }, (_, i) => `call number ${i}`)
    const results = await Promise.all(texts.map((text) => call(client, 'echo', { text })))
    expect(results.map(textOf)).toEqual(texts)
    await client.close()
  })

  test("a client cancellation aborts the call's signal", async () => {
    t = await createTestContext()
    const probe = await fixture(t)
    const { client } = await pair(t)
    const controller = new AbortController()
    const dispatched = waitForCall(t, 'wait_for_abort')
    const pending = client.callTool({ name: 'wait_for_abort', arguments: {} }, CallToolResultSchema, {
      signal: controller.signal,
    })
    await dispatched
    controller.abort('user pressed stop')
    await expect(pending).rejects.toThrow()
    expect(await probe.aborted).toBe('user pressed stop')
    await client.close()
  })

  test('a call with a progress token gets progress notifications while it runs; none without one', async () => {
    t = await createTestContext()
    const probe = await fixture(t)
    const { client, received } = await pair(t, { progressIntervalMs: 10 })
    const seen: { progress: number; message?: string | undefined }[] = []
    // Two calls run side by side; only the first asks for progress. The gates open after its second report.
    const quiet = call(client, 'gate')
    const reported = client.callTool({ name: 'gate', arguments: {} }, CallToolResultSchema, {
      onprogress: (progress) => {
        seen.push(progress)
        if (seen.length === 2) probe.open()
      },
    })
    expect(textOf((await reported) as CallToolResult)).toBe('through')
    expect(textOf(await quiet)).toBe('through')
    expect(seen.slice(0, 2).map((p) => p.progress)).toEqual([1, 2])
    expect(seen[0]?.message).toMatch(/^gate still running after \d+s$/)
    const progress = received.filter((m) => 'method' in m && m.method === 'notifications/progress')
    const tokens = new Set(progress.map((m) => ('params' in m ? m.params?.progressToken : undefined)))
    expect(tokens.size).toBe(1)
    expect(progress.length).toBe(seen.length)
    await client.close()
  })

  test('a session notice (a finished background task) reaches the session it names, as an info log message', async () => {
    t = await createTestContext()
    await fixture(t)
    const a = await pair(t)
    const b = await pair(t)
    const messages: { to: string; params: LoggingMessageNotification['params'] }[] = []
    let announced!: () => void
    const done = new Promise<void>((resolve) => {
      announced = resolve
    })
    for (const [to, { client }] of [
      ['a', a],
      ['b', b],
    ] as const) {
      client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
        messages.push({ to, params: notification.params })
        announced()
      })
    }
    // A provider (the bash task table) notifies through the generic session channel; done directly here.
    t.ctx.tools.notify({
      session: await b.connection.session(),
      text: 'background task bash-1 finished [status: completed, exit code: 0]. Read its output with bash_output.',
      key: 'bash-1',
    })
    await done
    // A round trip on each connection: any stray notice would have arrived before the answer.
    await Promise.all([call(a.client, 'echo', { text: 'x' }), call(b.client, 'echo', { text: 'x' })])
    expect(messages).toEqual([
      {
        to: 'b',
        params: {
          level: 'info',
          logger: 'dsh',
          data: 'background task bash-1 finished [status: completed, exit code: 0]. Read its output with bash_output.',
        },
      },
    ])
    await a.client.close()
    await b.client.close()
  })

  test("tools/list carries a tool's title and annotations, which clients gate approval on", async () => {
    t = await createTestContext()
    await fixture(t)
    t.ctx.tools.register({
      name: 'look',
      title: 'Look at something',
      description: 'Looks.',
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      parameters: { type: 'object', properties: {}, additionalProperties: false },
      execute: () => 'seen',
    })
    const { client } = await pair(t)
    const { tools } = await client.listTools()
    expect(tools.find((tool) => tool.name === 'look')).toEqual({
      name: 'look',
      title: 'Look at something',
      description: 'Looks.',
      inputSchema: { type: 'object', properties: {}, additionalProperties: false },
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    })
    expect(tools.find((tool) => tool.name === 'echo')).toEqual({
      name: 'echo',
      description: 'Returns its text.',
      inputSchema: expect.any(Object),
    })
    await client.close()
  })

  test("a session notice (ctx.tools.notify) is appended once, after a blank line, to that session's next result only", async () => {
    t = await createTestContext()
    await fixture(t)
    // A tiny tool that raises a notice for the session that calls it, as a background task's end would.
    t.ctx.tools.register<{ text: string }>({
      name: 'notify_me',
      description: 'Queues a notice for the calling session.',
      parameters: {
        type: 'object',
        properties: { text: { type: 'string', description: 'the notice' } },
        required: ['text'],
        additionalProperties: false,
      },
      execute: (args, exec) => {
        t.ctx.tools.notify({ session: exec.session!, text: args.text })
        return 'queued'
      },
    })
    const a = await pair(t)
    const b = await pair(t)
    // Raised during a call: the result in flight is the session's next one.
    expect(textOf(await call(a.client, 'notify_me', { text: 'background task bash-7 finished' }))).toBe(
      'queued\n\nbackground task bash-7 finished',
    )
    expect(textOf(await call(a.client, 'echo', { text: 'a' }))).toBe('a')
    // Raised outside any call (a task ending on its own): the other session's calls never carry it.
    t.ctx.tools.notify({ session: await a.connection.session(), text: 'background task bash-8 finished' })
    expect(textOf(await call(b.client, 'echo', { text: 'b' }))).toBe('b')
    expect(textOf(await call(a.client, 'echo', { text: 'a' }))).toBe('a\n\nbackground task bash-8 finished')
    expect(textOf(await call(a.client, 'echo', { text: 'a' }))).toBe('a')
    // Error results carry it too: the model reads every result.
    t.ctx.tools.notify({ session: await a.connection.session(), text: 'another notice' })
    const failed = await call(a.client, 'fail')
    expect(failed.isError).toBe(true)
    expect(textOf(failed)).toBe('Error: it failed on purpose\n\nanother notice')
    await a.client.close()
    await b.client.close()
  })

  test('a client that declares roots but never answers roots/list delays the first call by the 1000 ms default only', async () => {
    t = await createTestContext()
    await fixture(t)
    const lines: string[] = []
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    const connection = await connect(t.ctx, serverSide, { log: (line) => lines.push(line) })
    const client = new Client({ name: 'silent', version: '1.0.0' }, { capabilities: { roots: {} } })
    client.setRequestHandler(ListRootsRequestSchema, () => new Promise<never>(() => {}))
    await client.connect(clientSide)
    expect(JSON.parse(textOf(await call(client, 'where')))).toMatchObject({
      id: connection.sessionId,
      cwd: process.cwd(),
    })
    expect(lines.join('\n')).toMatch(
      /^roots\/list got no usable answer within 1000ms \(.*timed out.*\); using the process directory$/m,
    )
    await client.close()
  })

  test('two connections are two sessions', async () => {
    t = await createTestContext()
    await fixture(t)
    const a = await pair(t)
    const b = await pair(t)
    expect(a.connection.sessionId).not.toBe(b.connection.sessionId)
    const sessionA = JSON.parse(textOf(await call(a.client, 'where'))) as { id: string }
    const sessionB = JSON.parse(textOf(await call(b.client, 'where'))) as { id: string }
    expect(sessionA.id).toBe(a.connection.sessionId)
    expect(sessionB.id).toBe(b.connection.sessionId)
    await a.client.close()
    await b.client.close()
  })

  test('the session directory is --cwd when given, even when the client has roots', async () => {
    t = await createTestContext()
    await fixture(t)
    const [given, root] = [await tempDir(), await tempDir()]
    const { client, connection } = await pair(t, { cwd: given }, [pathToFileURL(root).href])
    expect(JSON.parse(textOf(await call(client, 'where')))).toMatchObject({ id: connection.sessionId, cwd: given })
    await client.close()
  })

  test("without --cwd, the session directory is the client's first root", async () => {
    t = await createTestContext()
    await fixture(t)
    const [first, second] = [await tempDir(), await tempDir()]
    const { client } = await pair(t, {}, [pathToFileURL(first).href, pathToFileURL(second).href])
    expect(JSON.parse(textOf(await call(client, 'where'))).cwd).toBe(first)
    await client.close()
  })

  test('without --cwd and roots, or with an unusable root, the session directory is the process directory', async () => {
    t = await createTestContext()
    await fixture(t)
    const plain = await pair(t)
    expect(JSON.parse(textOf(await call(plain.client, 'where'))).cwd).toBe(process.cwd())
    const lines: string[] = []
    const missing = join(await tempDir(), 'gone')
    const broken = await pair(t, { log: (line) => lines.push(line) }, [pathToFileURL(missing).href])
    expect(JSON.parse(textOf(await call(broken.client, 'where'))).cwd).toBe(process.cwd())
    expect(lines.join('\n')).toContain(`root ${pathToFileURL(missing).href} is unusable`)
    await plain.client.close()
    await broken.client.close()
  })

  test("with `roots` (an HTTP server's own), a client root inside them is taken, the first one inside if several", async () => {
    t = await createTestContext()
    await fixture(t)
    const server = await tempDir()
    const inside = join(server, 'sub')
    await mkdir(inside)
    const { client } = await pair(t, { roots: [server], rootsAtFirstCall: true }, [
      pathToFileURL(await tempDir()).href,
      pathToFileURL(inside).href,
    ])
    expect(JSON.parse(textOf(await call(client, 'where'))).cwd).toBe(inside)
    await client.close()
  })

  test('with `roots`, a client whose roots are all outside them (file:///, a link leading out) gets no session: every call is refused, never widened', async () => {
    t = await createTestContext()
    await fixture(t)
    const server = await tempDir()
    const outside = await tempDir()
    await symlink(outside, join(server, 'out'))
    const lines: string[] = []
    const { client } = await pair(t, { roots: [server], log: (line) => lines.push(line) }, [
      'file:///',
      pathToFileURL(join(server, 'out')).href,
    ])
    const refused = await call(client, 'where')
    expect(refused.isError).toBe(true)
    expect(refused._meta).toEqual({ [ERROR_META_KEY]: { name: 'McpError', code: 'WORKSPACE_ROOT_REFUSED' } })
    expect(textOf(refused)).toBe(
      `Error: this server only works inside the roots it was started with (${server}), and the client's roots (file:///, ${pathToFileURL(join(server, 'out')).href}) are not inside them: every call of this session is refused. Give the client a root inside them, or start the server with --cwd <that directory>`,
    )
    expect((await call(client, 'echo', { text: 'x' })).isError).toBe(true)
    expect(lines.join('\n')).toContain('refused a session: this server only works inside the roots')
    await client.close()
  })

  test('closing the client resolves closed and aborts calls in flight', async () => {
    t = await createTestContext()
    const probe = await fixture(t)
    const { client, connection } = await pair(t)
    const dispatched = waitForCall(t, 'wait_for_abort')
    const pending = client.callTool({ name: 'wait_for_abort', arguments: {} }).catch((error: Error) => error)
    await dispatched
    await client.close()
    await connection.closed
    await probe.aborted
    expect(await pending).toBeInstanceOf(Error)
  })

  test('closing a connection disposes its own session (its clean-ups awaited before closed resolves) and no other', async () => {
    t = await createTestContext()
    await fixture(t)
    const a = await pair(t)
    const b = await pair(t)
    const ended: string[] = []
    let release!: () => void
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    for (const { connection } of [a, b])
      (await connection.session()).defer(async () => {
        ended.push(connection.sessionId)
        await held
      })
    let closed = false
    void a.connection.closed.then(() => {
      closed = true
    })
    await a.client.close()
    await until(() => ended.length === 1, 'the session-end listener ran')
    expect(ended).toEqual([a.connection.sessionId])
    expect(closed).toBe(false)
    release()
    await a.connection.closed
    expect(ended).toEqual([a.connection.sessionId])
    await b.client.close()
    await b.connection.closed
    expect(ended).toEqual([a.connection.sessionId, b.connection.sessionId])
  })

  test('disposing the context closes the connection', async () => {
    t = await createTestContext()
    await fixture(t)
    const { client, connection } = await pair(t)
    let clientSawClose = false
    client.onclose = () => {
      clientSawClose = true
    }
    await t.dispose()
    await connection.closed
    expect(clientSawClose).toBe(true)
  })
})

/** Resolves once the pipeline dispatched a call to `name` (observed through the registry's own pre-execute event). */
function waitForCall(t: TestContext, name: string): Promise<void> {
  return new Promise((resolve) => {
    const off = t.ctx.on('tools/pre-execute', (call) => {
      if (call.definition.name !== name) return
      off()
      // The tool itself starts right after the hooks: let it subscribe to its signal first.
      setImmediate(resolve)
    })
  })
}
