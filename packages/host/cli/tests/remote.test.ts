import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { dirname, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { LoggingMessageNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { BIN, dsh, installedDsh, processesWith, ROOT, startDsh, uniqueSleep, until, workspace } from './helpers.ts'

let ws: ReturnType<typeof workspace>
beforeAll(() => {
  ws = workspace({ 'a.txt': 'alpha\nbeta\n', 'src/x.ts': '// TODO: y\n' })
})
afterAll(() => ws?.cleanup())

const TOKEN = randomBytes(32).toString('hex')

/** The remote side: `dsh mcp` as installed from the packed tarball, found on the PATH the command sets. */
function installedMcp(cwd: string): string {
  return `env PATH='${installedDsh().binDir}:${dirname(process.execPath)}:/usr/bin:/bin' dsh mcp --cwd '${cwd}'`
}

/** `dsh mcp --http --port 0` with the token in an env var; resolves once it printed its URL. */
async function serve(extra: string[] = [], dir = ws.dir) {
  const started = startDsh(['mcp', '--http', '--port', '0', '--token-env', 'DSH_TEST_TOKEN', '--cwd', dir, ...extra], {
    cwd: dir,
    env: { DSH_TEST_TOKEN: TOKEN },
  })
  let stderr = ''
  const url = await new Promise<string>((resolve, reject) => {
    started.child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString()
      const match = /dsh mcp: listening on (http:\/\/\S+)\n/.exec(stderr)
      if (match) resolve(match[1]!)
    })
    void started.exited.then((run) => reject(new Error(`exited ${run.code}: ${run.stderr}`)))
  })
  return { ...started, url }
}

async function httpClient(url: string): Promise<Client> {
  const client = new Client({ name: 'test', version: '1.0.0' })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } }),
  )
  return client
}

const text = (result: unknown) => ((result as CallToolResult).content[0] as { text: string }).text

