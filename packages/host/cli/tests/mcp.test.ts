import { sessionFor } from '@deepseek-ai/dsh-testing'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import {
  CallToolResultSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js'
import { instructionsPreamble } from '@deepseek-ai/dsh-mcp'
import { createDefaultContext, type DefaultContext } from '../src/index.ts'
import { BIN, ChildTransport, dsh, processesWith, uniqueSleep, until, workspace } from './helpers.ts'

const FILES = {
  'package.json': '{ "name": "fixture" }\n',
  'src/a.ts': 'export const a = 1 // TODO: rename\n',
  'src/b.ts': 'export const b = 2\n// TODO: test b\n',
  'notes.txt': Array.from({ length: 60 }, (_, i) => `line ${i + 1}`).join('\n'),
}

let host: DefaultContext
let ws: ReturnType<typeof workspace>
const clients: Client[] = []

beforeAll(async () => {
  host = await createDefaultContext()
  ws = workspace(FILES)
})

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()))
})

afterAll(async () => {
  await host?.dispose()
  ws?.cleanup()
})

/** A client of a fresh `dsh mcp` over the SDK's stdio transport, closed after the test. */
async function server(args: string[] = ['--cwd', ws.dir], options: { roots?: string[] } = {}): Promise<Client> {
  const client = new Client(
    { name: 'dsh-test', version: '1.0.0' },
    { capabilities: options.roots ? { roots: {} } : {} },
  )
  if (options.roots)
    client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: options.roots!.map((uri) => ({ uri })) }))
  await client.connect(
    new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', ...args], stderr: 'pipe' }),
  )
  clients.push(client)
  return client
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult
}

function textOf(result: CallToolResult): string {
  const block = result.content[0]
  return block?.type === 'text' ? block.text : ''
}

/** What the in-process pipeline returns for the same call, as MCP would carry it. */
async function expected(tool: string, args: Record<string, unknown>, cwd = ws.dir): Promise<CallToolResult> {
  const result = await host.ctx.tools.execute(tool, args, { session: sessionFor('in-process', cwd) })
  return {
    content: [{ type: 'text', text: result.content[0].text }],
    isError: result.isError,
    ...(result.error ? { _meta: { 'dsh/error': { name: result.error.name, code: result.error.code } } } : {}),
  }
}

