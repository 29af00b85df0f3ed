import { PassThrough } from 'node:stream'
import fc from 'fast-check'
import { afterEach, describe, expect, test } from 'vitest'
import { createTestContext, until, type TestContext } from '@deepseek-ai/dsh-testing'
import { LineTransport, serveStdio, type StdioOptions } from '../src/index.ts'

/** serveStdio over in-memory streams: the framing and flow control of LineTransport, message by message. */

let t: TestContext
afterEach(async () => {
  await t?.dispose()
})

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 'init',
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
}

async function serve(options: Partial<StdioOptions> & { stdoutHighWaterMark?: number } = {}) {
  t = await createTestContext()
  const running = new Map<string, AbortSignal>()
  const gates: (() => void)[] = []
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
  t.ctx.tools.register<{ text: string }>({
    name: 'gate',
    description: 'Runs until the test opens the gates or the call is cancelled.',
    parameters: {
      type: 'object',
      properties: { text: { type: 'string', description: 'a name' } },
      required: ['text'],
      additionalProperties: false,
    },
    execute: (args, exec) =>
      new Promise<string>((resolve) => {
        running.set(args.text, exec.signal)
        exec.signal.addEventListener('abort', () => resolve('cancelled'), { once: true })
        gates.push(() => resolve(args.text))
      }),
  })
  const stdin = new PassThrough()
  const stdout = new PassThrough({ highWaterMark: options.stdoutHighWaterMark ?? 16 * 1024 })
  const connection = await serveStdio(t.ctx, { stdin, stdout, cwd: process.cwd(), ...options })
  const send = (message: unknown) => stdin.write(`${JSON.stringify(message)}\n`)
  const call = (id: number, name: string, text: string) =>
    send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: { text } } })
  return {
    connection,
    stdin,
    stdout,
    send,
    call,
    running,
    open: () => {
      for (const gate of gates.splice(0)) gate()
    },
  }
}

