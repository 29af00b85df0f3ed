import { sessionFor } from '@deepseek-ai/dsh-testing'
import { rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createDefaultContext, type DefaultContext } from 'dsh-agent-tools'
import type { SessionNotice, ToolResult } from '@deepseek-ai/dsh-tools'
import { Context } from 'cordis'
import ToolsService from '@deepseek-ai/dsh-tools'
import SystemPromptService from '@deepseek-ai/dsh-system-prompt'
import LocalSubprocess from '@deepseek-ai/dsh-subprocess-local'
import RemotePlugin from '../src/index.ts'
import {
  dshMcpArgv,
  freePort,
  processesWith,
  startHttpDsh,
  SUITE,
  uniqueSleep,
  until,
  workspace,
  type HttpDsh,
} from './fixtures.ts'

const facts = (result: ToolResult) => ({
  text: result.content[0].text,
  isError: result.isError,
  code: result.error?.code ?? null,
})

let ws: ReturnType<typeof workspace>
let local: DefaultContext
let http: HttpDsh

beforeAll(async () => {
  ws = workspace()
  local = await createDefaultContext()
  http = await startHttpDsh(ws.dir)
})

afterAll(async () => {
  await local?.dispose()
  await http?.stop()
  ws?.cleanup()
})

/** Remote `dsh mcp` processes serving this workspace (their argv holds its unique path). */
const remotes = () => processesWith(`mcp\0--cwd\0${ws.dir}`)

const transports = {
  command: () => ({ command: dshMcpArgv(ws.dir) }),
  http: () => ({ url: http.url, token: http.token }),
}

describe.each(Object.keys(transports) as (keyof typeof transports)[])('tools-remote over %s', (kind) => {
  let host: DefaultContext
  beforeAll(async () => {
    host = await createDefaultContext({ remote: transports[kind]() })
  })
  afterAll(async () => {
    await host?.dispose()
  })

  test('mounts the remote tools with their schemas, titles and annotations, and its instructions as the prompt', () => {
    // As JSON: the local schemas are TypeBox objects, whose symbol keys never travel.
    expect(JSON.parse(JSON.stringify(host.ctx.tools.schemas()))).toEqual(
      JSON.parse(JSON.stringify(local.ctx.tools.schemas())),
    )
    // Not equal by both lacking them: every shipped tool has a title and annotations, and they cross the link.
    const mounted = Object.fromEntries(
      host.ctx.tools.schemas().map(({ name, title, annotations }) => [name, { title, annotations }]),
    )
    expect(mounted).toMatchObject({
      read: {
        title: 'Read a file',
        annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      },
      bash: {
        title: 'Run a shell command',
        annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
      },
    })
    for (const tool of Object.values(mounted))
      expect(tool).toEqual({ title: expect.any(String), annotations: expect.any(Object) })
    expect(host.ctx.systemPrompt.assemble()).toBe(local.ctx.systemPrompt.assemble())
  })

  test('every call of the suite gives the text, error flag and code of the same call in-process', async () => {
    const session = sessionFor(`suite-${kind}`, ws.dir)
    for (const [name, args] of SUITE) {
      const there = await host.ctx.tools.execute(name, args, { session })
      const here = await local.ctx.tools.execute(name, args, { session: sessionFor(`local-${kind}`, ws.dir) })
      expect({ name, args, ...facts(there) }).toEqual({ name, args, ...facts(here) })
    }
  })

  test('a cancelled call is ABORTED here and its command stops over there', async () => {
    const sleep = uniqueSleep()
    const controller = new AbortController()
    const call = host.ctx.tools.execute(
      'bash',
      { command: sleep.command, description: 'Sleep' },
      { signal: controller.signal, session: sessionFor(`cancel-${kind}`, ws.dir) },
    )
    await until(() => processesWith(sleep.marker).length > 0, 'the remote sleep runs')
    controller.abort(new Error('the user pressed escape'))
    expect(facts(await call)).toMatchObject({ isError: true, code: 'ABORTED', text: 'Error: tool call aborted' })
    await until(() => processesWith(sleep.marker).length === 0, 'the remote sleep is gone')
  })

  test("a background task's completion notice arrives as a session notice, and is never queued a second time here", async () => {
    const session = sessionFor(`notice-${kind}`, ws.dir)
    const notices: SessionNotice[] = []
    const off = host.ctx.on('tools/session-notice', (notice) => void notices.push(notice))
    try {
      // The task waits for a flag (outside the workspace, which other tests list), so that it finishes after the
      // call that started it has returned.
      const flag = join(tmpdir(), `dsh-remote-go-${uniqueSleep().marker}`)
      const command = `while [ ! -e '${flag}' ]; do sleep 0.02; done; echo finished`
      const started = await host.ctx.tools.execute(
        'bash',
        { command, description: 'Quick', run_in_background: true },
        { session },
      )
      const id = /^started background task (bash-\d+)/.exec(started.content[0].text)?.[1]
      expect(id).toBeDefined()
      writeFileSync(flag, '')
      await until(() => notices.length > 0, 'the completion notice arrives')
      const text = `background task ${id} finished [status: completed, exit code: 0]. Read its output with bash_output.`
      expect(notices).toEqual([{ session, text }])
      // The remote appends its own undelivered notice to the session's next result; this side adds nothing, so
      // the notice is there exactly once, after a blank line, and never again after.
      const next = await host.ctx.tools.execute('read', { path: 'a.txt' }, { session })
      const plain = await local.ctx.tools.execute(
        'read',
        { path: 'a.txt' },
        { session: sessionFor(`plain-${kind}`, ws.dir) },
      )
      expect(next.content[0].text).toBe(`${plain.content[0].text}\n\n${text}`)
      const after = await host.ctx.tools.execute('read', { path: 'a.txt' }, { session })
      expect(after.content[0].text).toBe(plain.content[0].text)
      expect(notices).toHaveLength(1)
      rmSync(flag)
    } finally {
      off()
    }
  })
})