describe('dsh mcp', () => {
  test('tools/list gives every tool with its title, JSON Schema as inputSchema, and annotations: what dsh tools --json shows', async () => {
    const client = await server()
    const { tools } = await client.listTools()
    const local = host.ctx.tools.schemas().map((s) => ({
      name: s.name,
      title: s.title,
      description: s.description,
      inputSchema: s.parameters,
      annotations: s.annotations,
    }))
    expect(tools).toEqual(JSON.parse(JSON.stringify(local)))
    const listed = await dsh(['tools', '--json'])
    expect(tools).toEqual(JSON.parse(listed.stdout))
  })

  test("the initialize result's instructions are the preamble naming this server's tools, then the assembled system prompt (dsh prompt)", async () => {
    const client = await server()
    const names = host.ctx.tools.list().map((tool) => tool.name)
    expect(client.getInstructions()).toBe(
      `${instructionsPreamble('dsh', names)}\n\n${host.ctx.systemPrompt.assemble()}`,
    )
    expect(client.getInstructions()).toMatch(
      /^These instructions are about the tools of the MCP server dsh: apply_patch, bash, bash_input, bash_kill, bash_output, edit, glob, grep, read, write\. /,
    )
    expect(client.getInstructions()!.endsWith(`\n\n${(await dsh(['prompt'])).stdout.trimEnd()}`)).toBe(true)
    expect(client.getServerVersion()?.name).toBe('dsh')
  })

  test('every tool returns the same result over MCP as in-process, errors included', async () => {
    const client = await server()
    const calls: [string, Record<string, unknown>][] = [
      ['glob', { pattern: '**/*.ts' }],
      ['grep', { pattern: 'TODO' }],
      ['grep', { pattern: '(' }],
      ['read', { path: 'notes.txt', offset: 50 }],
      ['read', { path: 'missing.txt' }],
      ['read', {}],
      ['nope', {}],
      ['bash', { command: 'echo out; echo err >&2; exit 4', description: 'mixed output' }],
      ['bash_output', { task_id: 'bash-99' }],
      ['bash_kill', { task_id: 'bash-99' }],
    ]
    for (const [tool, args] of calls) {
      expect(await call(client, tool, args), `${tool} ${JSON.stringify(args)}`).toEqual(await expected(tool, args))
    }
  })

  test('an error result is isError, "Error: <message>", with its name and code in _meta', async () => {
    const client = await server()
    const result = await call(client, 'glob', {})
    expect(result).toEqual({
      content: [{ type: 'text', text: 'Error: invalid arguments: missing required property "pattern"' }],
      isError: true,
      _meta: { 'dsh/error': { name: 'HarnessError', code: 'INVALID_ARGS' } },
    })
  })

  test('50 concurrent tools/call requests on one connection are all answered correctly', async () => {
    const client = await server()
    const calls = Array.from({ length: 50 }, (_, i): [string, Record<string, unknown>] =>
      i % 5 === 0
        ? ['glob', { pattern: '**/*.ts' }]
        : i % 5 === 1
          ? ['grep', { pattern: `line ${i}$` }]
          : ['read', { path: 'notes.txt', offset: i + 1, limit: 3 }],
    )
    const results = await Promise.all(calls.map(([tool, args]) => call(client, tool, args)))
    const wanted = await Promise.all(calls.map(([tool, args]) => expected(tool, args)))
    expect(results).toEqual(wanted)
    expect(new Set(results.map(textOf)).size).toBeGreaterThan(40)
  })

  test("without --cwd the session directory is the client's first root", async () => {
    const client = await server([], { roots: [pathToFileURL(join(ws.dir, 'src')).href, pathToFileURL(ws.dir).href] })
    // Paths relative to src, the first root (in either order: glob lists newest first, and both were just written).
    expect(
      textOf(await call(client, 'glob', { pattern: '*.ts' }))
        .split('\n')
        .sort(),
    ).toEqual(['a.ts', 'b.ts'])
  })

  test("--cwd wins over the client's roots", async () => {
    const client = await server(['--cwd', ws.dir], { roots: [pathToFileURL(join(ws.dir, 'src')).href] })
    expect(textOf(await call(client, 'glob', { pattern: '*.json' }))).toBe('package.json')
  })

  test('end of stdin stops the server: it exits 0', async () => {
    const transport = new ChildTransport(['mcp', '--cwd', ws.dir])
    const client = new Client({ name: 'dsh-test', version: '1.0.0' })
    await client.connect(transport)
    expect(textOf(await call(client, 'glob', { pattern: '*.json' }))).toBe('package.json')
    await transport.close()
    expect(await transport.exited).toMatchObject({ code: 0, signal: null, stderr: '' })
  })

  test('SIGTERM stops the server: it exits 0', async () => {
    const transport = new ChildTransport(['mcp', '--cwd', ws.dir])
    const client = new Client({ name: 'dsh-test', version: '1.0.0' })
    await client.connect(transport)
    await client.listTools()
    transport.child.kill('SIGTERM')
    expect(await transport.exited).toMatchObject({ code: 0, signal: null })
  })

  test('an unusable --cwd or --config fails before serving, with exit 2', async () => {
    const transport = new ChildTransport(['mcp', '--cwd', join(ws.dir, 'nope')])
    expect(await transport.exited).toMatchObject({ code: 2, stdout: '' })
  })
})