describe('dsh mcp --http', () => {
  test('refuses to start without a token (exit 2), and says how to give one', async () => {
    const run = await dsh(['mcp', '--http'])
    expect(run.code).toBe(2)
    expect(run.stderr).toMatch(
      /^dsh: dsh mcp --http needs a token: --token-file FILE or --token-env NAME \(it never serves without one\)\n/,
    )
    const empty = await dsh(['mcp', '--http', '--token-env', 'DSH_TEST_UNSET_TOKEN'])
    expect(empty.code).toBe(2)
    expect(empty.stderr).toMatch(
      /^dsh: --token-env DSH_TEST_UNSET_TOKEN: that environment variable is not set or empty\n/,
    )
  }, 120_000)

  test('refuses a token shorter than 32 bytes, and a token file group or others may read (exit 2), saying how to make one', async () => {
    const dir = mkdtempSync(join(ws.dir, '..', 'dsh-token-'))
    try {
      const file = join(dir, 'token')
      writeFileSync(file, `${'x'.repeat(31)}\n`, { mode: 0o600 })
      const short = await dsh(['mcp', '--http', '--token-file', file, '--port', '0'])
      expect(short).toMatchObject({ code: 2, stdout: '' })
      expect(short.stderr.split('\n')[0]).toBe(
        `dsh: --token-file ${file}: the token is 31 bytes; dsh mcp --http needs at least 32 (make one: umask 077; openssl rand -hex 32 > ${file})`,
      )
      const env = await dsh(['mcp', '--http', '--token-env', 'DSH_TEST_SHORT_TOKEN', '--port', '0'], {
        env: { ...process.env, DSH_TEST_SHORT_TOKEN: 'abc' },
      })
      expect(env).toMatchObject({ code: 2, stdout: '' })
      expect(env.stderr.split('\n')[0]).toBe(
        'dsh: --token-env DSH_TEST_SHORT_TOKEN: the token is 3 bytes; dsh mcp --http needs at least 32 (make one: openssl rand -hex 32)',
      )
      writeFileSync(file, `${TOKEN}\n`)
      for (const mode of [0o644, 0o640, 0o604, 0o620]) {
        chmodSync(file, mode)
        const open = await dsh(['mcp', '--http', '--token-file', file, '--port', '0'])
        expect(open).toMatchObject({ code: 2, stdout: '' })
        expect(open.stderr.split('\n')[0]).toBe(
          `dsh: --token-file ${file}: group or others may read or change it (mode 0${mode.toString(8)}): make it private with chmod 600 ${file}`,
        )
      }
      // A client's token file (--remote <url>) is the user's to keep: neither rule applies to it.
      const client = await dsh([
        'call',
        'read',
        '{"path":"a.txt"}',
        '--remote',
        'http://127.0.0.1:1/mcp',
        '--token-file',
        file,
      ])
      expect(client.code).toBe(1)
      expect(client.stdout).toMatch(/^Error: remote unavailable: /)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)

  test('a SIGTERM as soon as it says it listens is a clean stop (exit 0): the handler is set before that line', async () => {
    // Before the fix, most of these runs died of the signal (the line came before the handler).
    const codes: (number | NodeJS.Signals | null)[] = []
    for (let i = 0; i < 10; i++) {
      const started = startDsh(['mcp', '--http', '--port', '0', '--token-env', 'DSH_TEST_TOKEN', '--cwd', ws.dir], {
        cwd: ws.dir,
        env: { DSH_TEST_TOKEN: TOKEN },
      })
      let stderr = ''
      started.child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString()
        if (/listening on http/.test(stderr)) started.child.kill('SIGTERM')
      })
      const run = await started.exited
      codes.push(run.code ?? run.signal)
    }
    expect(codes).toEqual(Array(10).fill(0))
  }, 120_000)

  test('serves with a private token file of 32 bytes or more', async () => {
    const dir = mkdtempSync(join(ws.dir, '..', 'dsh-token-'))
    try {
      const file = join(dir, 'token')
      writeFileSync(file, `${TOKEN}\n`, { mode: 0o600 })
      const started = startDsh(['mcp', '--http', '--port', '0', '--token-file', file, '--cwd', ws.dir], { cwd: ws.dir })
      let stderr = ''
      started.child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString()
      })
      await until(() => /listening on http/.test(stderr) || started.child.exitCode !== null, 'dsh mcp --http listens')
      expect(started.child.exitCode, stderr).toBeNull()
      started.child.kill('SIGTERM')
      expect((await started.exited).code).toBe(0)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)

  test("one session per MCP session: another session's task is unknown (BASH_UNKNOWN_TASK); SIGTERM stops everything and exits 0", async () => {
    const server = await serve()
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
    const a = await httpClient(server.url)
    const b = await httpClient(server.url)
    const sleep = uniqueSleep()
    const started = text(
      await a.callTool({
        name: 'bash',
        arguments: { command: sleep.command, description: 'Long', run_in_background: true },
      }),
    )
    const id = /started background task (bash-\d+)/.exec(started)?.[1]
    expect(id).toBeDefined()
    const foreign = (await b.callTool({ name: 'bash_output', arguments: { task_id: id } })) as CallToolResult
    expect(foreign.isError).toBe(true)
    expect(foreign._meta).toMatchObject({ 'dsh/error': { code: 'BASH_UNKNOWN_TASK' } })
    expect(text(foreign)).not.toContain('another session')
    await until(() => processesWith(sleep.marker).length > 0, 'the background sleep runs')
    server.child.kill('SIGTERM')
    const run = await server.exited
    expect(run.code).toBe(0)
    expect(processesWith(sleep.marker)).toEqual([])
    await a.close().catch(() => {})
    await b.close().catch(() => {})
  }, 120_000)
})

describe('dsh mcp --http --sandbox', () => {
  test('serves the sandboxed local tools: bash writes only inside the roots, read refuses a path outside them', async () => {
    // Under /var/tmp: inside the sandbox the host's /tmp is a private one.
    const base = realpathSync(mkdtempSync('/var/tmp/dsh-http-sandbox-'))
    const work = join(base, 'work')
    const outside = join(base, 'outside')
    mkdirSync(work)
    mkdirSync(outside)
    writeFileSync(join(outside, 'keep.txt'), 'original\n')
    const server = await serve(['--sandbox'], work)
    try {
      const client = await httpClient(server.url)
      const bash = text(
        await client.callTool({
          name: 'bash',
          arguments: { command: `echo made > made.txt; echo x > ${outside}/keep.txt`, description: 'Write' },
        }),
      )
      expect(bash).toContain('Read-only file system')
      expect(readFileSync(join(work, 'made.txt'), 'utf8')).toBe('made\n')
      expect(readFileSync(join(outside, 'keep.txt'), 'utf8')).toBe('original\n')
      const read = (await client.callTool({
        name: 'read',
        arguments: { path: join(outside, 'keep.txt') },
      })) as CallToolResult
      expect(read.isError).toBe(true)
      expect(read._meta).toMatchObject({ 'dsh/error': { code: 'WORKSPACE_OUTSIDE_ROOTS' } })
      await client.close()
    } finally {
      server.child.kill('SIGTERM')
      expect((await server.exited).code).toBe(0)
      rmSync(base, { recursive: true, force: true })
    }
  }, 120_000)
})