describe('tools-remote over a command', () => {
  test('each local session has its own remote connection; a session that ends closes it, disposal closes all', async () => {
    const before = remotes().length
    const host = await createDefaultContext({ remote: { command: dshMcpArgv(ws.dir) } })
    try {
      // The start connection (the catalog) is kept for the first session.
      expect(remotes().length).toBe(before + 1)
      await host.ctx.tools.execute('read', { path: 'a.txt' }, { session: sessionFor('one', ws.dir) })
      expect(remotes().length).toBe(before + 1)
      await host.ctx.tools.execute('read', { path: 'a.txt' }, { session: sessionFor('two', ws.dir) })
      expect(remotes().length).toBe(before + 2)
      // Background ids are per remote session: each session's first task is bash-1, and the other's is unknown.
      const one = await host.ctx.tools.execute(
        'bash',
        { command: 'true', description: 'T', run_in_background: true },
        { session: sessionFor('one', ws.dir) },
      )
      const two = await host.ctx.tools.execute(
        'bash',
        { command: 'true', description: 'T', run_in_background: true },
        { session: sessionFor('two', ws.dir) },
      )
      expect(one.content[0].text).toMatch(/^started background task bash-1\b/)
      expect(two.content[0].text).toMatch(/^started background task bash-1\b/)
      const sleep = uniqueSleep()
      await host.ctx.tools.execute(
        'bash',
        { command: sleep.command, description: 'Long', run_in_background: true },
        { session: sessionFor('one', ws.dir) },
      )
      await until(() => processesWith(sleep.marker).length > 0, 'the background sleep runs')
      await sessionFor('one', ws.dir).dispose()
      await until(() => remotes().length === before + 1, "session one's remote is gone")
      await until(() => processesWith(sleep.marker).length === 0, "session one's background task is gone")
    } finally {
      await host.dispose()
    }
    await until(() => remotes().length === before, 'every remote is gone after disposal')
  })

  test("a call that runs for a while reports the remote's progress as tools-remote/progress", async () => {
    const host = await createDefaultContext({ remote: { command: dshMcpArgv(ws.dir) } })
    const reports: { callId: string; tool: string; progress: number; message?: string }[] = []
    const off = host.ctx.on('tools-remote/progress', (event) => void reports.push(event))
    try {
      // The remote dsh reports a running call every 3 s: a 3.5 s command gets one report.
      const result = await host.ctx.tools.execute(
        'bash',
        { command: 'sleep 3.5; echo done', description: 'Slow' },
        { session: sessionFor('slow', ws.dir), callId: 'call-slow' },
      )
      expect(result.content[0].text).toBe('done')
      expect(reports.length).toBeGreaterThanOrEqual(1)
      expect(reports[0]).toMatchObject({ callId: 'call-slow', tool: 'bash', progress: 1 })
      expect(reports[0]!.message).toMatch(/^bash still running after \d+s$/)
    } finally {
      off()
      await host.dispose()
    }
  })

  test('a lost connection fails the call in flight with REMOTE_UNAVAILABLE, and the next call reconnects', async () => {
    const host = await createDefaultContext({ remote: { command: dshMcpArgv(ws.dir) } })
    try {
      const session = sessionFor('lost', ws.dir)
      await host.ctx.tools.execute('read', { path: 'a.txt' }, { session })
      const sleep = uniqueSleep()
      const call = host.ctx.tools.execute('bash', { command: sleep.command, description: 'Long' }, { session })
      await until(() => processesWith(sleep.marker).length > 0, 'the remote sleep runs')
      for (const pid of remotes()) process.kill(pid, 'SIGKILL')
      const lost = await call
      expect(facts(lost)).toMatchObject({ isError: true, code: 'REMOTE_UNAVAILABLE' })
      expect(lost.content[0].text).toMatch(
        /^Error: remote unavailable: the connection to .+ was lost during the call \(the command was killed by SIGKILL\); whether the call took effect there is unknown, and background tasks it had started there were stopped\. The next call tries to connect again\.$/,
      )
      const again = await host.ctx.tools.execute('read', { path: 'a.txt' }, { session })
      expect(facts(again)).toEqual(facts(await local.ctx.tools.execute('read', { path: 'a.txt' }, { session })))
      // A SIGKILLed server cannot stop what it started (docs/reliability.md): reap its orphaned sleep here.
      // Over ssh the server is not killed but loses its stdin, and does stop everything (ssh.test.ts).
      for (const pid of processesWith(sleep.marker)) process.kill(pid, 'SIGKILL')
    } finally {
      await host.dispose()
    }
  })

  test("a remote that cannot be reached at all fails the plugin's start with REMOTE_UNAVAILABLE, saying why", async () => {
    const error = await createDefaultContext({
      remote: {
        command: ['sh', '-c', 'echo "ssh: connect to host nowhere port 22: Connection refused" >&2; exit 255'],
      },
      log: () => {},
    }).then(
      () => undefined,
      (reason: { cause?: { code?: string; message?: string } }) => reason,
    )
    expect(error?.cause?.code).toBe('REMOTE_UNAVAILABLE')
    expect(error?.cause?.message).toBe(
      'remote unavailable: no MCP connection to sh -c \'echo "ssh: connect to host nowhere port 22: Connection refused" >&2; exit 255\': the command ended before the MCP handshake completed (the command exited with code 255: ssh: connect to host nowhere port 22: Connection refused). The next call tries to connect again.',
    )
  })
})

