import { spawn } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { describe, expect, test } from 'vitest'

// The stdio path loads none of the MCP SDK's run-time code and no zod: the built package (plain Node, no bundle) is
// run with the module loader's debug log on, and every file it loaded is looked at. The HTTP path is the control: it
// does load the SDK's transport, so the check would see it.

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../../..')
const MCP_DIST = pathToFileURL(join(ROOT, 'packages/host/mcp/dist/index.js')).href
const SDK_OR_ZOD = /node_modules[\\/](@modelcontextprotocol[\\/]sdk|zod)[\\/]/

/** A context with one tool, served by the built package's serveStdio (or serveHttp), until stdin ends. */
const SERVER = (mode: 'stdio' | 'http') => `
import { Context } from 'cordis'
import { ToolsService } from '@deepseek-ai/dsh-tools'
const { serveStdio, serveHttp } = await import(${JSON.stringify(MCP_DIST)})
const ctx = new Context()
await ctx.plugin(ToolsService)
ctx.tools.register({
  name: 'echo',
  description: 'Returns its text.',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
  execute: (args) => args.text,
})
if (${JSON.stringify(mode)} === 'stdio') {
  const connection = await serveStdio(ctx, { cwd: process.cwd() })
  await connection.closed
} else {
  const server = await serveHttp(ctx, { token: 'secret' })
  process.stdout.write(server.url + '\\n')
  process.stdin.resume()
  await new Promise((resolve) => process.stdin.on('end', resolve))
  await server.close()
}
await ctx.fiber.dispose()
`

interface Run {
  code: number | null
  answers: { id?: unknown; result?: Record<string, unknown>; error?: unknown }[]
  /** Files of the MCP SDK or zod that the loader read. */
  sdkFiles: string[]
  /** How many modules the loader logged at all (the check's own sanity). */
  modules: number
}

function run(mode: 'stdio' | 'http', input: string): Promise<Run> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', SERVER(mode)], {
      cwd: ROOT,
      env: { ...process.env, NODE_DEBUG: 'esm,module' },
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk
    })
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk
    })
    child.on('error', fail)
    child.on('close', (code) => {
      const loaded = stderr.split('\n').filter((line) => line.includes('file:///'))
      const lines = stdout.split('\n').filter((line) => line.startsWith('{'))
      done({
        code,
        answers: lines.map((line) => JSON.parse(line) as Run['answers'][number]),
        sdkFiles: [
          ...new Set(
            stderr
              .split('\n')
              .filter((line) => SDK_OR_ZOD.test(line))
              .map((line) => line.trim()),
          ),
        ],
        modules: loaded.length,
      })
    })
    if (mode === 'stdio') child.stdin.write(input)
    else child.stdout.once('data', () => child.stdin.end())
    if (mode === 'stdio') {
      // End stdin once every request is answered (the server then closes and exits).
      const expected = input.split('\n').filter((line) => line.includes('"id"')).length
      child.stdout.on('data', () => {
        const answered = stdout
          .split('\n')
          .filter((line) => line.startsWith('{') && (JSON.parse(line) as { id?: unknown }).id !== undefined)
        if (answered.length >= expected) child.stdin.end()
      })
    }
  })
}

const line = (message: unknown) => `${JSON.stringify(message)}\n`

describe('what the built package loads', () => {
  test('serveStdio answers initialize, tools/list and tools/call without loading any of the MCP SDK or zod', async () => {
    const result = await run(
      'stdio',
      [
        line({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
        }),
        line({ jsonrpc: '2.0', method: 'notifications/initialized' }),
        line({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
        line({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } }),
        'not json\n',
      ].join(''),
    )
    expect(result.code).toBe(0)
    expect(result.answers.find((m) => m.id === 1)?.result?.protocolVersion).toBe('2025-11-25')
    expect(
      (result.answers.find((m) => m.id === 2)!.result!.tools as { name: string }[]).map((tool) => tool.name),
    ).toEqual(['echo'])
    expect(result.answers.find((m) => m.id === 3)?.result).toEqual({
      content: [{ type: 'text', text: 'hi' }],
      isError: false,
    })
    expect(result.answers.some((m) => (m.error as { code?: number } | undefined)?.code === -32700)).toBe(true)
    expect(result.modules).toBeGreaterThan(20)
    expect(result.sdkFiles).toEqual([])
  })

  test("serveHttp does load the SDK's transport (and zod), only then", async () => {
    const result = await run('http', '')
    expect(result.code).toBe(0)
    expect(result.sdkFiles.some((file) => /server[\\/]streamableHttp\.js/.test(file))).toBe(true)
    expect(result.sdkFiles.some((file) => /node_modules[\\/]zod[\\/]/.test(file))).toBe(true)
  })
})