describe('--remote', () => {
  test('--sandbox beside --remote is a usage error (exit 2) that says where --sandbox goes, and starts nothing', async () => {
    const run = await dsh([
      'call',
      'bash',
      '{"command":"true","description":"T"}',
      '--sandbox',
      '--remote',
      "sh -c 'echo started >&2'",
    ])
    expect(run).toMatchObject({ code: 2, stdout: '' })
    expect(run.stderr).toBe(
      "dsh: --sandbox confines local tools, which --remote replaces: start the remote dsh with --sandbox in its own command (--remote 'ssh -T host dsh mcp --sandbox --cwd /repo')\n" +
        'Usage: dsh call <tool> [<json-args>] [--cwd DIR] [--json] [--sandbox] [--config FILE] [--remote REMOTE]\nRun "dsh call --help" for details.\n',
    )
  }, 120_000)

  test('dsh call, dsh tools and dsh prompt through a command give what the local ones give', async () => {
    const remote = installedMcp(ws.dir)
    const call = ['call', 'read', '{"path":"a.txt"}']
    expect(await dsh([...call, '--remote', remote])).toMatchObject({
      code: 0,
      stdout: (await dsh([...call, '--cwd', ws.dir])).stdout,
    })
    expect(await dsh(['tools', '--json', '--remote', remote])).toMatchObject({
      code: 0,
      stdout: (await dsh(['tools', '--json'])).stdout,
    })
    expect(await dsh(['prompt', '--remote', remote])).toMatchObject({ code: 0, stdout: (await dsh(['prompt'])).stdout })
  }, 120_000)

  test('dsh call through a URL with --token-file; a wrong token or no server is REMOTE_UNAVAILABLE (exit 1)', async () => {
    const server = await serve()
    try {
      const tokenFile = join(ws.dir, '..', `dsh-token-${process.pid}`)
      writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 })
      const ok = await dsh(['call', 'grep', '{"pattern":"TODO"}', '--remote', server.url, '--token-file', tokenFile])
      expect(ok).toMatchObject({
        code: 0,
        stdout: (await dsh(['call', 'grep', '{"pattern":"TODO"}', '--cwd', ws.dir])).stdout,
      })
      writeFileSync(tokenFile, 'wrong\n')
      const refused = await dsh([
        'call',
        'read',
        '{"path":"a.txt"}',
        '--json',
        '--remote',
        server.url,
        '--token-file',
        tokenFile,
      ])
      expect(refused.code).toBe(1)
      expect(JSON.parse(refused.stdout)).toEqual({
        text: `Error: remote unavailable: ${server.url}: the server refused the token (HTTP 401): check --token-file / --token-env on both sides. The next call tries to connect again.`,
        isError: true,
        error: {
          message: `remote unavailable: ${server.url}: the server refused the token (HTTP 401): check --token-file / --token-env on both sides. The next call tries to connect again.`,
          name: 'RemoteError',
          code: 'REMOTE_UNAVAILABLE',
        },
      })
      expect(refused.stderr).toBe('')
    } finally {
      server.child.kill('SIGTERM')
      await server.exited
    }
    const gone = await dsh(['call', 'read', '{"path":"a.txt"}', '--remote', "sh -c 'exit 255'"])
    expect(gone.code).toBe(1)
    expect(gone.stdout).toBe(
      "Error: remote unavailable: no MCP connection to sh -c 'exit 255': the command ended before the MCP handshake completed (the command exited with code 255). The next call tries to connect again.\n",
    )
  }, 120_000)

  test('dsh mcp --remote fronts a remote workspace for any MCP client, and stops it when the client goes', async () => {
    const remote = installedMcp(ws.dir)
    const client = new Client({ name: 'test', version: '1.0.0' })
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [BIN, 'mcp', '--remote', remote],
        cwd: ROOT,
        stderr: 'pipe',
      }),
    )
    const local = new Client({ name: 'test', version: '1.0.0' })
    await local.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [BIN, 'mcp', '--cwd', ws.dir],
        cwd: ROOT,
        stderr: 'pipe',
      }),
    )
    const tools = (await client.listTools()).tools
    expect(tools).toEqual((await local.listTools()).tools)
    // Titles and annotations (the hints clients approve by) cross the remote link, not only the schemas.
    expect(tools.find((tool) => tool.name === 'read')).toMatchObject({
      title: 'Read a file',
      annotations: { readOnlyHint: true, destructiveHint: false },
    })
    expect(tools.find((tool) => tool.name === 'bash')).toMatchObject({
      title: 'Run a shell command',
      annotations: { readOnlyHint: false, destructiveHint: true },
    })
    expect(client.getInstructions()).toBe(local.getInstructions())
    expect(await client.callTool({ name: 'read', arguments: { path: 'a.txt' } })).toEqual(
      await local.callTool({ name: 'read', arguments: { path: 'a.txt' } }),
    )
    const sleep = uniqueSleep()
    await client.callTool({
      name: 'bash',
      arguments: { command: sleep.command, description: 'Long', run_in_background: true },
    })
    await until(() => processesWith(sleep.marker).length > 0, 'the remote background sleep runs')
    await client.close()
    await local.close()
    await until(() => processesWith(sleep.marker).length === 0, 'the remote side stopped its task')
  }, 120_000)

  test("dsh mcp --remote: a remote task's completion notice reaches the MCP client once as a log message and once in the next result", async () => {
    const remote = installedMcp(ws.dir)
    const client = new Client({ name: 'test', version: '1.0.0' })
    const logged: unknown[] = []
    client.setNotificationHandler(
      LoggingMessageNotificationSchema,
      (notification) => void logged.push(notification.params),
    )
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [BIN, 'mcp', '--remote', remote],
        cwd: ROOT,
        stderr: 'pipe',
      }),
    )
    try {
      const plain = text(await client.callTool({ name: 'read', arguments: { path: 'a.txt' } }))
      // The task waits for a flag (outside the workspace), so that it finishes after the call that started it returned.
      const flag = join(ws.dir, '..', `dsh-go-${uniqueSleep().marker}`)
      const command = `while [ ! -e '${flag}' ]; do sleep 0.02; done; echo done`
      const started = text(
        await client.callTool({
          name: 'bash',
          arguments: { command, description: 'Wait for flag', run_in_background: true },
        }),
      )
      const id = /^started background task (bash-\d+)/.exec(started)?.[1]
      expect(id).toBeDefined()
      writeFileSync(flag, '')
      await until(() => logged.length > 0, 'the completion notice is logged to the client')
      const notice = `background task ${id} finished [status: completed, exit code: 0]. Read its output with bash_output.`
      expect(logged).toEqual([{ level: 'info', logger: 'dsh', data: notice }])
      // Queued once (by the remote dsh), so appended once: the local dsh only forwards the log message.
      expect(text(await client.callTool({ name: 'read', arguments: { path: 'a.txt' } }))).toBe(`${plain}\n\n${notice}`)
      expect(text(await client.callTool({ name: 'read', arguments: { path: 'a.txt' } }))).toBe(plain)
      expect(logged).toHaveLength(1)
      rmSync(flag)
    } finally {
      await client.close()
    }
  }, 120_000)
})