/** Reads every complete line written so far. */
function linesOf(stdout: PassThrough): { id?: unknown; result?: { content: { text: string }[] } }[] {
  const chunks: Buffer[] = []
  for (let chunk = stdout.read() as Buffer | null; chunk !== null; chunk = stdout.read() as Buffer | null)
    chunks.push(chunk)
  return Buffer.concat(chunks)
    .toString('utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line))
}

describe('serveStdio', () => {
  test('while stdout is congested, stdin is not read and no request is dispatched; once it drains, the rest follow in order', async () => {
    const stdin = new PassThrough()
    // Nobody reads this stdout at first; one answer fills it past its high-water mark of 1 byte.
    const stdout = new PassThrough({ highWaterMark: 1 })
    const transport = new LineTransport(stdin, stdout, {
      maxMessageBytes: 1024 * 1024,
      maxInFlight: 32,
      maxQueuedBytes: 1024 * 1024,
      log: () => {},
    })
    const delivered: unknown[] = []
    transport.onmessage = (message) => void delivered.push('id' in message ? message.id : message)
    await transport.start()
    const request = (id: number) => `${JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' })}\n`
    stdin.write(request(1))
    await until(() => delivered.length === 1, 'the first request')
    await transport.send({ jsonrpc: '2.0', id: 1, result: {} })
    stdin.write(request(2) + request(3))
    stdin.write(request(4))
    // Congested: the lines stay in the pipe, unread, and nothing more is dispatched.
    expect(stdin.isPaused()).toBe(true)
    expect(stdin.readableLength).toBeGreaterThan(0)
    expect(delivered).toEqual([1])
    stdout.resume()
    await until(() => delivered.length === 4, 'the queued requests')
    expect(delivered).toEqual([1, 2, 3, 4])
    await transport.close()
  })

  test('at most maxInFlight requests run at once; a cancellation of a running one still gets through behind the queue', async () => {
    const server = await serve({ maxInFlight: 4 })
    server.send(INITIALIZE)
    for (let i = 1; i <= 10; i++) server.call(i, 'gate', `g${i}`)
    await until(() => server.running.size === 4, 'four calls running')
    expect([...server.running.keys()]).toEqual(['g1', 'g2', 'g3', 'g4'])
    server.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 2, reason: 'stop' } })
    await until(() => server.running.get('g2')?.aborted === true, 'g2 aborted')
    // Its slot is free: the next queued call starts.
    await until(() => server.running.has('g5'), 'g5 running')
    expect(server.running.size).toBe(5)
    // Four at a time: each opening of the gates lets the next queued calls in.
    await until(() => {
      server.open()
      return server.running.size === 10
    }, 'every call ran')
    server.open()
    const answers: { id?: unknown; result?: { content: { text: string }[] } }[] = []
    await until(() => {
      answers.push(...linesOf(server.stdout))
      return answers.filter((m) => typeof m.id === 'number').length === 9
    }, 'nine answers (no answer for the cancelled call)')
    const texts = answers
      .filter((m) => typeof m.id === 'number')
      .map((m) => m.result!.content[0]!.text)
      .sort()
    expect(texts).toEqual(['g1', 'g10', 'g3', 'g4', 'g5', 'g6', 'g7', 'g8', 'g9'])
  })

  test('a queued call cancelled before it started never runs and gets no answer; the calls around it do', async () => {
    const server = await serve({ maxInFlight: 2 })
    server.send(INITIALIZE)
    for (let i = 1; i <= 4; i++) server.call(i, 'gate', `g${i}`)
    await until(() => server.running.size === 2, 'two calls running')
    // g3 and g4 wait for a slot; g3 is cancelled there.
    server.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 3, reason: 'stop' } })
    await until(() => {
      server.open()
      return server.running.has('g4')
    }, 'g4 running')
    server.open()
    const answers: { id?: unknown; result?: { content: { text: string }[] } }[] = []
    await until(() => {
      answers.push(...linesOf(server.stdout))
      return answers.filter((m) => typeof m.id === 'number').length >= 3
    }, 'three answers')
    await new Promise((resolve) => setImmediate(resolve))
    answers.push(...linesOf(server.stdout))
    expect(
      answers
        .filter((m) => typeof m.id === 'number')
        .map((m) => [m.id, m.result!.content[0]!.text])
        .sort(),
    ).toEqual([
      [1, 'g1'],
      [2, 'g2'],
      [4, 'g4'],
    ])
    expect(server.running.has('g3')).toBe(false)
  })

  test('a call and its cancellation in one read of stdin: the call never runs and gets no answer', async () => {
    const server = await serve()
    server.send(INITIALIZE)
    const call = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'gate', arguments: { text: 'g7' } } }
    const cancel = {
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: 7, reason: 'changed my mind' },
    }
    server.stdin.write(`${JSON.stringify(call)}\n${JSON.stringify(cancel)}\n`)
    server.call(8, 'echo', 'after')
    const answers: { id?: unknown; result?: { content: { text: string }[] } }[] = []
    await until(() => {
      answers.push(...linesOf(server.stdout))
      return answers.some((m) => m.id === 8)
    }, 'the answer to the call after it')
    expect(server.running.has('g7')).toBe(false)
    expect(answers.map((m) => m.id)).toEqual(['init', 8])
  })

  test('any split of stdin into chunks, any mix of calls and cancellations: each call is answered at most once, with its own text, and every call never cancelled is answered (property)', async () => {
    const step = fc.oneof(
      {
        weight: 3,
        arbitrary: fc
          .string({ unit: 'grapheme', minLength: 1, maxLength: 30 })
          .map((text) => ({ kind: 'call' as const, text })),
      },
      { weight: 1, arbitrary: fc.nat(30).map((back) => ({ kind: 'cancel' as const, back })) },
    )
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { minLength: 1, maxLength: 30 }),
        fc.array(fc.nat(), { maxLength: 24 }),
        fc.integer({ min: 1, max: 4 }),
        async (steps, cuts, maxInFlight) => {
          const server = await serve({ maxInFlight })
          try {
            const lines = [JSON.stringify(INITIALIZE)]
            const calls = new Map<number, string>()
            const cancelled = new Set<number>()
            /** Where each call's line and each cancellation's line end (the byte offset of its newline). */
            const callEnd = new Map<number, number>()
            const cancels: { id: number; end: number }[] = []
            let offset = Buffer.byteLength(lines[0]!)
            const add = (line: string) => {
              lines.push(line)
              offset += 1 + Buffer.byteLength(line)
              return offset
            }
            for (const next of steps) {
              if (next.kind === 'call') {
                const id = calls.size + 1
                calls.set(id, next.text)
                callEnd.set(
                  id,
                  add(
                    JSON.stringify({
                      jsonrpc: '2.0',
                      id,
                      method: 'tools/call',
                      params: { name: 'echo', arguments: { text: next.text } },
                    }),
                  ),
                )
              } else if (calls.size > 0) {
                const id = calls.size - (next.back % calls.size)
                cancelled.add(id)
                cancels.push({
                  id,
                  end: add(
                    JSON.stringify({
                      jsonrpc: '2.0',
                      method: 'notifications/cancelled',
                      params: { requestId: id, reason: 'drawn' },
                    }),
                  ),
                })
              }
            }
            // Cut anywhere, inside a line or a multi-byte character too, and let the server run between chunks.
            const bytes = Buffer.from(`${lines.join('\n')}\n`)
            const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1))), bytes.length].sort((a, b) => a - b)
            const chunkOf = (at: number) => points.findIndex((point) => point > at)
            // A call whose line and whose cancellation end in the same chunk is read with it: it must never run.
            const neverRun = new Set(
              cancels.filter(({ id, end }) => chunkOf(callEnd.get(id)!) === chunkOf(end)).map(({ id }) => id),
            )
            let from = 0
            for (const at of points) {
              server.stdin.write(bytes.subarray(from, at))
              from = at
              await new Promise((resolve) => setImmediate(resolve))
            }
            const answers: { id?: unknown; result?: { content: { text: string }[] } }[] = []
            const due = [...calls.keys()].filter((id) => !cancelled.has(id))
            await until(() => {
              answers.push(...linesOf(server.stdout))
              return answers.some((m) => m.id === 'init') && due.every((id) => answers.some((m) => m.id === id))
            }, 'an answer to every call never cancelled')
            for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve))
            answers.push(...linesOf(server.stdout))
            const ids = answers.map((m) => m.id)
            expect(new Set(ids).size).toBe(ids.length)
            for (const answer of answers.filter((m) => m.id !== 'init')) {
              expect(calls.has(answer.id as number)).toBe(true)
              expect(neverRun.has(answer.id as number)).toBe(false)
              expect(answer.result?.content[0]?.text).toBe(calls.get(answer.id as number))
            }
          } finally {
            await t.dispose()
          }
        },
      ),
      { numRuns: 60 },
    )
  })

  test('end of stdin closes the connection', async () => {
    const server = await serve()
    server.send(INITIALIZE)
    server.stdin.end()
    await server.connection.closed
  })
})
