import type { Readable, Writable } from 'node:stream'
import type { Context } from 'cordis'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import type { JSONRPCMessage, JSONRPCRequest, RequestId } from '@modelcontextprotocol/sdk/types.js'
import { connect, type McpConnection, type McpOptions } from './connection.ts'
import { ErrorCode, isMessage } from './jsonrpc.ts'
import { LineSplitter } from '@deepseek-ai/dsh-mcp-wire'

export interface StdioOptions extends McpOptions {
  /** Default `process.stdin`. */
  stdin?: Readable
  /** Default `process.stdout`. */
  stdout?: Writable
  /** Longest accepted line (one JSON-RPC message), in bytes. Longer lines get a -32700 error. Default 16 MiB. */
  maxMessageBytes?: number
  /** Most requests dispatched and not yet answered; further requests wait in a queue. Default 32. */
  maxInFlight?: number
  /** Bytes of queued requests past which stdin is no longer read. Default 4 MiB. */
  maxQueuedBytes?: number
}

const MEBIBYTE = 1024 * 1024

/**
 * Serves one connection on stdin/stdout. The connection closes when stdin ends (the client went away) or stdout
 * fails (a broken pipe), so `closed` always resolves once the client is gone. When `stdout` is the process's own,
 * console output is sent to stderr meanwhile: stdout carries only JSON-RPC.
 */
export async function serveStdio(ctx: Context, options: StdioOptions = {}): Promise<McpConnection> {
  const stdin = options.stdin ?? process.stdin
  const stdout = options.stdout ?? process.stdout
  const transport = new LineTransport(stdin, stdout, {
    maxMessageBytes: options.maxMessageBytes ?? 16 * MEBIBYTE,
    maxInFlight: options.maxInFlight ?? 32,
    maxQueuedBytes: options.maxQueuedBytes ?? 4 * MEBIBYTE,
    log: options.log ?? (() => {}),
  })
  const restoreConsole = stdout === process.stdout ? consoleToStderr() : () => {}
  const connection = await connect(ctx, transport, options)
  void connection.closed.then(restoreConsole)
  return connection
}

/** Points the console methods that write to stdout at stderr; returns the undo. */
function consoleToStderr(): () => void {
  const names = ['log', 'info', 'debug', 'dir', 'table'] as const
  const saved = names.map((name) => [name, console[name]] as const)
  for (const name of names) (console as unknown as Record<string, unknown>)[name] = console.error
  return () => {
    for (const [name, method] of saved) (console as unknown as Record<string, unknown>)[name] = method
  }
}

interface LineTransportOptions {
  maxMessageBytes: number
  maxInFlight: number
  maxQueuedBytes: number
  log: (line: string) => void
}

/**
 * MCP's stdio framing (one JSON-RPC message per line), with what the SDK's transport lacks:
 * - a line that is not JSON gets a JSON-RPC parse error (-32700, without an id) on stdout, one that is JSON but not a
 *   JSON-RPC message an invalid-request error (-32600); blank lines are skipped; an over-long line is dropped
 *   up to its newline and answered with -32700, so a client without newlines cannot grow the buffer;
 * - backpressure: while stdout is congested (a write returned false, until 'drain') no request is dispatched and
 *   stdin is not read, so a client that sends requests but never reads the answers blocks in its own write
 *   instead of growing the server. At most `maxInFlight` requests run at once (the answers one congested write
 *   can leave in memory); later ones queue, and stdin is read on while the queue holds under `maxQueuedBytes`,
 *   so a cancellation or a roots/list answer still gets through behind them (notifications and responses are
 *   never queued).
 */