/**
 * A client-side proxy that adds the bearer token (the conformance client sends none). Host and Origin pass
 * through as sent, except that the proxy's own address is mapped to the server's, so the server's own
 * DNS-rebinding checks are what the suite sees.
 */
async function tokenProxy(target: string, token: string): Promise<{ url: string; server: Server }> {
  const upstream = new URL(target)
  let self = ''
  const server = createServer((req, res) => {
    const headers = { ...req.headers, authorization: `Bearer ${token}` }
    if (headers.host === self) headers.host = upstream.host
    if (headers.origin === `http://${self}`) headers.origin = upstream.origin
    const out = request(
      { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      },
    )
    out.on('error', () => {
      if (!res.headersSent) res.writeHead(502)
      res.end()
    })
    req.pipe(out)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  self = `127.0.0.1:${(server.address() as AddressInfo).port}`
  return { url: `http://${self}/mcp`, server }
}

describe('the official MCP conformance suite (server mode) against dsh mcp --http', () => {
  test('fails exactly the scenarios of the committed baseline', async () => {
    const server = await serve()
    const proxy = await tokenProxy(server.url, TOKEN)
    try {
      const cli = join(ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js')
      const baseline = join(ROOT, 'packages/host/cli/tests/conformance/expected-failures.yml')
      const run = await new Promise<{ code: number | null; output: string }>((resolve) => {
        const child = spawn(process.execPath, [cli, 'server', '--url', proxy.url, '--expected-failures', baseline], {
          cwd: ws.dir,
          stdio: ['ignore', 'pipe', 'pipe'],
        })
        let output = ''
        child.stdout.on('data', (chunk: Buffer) => {
          output += chunk.toString()
        })
        child.stderr.on('data', (chunk: Buffer) => {
          output += chunk.toString()
        })
        child.on('close', (code) => resolve({ code, output }))
      })
      expect(run.output).toContain('=== SUMMARY ===')
      expect({ code: run.code, summary: run.output.slice(run.output.indexOf('=== SUMMARY ===')) }).toMatchObject({
        code: 0,
      })
    } finally {
      proxy.server.close()
      server.child.kill('SIGTERM')
      await server.exited
    }
  }, 240_000)
})