describe('tools-remote over HTTP', () => {
  test('a server that went away is REMOTE_UNAVAILABLE; once it is back, the next call opens a new MCP session', async () => {
    const port = await freePort()
    let server = await startHttpDsh(ws.dir, { port })
    const host = await createDefaultContext({ remote: { url: server.url, token: server.token } })
    try {
      const session = sessionFor('restart', ws.dir)
      expect(facts(await host.ctx.tools.execute('read', { path: 'a.txt' }, { session })).isError).toBe(false)
      await server.stop()
      const down = await host.ctx.tools.execute('read', { path: 'a.txt' }, { session })
      expect(facts(down)).toMatchObject({ isError: true, code: 'REMOTE_UNAVAILABLE' })
      expect(down.content[0].text).toMatch(
        new RegExp(
          `^Error: remote unavailable: ${server.url.replaceAll('.', '\\.')}: fetch failed \\(ECONNREFUSED\\)\\. The next call tries to connect again\\.$`,
        ),
      )
      server = await startHttpDsh(ws.dir, { port, token: server.token })
      const back = await host.ctx.tools.execute('read', { path: 'a.txt' }, { session })
      expect(facts(back)).toEqual(facts(await local.ctx.tools.execute('read', { path: 'a.txt' }, { session })))
    } finally {
      await host.dispose()
      await server.stop()
    }
  })
})

