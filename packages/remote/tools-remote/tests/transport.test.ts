import { afterEach, expect, test } from 'vitest'
import { Context } from 'cordis'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import LocalSubprocess from '@deepseek-ai/dsh-subprocess-local'
import { ProcessTransport } from '../src/transport.ts'

/*
 * The stdio framing of a remote command, against real processes that write what a broken remote writes: a flood of
 * lines that are not JSON-RPC (`yes`, a chatty rc file), and a line longer than any message. Neither may crash the
 * host or lose the messages that follow, and a flood costs a pass over its bytes, not an exception and a log line
 * per line (which held the event loop for tens of seconds, past every timeout).
 */
let ctx: Context | undefined
afterEach(async () => {
  await ctx?.fiber.dispose()
  ctx = undefined
})

const PING = '{"jsonrpc":"2.0","id":7,"method":"ping"}'

async function run(
  script: string,
): Promise<{ messages: JSONRPCMessage[]; errors: string[]; transport: ProcessTransport }> {
  ctx = new Context()
  await ctx.plugin(LocalSubprocess)
  const subprocess = ctx.get('subprocess')!
  const handle = await subprocess.spawn({
    argv: ['sh', '-c', script],
    cwd: '/',
    stdin: 'pipe',
    stdout: 'pipe',
    stderr: 'pipe',
    graceMs: 1000,
  })
  const transport = new ProcessTransport(handle, 1000)
  const messages: JSONRPCMessage[] = []
  const errors: string[] = []
  transport.onmessage = (message) => messages.push(message)
  transport.onerror = (error) => errors.push(error.message)
  const closed = new Promise<void>((resolve) => {
    transport.onclose = resolve
  })
  await transport.start()
  await closed
  return { messages, errors, transport }
}

test('a flood of lines that are not JSON-RPC is counted, logged three times and once more to say so, and the message after it arrives', async () => {
  const { messages, errors, transport } = await run(`yes | head -n 300000; echo '${PING}'`)
  expect(messages).toEqual([JSON.parse(PING)])
  expect(transport.noise).toEqual({ lines: 300_000, first: 'y' })
  expect(errors).toEqual([
    'the remote wrote a line that is not JSON-RPC: "y"',
    'the remote wrote a line that is not JSON-RPC: "y"',
    'the remote wrote a line that is not JSON-RPC: "y"',
    'the remote keeps writing lines that are not JSON-RPC: the rest are counted, not logged',
  ])
})

test('JSON that is not a JSON-RPC message is noise too; blank lines and a CRLF ending are not', async () => {
  const { messages, transport } = await run(`printf '\\n  \\n{"hello":1}\\n[1]\\n${PING}\\r\\n'`)
  expect(messages).toEqual([JSON.parse(PING)])
  expect(transport.noise).toEqual({ lines: 2, first: '{"hello":1}' })
})

test('a line longer than any message (17 MiB) is dropped up to its newline without crashing, and the next message arrives', async () => {
  const { messages, errors, transport } = await run(`head -c 17825792 /dev/zero | tr '\\0' a; echo; echo '${PING}'`)
  expect(messages).toEqual([JSON.parse(PING)])
  expect(transport.noise.lines).toBe(1)
  expect(transport.noise.first).toMatch(/^a+…$/)
  expect(Buffer.byteLength(transport.noise.first!)).toBeLessThanOrEqual(60)
  expect(errors).toEqual([
    'the remote wrote a line longer than 16777216 bytes, which no MCP message of a dsh is: dropped',
  ])
})