export class LineTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void

  private readonly lines: LineSplitter
  /** Requests read and parsed, waiting for room (in-flight slots, an uncongested stdout). */
  private readonly waiting: { request: JSONRPCRequest; bytes: number }[] = []
  private waitingBytes = 0
  private readonly inFlight = new Set<RequestId>()
  private congested = false
  private closed = false

  constructor(
    private readonly stdin: Readable,
    private readonly stdout: Writable,
    private readonly options: LineTransportOptions,
  ) {
    this.lines = new LineSplitter(
      options.maxMessageBytes,
      (line) => {
        if (!this.closed) this.parse(line.toString('utf8').replace(/\r$/, ''), line.length)
      },
      () => this.tooLong(),
    )
  }

  async start(): Promise<void> {
    this.stdin.on('data', this.onData)
    this.stdin.on('end', this.onEnd)
    this.stdin.on('close', this.onEnd)
    this.stdin.on('error', this.onStdinError)
    this.stdout.on('drain', this.onDrain)
    this.stdout.on('error', this.onStdoutError)
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) return
    if (('result' in message || 'error' in message) && message.id !== undefined) this.inFlight.delete(message.id)
    this.write(message)
    this.flow()
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.stdin.off('data', this.onData)
    this.stdin.off('end', this.onEnd)
    this.stdin.off('close', this.onEnd)
    this.stdin.off('error', this.onStdinError)
    this.stdout.off('drain', this.onDrain)
    // A late EPIPE after close must not become an uncaught 'error' event.
    this.stdout.off('error', this.onStdoutError)
    this.stdout.on('error', () => {})
    this.stdin.pause()
    this.lines.clear()
    this.waiting.length = 0
    this.waitingBytes = 0
    this.onclose?.()
  }

  private write(message: JSONRPCMessage): void {
    if (!this.stdout.write(`${JSON.stringify(message)}\n`)) this.congested = true
  }

  private readonly onData = (chunk: Buffer | string) => {
    const data = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk
    this.lines.push(data)
    if (!this.closed) this.flow()
  }

  private tooLong(): void {
    this.options.log(`a message on stdin is longer than ${this.options.maxMessageBytes} bytes; dropped`)
    this.reject(
      undefined,
      ErrorCode.ParseError,
      `Parse error: message longer than ${this.options.maxMessageBytes} bytes`,
    )
  }

  private parse(line: string, bytes: number): void {
    if (line.trim() === '') return
    let value: unknown
    try {
      value = JSON.parse(line)
    } catch (error) {
      this.options.log(`stdin line is not JSON (${(error as Error).message})`)
      return this.reject(undefined, ErrorCode.ParseError, `Parse error: ${(error as Error).message}`)
    }
    if (!isMessage(value)) {
      const id = idOf(value)
      this.options.log('stdin line is JSON but not a JSON-RPC message')
      return this.reject(
        id,
        ErrorCode.InvalidRequest,
        'Invalid Request: not a JSON-RPC 2.0 request, notification or response',
      )
    }
    const message = value
    if ('method' in message && 'id' in message) {
      this.waiting.push({ request: message as JSONRPCRequest, bytes })
      this.waitingBytes += bytes
      return
    }
    if ('method' in message && message.method === 'notifications/cancelled') {
      // Nothing is answered for a cancelled request: a running one frees its slot now, and one still waiting for a
      // slot (or read in the same chunk as its cancellation) is dropped before it ever runs.
      const requestId = (message.params as { requestId?: RequestId } | undefined)?.requestId
      if (requestId !== undefined) {
        this.inFlight.delete(requestId)
        this.dropWaiting(requestId)
      }
    }
    this.onmessage?.(message)
  }

  private dropWaiting(id: RequestId): void {
    const at = this.waiting.findIndex(({ request }) => request.id === id)
    if (at === -1) return
    this.waitingBytes -= this.waiting[at]!.bytes
    this.waiting.splice(at, 1)
  }

  private reject(id: RequestId | undefined, code: number, message: string): void {
    // Without a readable id the answer has none: MCP's schema makes the id of an error optional for this (plain
    // JSON-RPC 2.0 would send `id: null`, which MCP SDK clients refuse as a malformed message).
    this.write({ jsonrpc: '2.0', ...(id === undefined ? {} : { id }), error: { code, message } })
  }

  /** Dispatches waiting requests while there is room, and reads stdin only then. */
  private flow(): void {
    while (
      !this.closed &&
      !this.congested &&
      this.inFlight.size < this.options.maxInFlight &&
      this.waiting.length > 0
    ) {
      const { request, bytes } = this.waiting.shift()!
      this.waitingBytes -= bytes
      this.inFlight.add(request.id)
      this.onmessage?.(request)
    }
    if (this.closed) return
    if (this.congested || this.waitingBytes > this.options.maxQueuedBytes) this.stdin.pause()
    else this.stdin.resume()
  }

  private readonly onDrain = () => {
    this.congested = false
    this.flow()
  }

  private readonly onEnd = () => void this.close()

  private readonly onStdinError = (error: Error) => this.onerror?.(error)

  private readonly onStdoutError = (error: Error) => {
    this.options.log(`stdout failed (${error.message}); closing`)
    this.onerror?.(error)
    void this.close()
  }
}

/** The id of something that looks like a request, for an error answer; undefined when it has none usable. */
function idOf(value: unknown): RequestId | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined
  const id = (value as { id?: unknown }).id
  return typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id)) ? id : undefined
}