describe('tools-remote against a fake remote that hangs (a forced fault)', () => {
  test('a call that gets neither a result nor progress within idleTimeoutMs is REMOTE_UNAVAILABLE and drops the connection', async () => {
    const ctx = new Context()
    await ctx.plugin(ToolsService)
    await ctx.plugin(SystemPromptService)
    await ctx.plugin(LocalSubprocess)
    const hanging = new URL('./fixtures/hanging-server.mjs', import.meta.url).pathname
    const fiber = ctx.plugin(RemotePlugin, { command: [process.execPath, hanging], idleTimeoutMs: 300 })
    await fiber.await()
    try {
      // The banner line before the handshake was skipped, and the tool was mounted.
      expect(ctx.tools.schemas().map((tool) => tool.name)).toEqual(['hang'])
      const result = await ctx.tools.execute('hang', {}, { session: sessionFor('s', '/') })
      expect(facts(result)).toEqual({
        isError: true,
        code: 'REMOTE_UNAVAILABLE',
        text: `Error: remote unavailable: ${process.execPath} ${hanging} sent nothing for 300ms during the call (no result, no progress), so the connection was dropped; whether the call took effect there is unknown. The next call tries to connect again.`,
      })
      await until(() => processesWith(hanging).length === 0, 'the hanging server was stopped')
    } finally {
      await ctx.fiber.dispose()
    }
  })
})

describe('tools-remote against commands that are no dsh', () => {
  async function start(
    command: string[],
  ): Promise<{ failure: { code?: string; message: string } | undefined; ctx: Context }> {
    const ctx = new Context()
    await ctx.plugin(ToolsService)
    await ctx.plugin(SystemPromptService)
    await ctx.plugin(LocalSubprocess)
    const fiber = ctx.plugin(RemotePlugin, { command, connectTimeoutMs: 1500 })
    const failure = await fiber.await().then(
      () => undefined,
      (error: { code?: string; message: string }) => error,
    )
    return { failure, ctx }
  }

  test('one that floods stdout with lines that are not JSON-RPC fails its start at the connect timeout, saying what it wrote', async () => {
    const marker = `dsh-flood-${process.pid}-${Date.now()}`
    const { failure, ctx } = await start(['yes', marker])
    try {
      expect(failure?.code).toBe('REMOTE_UNAVAILABLE')
      expect(failure?.message).toMatch(
        new RegExp(
          `^remote unavailable: yes ${marker} did not complete the MCP handshake within 1500ms \\(the command was killed by SIGTERM\\); its stdout held \\d+ lines that are not JSON-RPC, the first: "${marker}" \\(is the command a dsh mcp, and does the remote shell print to stdout\\?\\)\\. The next call tries to connect again\\.$`,
        ),
      )
      await until(() => processesWith(marker).length === 0, 'yes was stopped')
    } finally {
      await ctx.fiber.dispose()
    }
  })

  test('one that writes a line longer than any message does not crash the host: the line is dropped and the next message read', async () => {
    const hanging = new URL('./fixtures/hanging-server.mjs', import.meta.url).pathname
    // 17 MiB of one line, then a real (if hanging) MCP server on the same stdout.
    const { failure, ctx } = await start([
      'sh',
      '-c',
      `head -c 17825792 /dev/zero | tr '\\0' a; echo; exec "${process.execPath}" "${hanging}"`,
    ])
    try {
      expect(failure).toBeUndefined()
      expect(ctx.tools.schemas().map((tool) => tool.name)).toEqual(['hang'])
    } finally {
      await ctx.fiber.dispose()
    }
  })
})

describe('tools-remote config', () => {
  test('names exactly one remote: neither or both is REMOTE_CONFIG_INVALID before anything starts', async () => {
    for (const config of [
      {},
      { command: ['x'], url: 'http://127.0.0.1:1/mcp', token: 't' },
      { url: 'http://127.0.0.1:1/mcp' },
      { url: 'ftp://x/mcp', token: 't' },
    ]) {
      const ctx = new Context()
      const errors: string[] = []
      ctx.logger.exporter({
        export: (message) => void (message.type === 'error' && errors.push(String(message.args[0]))),
      })
      await ctx.plugin(ToolsService)
      await ctx.plugin(SystemPromptService)
      await ctx.plugin(LocalSubprocess)
      const fiber = ctx.plugin(RemotePlugin, config)
      const failure = await fiber.await().then(
        () => undefined,
        (error: { code?: string; message: string }) => error,
      )
      expect(failure?.code).toBe('REMOTE_CONFIG_INVALID')
      await ctx.fiber.dispose()
    }
  })
})