describe('dsh mcp with bash', () => {
  test('a cancelled bash call leaves no process behind', async () => {
    const client = await server()
    const sleep = uniqueSleep()
    const controller = new AbortController()
    const pending = client.callTool(
      { name: 'bash', arguments: { command: sleep.command, description: 'wait' } },
      CallToolResultSchema,
      { signal: controller.signal },
    )
    await until(() => processesWith(sleep.marker).length > 0, 'the sleep to start')
    controller.abort('stop')
    await expect(pending).rejects.toThrow()
    await until(() => processesWith(sleep.marker).length === 0, 'the sleep to be killed')
    // The connection still serves.
    expect(textOf(await call(client, 'glob', { pattern: '*.json' }))).toBe('package.json')
  })

  test('closing the client while a background task runs leaves no process, and the server exits', async () => {
    const transport = new ChildTransport(['mcp', '--cwd', ws.dir])
    const client = new Client({ name: 'dsh-test', version: '1.0.0' })
    await client.connect(transport)
    const sleep = uniqueSleep()
    const started = await call(client, 'bash', {
      command: sleep.command,
      description: 'background',
      run_in_background: true,
    })
    expect(textOf(started)).toMatch(/^started background task bash-1/)
    await until(() => processesWith(sleep.marker).length > 0, 'the background sleep to start')
    await transport.close()
    expect(await transport.exited).toMatchObject({ code: 0, signal: null })
    expect(processesWith(sleep.marker)).toEqual([])
  })

  test('a finished background task is announced to its connection as an info log message', async () => {
    const client = await server()
    const notices: unknown[] = []
    let announced!: () => void
    const done = new Promise<void>((resolve) => {
      announced = resolve
    })
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      notices.push(notification.params)
      announced()
    })
    const flag = join(ws.dir, `go-${uniqueSleep().marker}`)
    expect(
      textOf(
        await call(client, 'bash', {
          command: `while [ ! -e '${flag}' ]; do sleep 0.02; done; echo done`,
          description: 'wait for flag',
          run_in_background: true,
        }),
      ),
    ).toMatch(/^started background task bash-1/)
    writeFileSync(flag, '')
    await done
    expect(notices).toEqual([
      {
        level: 'info',
        logger: 'dsh',
        data: 'background task bash-1 finished [status: completed, exit code: 0]. Read its output with bash_output.',
      },
    ])
    expect(textOf(await call(client, 'bash_output', { task_id: 'bash-1' }))).toBe(
      'done\n[status: completed, exit code: 0]',
    )
  })

  test("two connections are two sessions: one cannot read the other's background task", async () => {
    const [a, b] = await Promise.all([server(), server()])
    const sleep = uniqueSleep()
    expect(
      textOf(await call(a, 'bash', { command: sleep.command, description: 'a task', run_in_background: true })),
    ).toMatch(/^started background task bash-1/)
    const foreign = await call(b, 'bash_output', { task_id: 'bash-1' })
    expect(foreign.isError).toBe(true)
    expect(foreign._meta?.['dsh/error']).toMatchObject({ code: 'BASH_UNKNOWN_TASK' })
    expect(textOf(await call(a, 'bash_kill', { task_id: 'bash-1' }))).toBe('killed background task bash-1')
  })

  test('a long bash call sends progress notifications when the client asks for them', async () => {
    const client = await server()
    const flag = join(ws.dir, `go-${uniqueSleep().marker}`)
    const progress: { progress: number; message?: string | undefined }[] = []
    const result = (await client.callTool(
      {
        name: 'bash',
        arguments: {
          command: `while [ ! -e '${flag}' ]; do sleep 0.02; done; echo released`,
          description: 'wait for flag',
        },
      },
      CallToolResultSchema,
      {
        onprogress: (p) => {
          progress.push(p)
          writeFileSync(flag, '')
        },
      },
    )) as CallToolResult
    expect(textOf(result)).toBe('released')
    expect(progress[0]).toMatchObject({
      progress: 1,
      message: expect.stringMatching(/^bash still running after \d+s$/),
    })
    expect(existsSync(flag)).toBe(true)
  })
})
