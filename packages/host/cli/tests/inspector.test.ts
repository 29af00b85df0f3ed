import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { BIN, dsh, workspace, type Run } from './helpers.ts'

/**
 * The MCP Inspector's CLI mode (`@modelcontextprotocol/inspector`, pinned, a client this project did not write)
 * drives the built `dsh mcp` over stdio: one Inspector run is one connection, one method.
 */

const require = createRequire(import.meta.url)
const INSPECTOR_DIR = dirname(require.resolve('@modelcontextprotocol/inspector/package.json'))
const INSPECTOR = join(
  INSPECTOR_DIR,
  (JSON.parse(readFileSync(join(INSPECTOR_DIR, 'package.json'), 'utf8')) as { bin: Record<string, string> }).bin[
    'mcp-inspector'
  ]!,
)

let ws: ReturnType<typeof workspace>
let state: string
beforeAll(() => {
  ws = workspace({
    'package.json': '{ "name": "fixture" }\n',
    'src/a.ts': 'export const a = 1 // TODO: rename\n',
    'notes.txt': 'one\ntwo\nthree\n',
  })
  // The Inspector keeps a catalog and a client config; never the user's.
  state = mkdtempSync(join(tmpdir(), 'dsh-inspector-'))
})
afterAll(() => {
  ws?.cleanup()
  if (state) rmSync(state, { recursive: true, force: true })
})

/** One `mcp-inspector --cli` run against `dsh mcp --cwd <fixture>`; resolves when it exited. */
function inspect(args: readonly string[]): Promise<Run> {
  return new Promise((done, fail) => {
    const child = spawn(
      process.execPath,
      [INSPECTOR, '--cli', '--format', 'json', ...args, process.execPath, BIN, 'mcp', '--cwd', ws.dir],
      {
        env: {
          ...process.env,
          MCP_CATALOG_PATH: join(state, 'mcp.json'),
          MCP_CLIENT_CONFIG_PATH: join(state, 'client.json'),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk
    })
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk
    })
    child.on('error', fail)
    child.on('close', (code, signal) => done({ code, signal, stdout, stderr }))
  })
}

interface CallOutput {
  result?: { content: { type: string; text: string }[]; isError: boolean; _meta?: Record<string, unknown> }
  error?: { code: string; message: string }
}

async function callTool(name: string, args: Record<string, unknown>): Promise<{ run: Run; output: CallOutput }> {
  const run = await inspect(['--method', 'tools/call', '--tool-name', name, '--tool-args-json', JSON.stringify(args)])
  return { run, output: JSON.parse(run.stdout) as CallOutput }
}

const textOf = (output: CallOutput) => output.result?.content[0]?.text ?? ''

describe('the MCP Inspector CLI against dsh mcp', () => {
  test('tools/list shows every tool as dsh tools --json does, and --strict finds no schema portability problem', async () => {
    const run = await inspect(['--strict', '--method', 'tools/list'])
    expect(run.code, run.stderr).toBe(0)
    const listed = await dsh(['tools', '--json'])
    expect((JSON.parse(run.stdout) as { result: { tools: unknown } }).result.tools).toEqual(JSON.parse(listed.stdout))
  })

  test('glob, grep, read and bash each run and return their text', async () => {
    const glob = await callTool('glob', { pattern: '**/*.ts' })
    expect(glob.run.code, glob.run.stderr).toBe(0)
    expect(textOf(glob.output)).toBe('src/a.ts')
    const grep = await callTool('grep', { pattern: 'TODO' })
    expect(grep.run.code, grep.run.stderr).toBe(0)
    expect(textOf(grep.output)).toBe('Found 1 match\n\nsrc/a.ts\nLine 1: export const a = 1 // TODO: rename')
    const read = await callTool('read', { path: 'notes.txt' })
    expect(read.run.code, read.run.stderr).toBe(0)
    expect(textOf(read.output)).toMatch(/^1: one\n2: two\n3: three\n/)
    const bash = await callTool('bash', { command: 'echo "$PWD"; exit 3', description: 'Print the directory' })
    expect(bash.run.code, bash.run.stderr).toBe(0)
    expect(textOf(bash.output)).toBe(`${ws.dir}\n[exit code: 3]`)
  })

  test('bash_output and bash_kill answer, and an error result carries its code: the Inspector exits 5 with the result on stdout', async () => {
    // Every Inspector run is a fresh server, so no task of an earlier run exists in it.
    for (const tool of ['bash_output', 'bash_kill']) {
      const { run, output } = await callTool(tool, { task_id: 'bash-1' })
      expect(run.code, tool).toBe(5)
      expect(output.result?.isError).toBe(true)
      expect(textOf(output)).toMatch(/^Error: .*bash-1/)
      expect(output.result?._meta).toEqual({ 'dsh/error': { name: expect.any(String), code: 'BASH_UNKNOWN_TASK' } })
    }
    const missing = await callTool('read', { path: 'missing.txt' })
    expect(missing.run.code).toBe(5)
    expect(missing.output.result?._meta).toEqual({ 'dsh/error': { name: 'FsError', code: 'FS_NOT_FOUND' } })
  })

  test('protocol eras: legacy and auto negotiate 2025-11-25; modern-only (2026-07-28) is refused, as recorded in docs/decisions', async () => {
    for (const era of ['legacy', 'auto']) {
      const run = await inspect(['--protocol-era', era, '--method', 'initialize'])
      expect(run.code, `${era}: ${run.stderr}`).toBe(0)
      expect(JSON.parse(run.stdout)).toMatchObject({
        result: {
          protocolVersion: '2025-11-25',
          serverInfo: { name: 'dsh' },
          capabilities: { tools: {}, logging: {} },
        },
      })
    }
    const modern = await inspect(['--protocol-era', 'modern', '--method', 'initialize'])
    expect(modern.code).not.toBe(0)
    expect(modern.stdout + modern.stderr).toContain(
      'did not offer pinned protocol version 2026-07-28 via server/discover',
    )
  })
})
