import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js'
import type {
  CallToolResult,
  ClientCapabilities,
  Implementation,
  JSONRPCMessage,
  LoggingLevel,
  MessageExtraInfo,
  ProgressToken,
  RequestId,
  Root,
  Tool,
} from '@modelcontextprotocol/sdk/types.js'
import { ErrorCode, initializeProblem, isId, isObject, messageKind, type JsonObject } from './jsonrpc.ts'

// The server side of MCP's JSON-RPC, for exactly what dsh serves: initialize, ping, logging/setLevel, tools/list and
// tools/call; roots/list to the client; logging, progress and cancellation. It speaks over the SDK's `Transport`
// interface (a type only) and behaves as the SDK's `Server` 1.32.2 does for these (see the package README for where
// it deviates), without loading the SDK or zod (docs/decisions/2026-12-01-own-mcp-server-engine.md).

/** The newest protocol revision served, and every one accepted (the SDK 1.32.2's `LATEST_PROTOCOL_VERSION` and `SUPPORTED_PROTOCOL_VERSIONS`). */
export const LATEST_PROTOCOL_VERSION = '2025-11-25'
export const SUPPORTED_PROTOCOL_VERSIONS: readonly string[] = [
  LATEST_PROTOCOL_VERSION,
  '2025-06-18',
  '2025-03-26',
  '2024-11-05',
  '2024-10-07',
]

/** Logging levels, least severe first. */
const LOGGING_LEVELS: readonly LoggingLevel[] = [
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
]

/** How long a request to the client waits for its answer unless told otherwise (the SDK's default). */
const DEFAULT_REQUEST_TIMEOUT_MS = 60_000

/** A JSON-RPC error, sent or received: `MCP error <code>: <message>`, as the SDK's `McpError` reads. */
export class McpProtocolError extends Error {
  override name = 'McpError'
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(`MCP error ${code}: ${message}`)
  }
}

/** A handler's error, sent to the client with exactly this code and message (the SDK sends a thrown `McpError` so). */
class RequestError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message)
  }
}

/** What a `tools/call` handler gets besides its params. */
export interface RequestExtra {
  /** Aborts when the client cancels the request or the connection closes. */
  readonly signal: AbortSignal
  readonly requestId: RequestId
  /** The transport's session (Streamable HTTP), if any. */
  readonly sessionId?: string | undefined
  readonly _meta?: { progressToken?: ProgressToken; [key: string]: unknown } | undefined
  readonly authInfo?: MessageExtraInfo['authInfo']
  readonly requestInfo?: MessageExtraInfo['requestInfo']
  /** Sends a notification tied to this request (on its stream, over HTTP); nothing once the request was cancelled. */
  sendNotification(notification: { method: string; params?: JsonObject }): Promise<void>
}

export interface CallToolParams {
  name: string
  arguments?: Record<string, unknown>
}

export interface McpEngineOptions {
  serverInfo: Implementation
  /** Sent in the initialize result when not empty. */
  instructions?: string | undefined
  listTools(): Tool[]
  callTool(params: CallToolParams, extra: RequestExtra): Promise<CallToolResult>
}

type Handler = (params: unknown, extra: RequestExtra) => unknown

interface Pending {
  settle(outcome: { result: JsonObject } | { error: Error }): void
  timer: ReturnType<typeof setTimeout>
}

/**
 * One MCP server connection: answers the client's requests, sends notifications and requests of its own, on one
 * transport. Capabilities `tools` and `logging`.
 */
export class McpEngine {
  /** The connection closed (either side); every request in flight was aborted. */
  onclose?: () => void
  /** A protocol problem that has no one to answer to (a stray response, a failed send). */
  onerror?: (error: Error) => void
  /** The client sent `notifications/initialized`. */
  oninitialized?: () => void
  /**
   * A request the client cancelled has ended, and (MCP's rule) nothing will answer it: a transport that holds a
   * stream open for each request's answer (Streamable HTTP) can close that stream now.
   */
  onunanswered?: (id: RequestId) => void

  private transport: Transport | undefined
  private clientCapabilities: ClientCapabilities | undefined
  private clientVersion: Implementation | undefined
  private loggingLevel: LoggingLevel | undefined
  private nextId = 0
  private readonly pending = new Map<RequestId, Pending>()
  private readonly running = new Map<RequestId, AbortController>()
  private readonly handlers: ReadonlyMap<string, Handler>
  /** Settles once the answer to an `initialize` being handled is sent: no request to the client goes before it. */
  private answeringInitialize: Promise<unknown> | undefined

  constructor(private readonly options: McpEngineOptions) {
    this.handlers = new Map<string, Handler>([
      ['initialize', (params) => this.initialize(params)],
      ['ping', () => ({})],
      ['logging/setLevel', (params) => this.setLevel(params)],
      [
        'tools/list',
        (params) => {
          if (isObject(params) && params.cursor !== undefined && typeof params.cursor !== 'string') {
            throw invalid('tools/list', 'params.cursor must be a string')
          }
          return { tools: this.options.listTools() }
        },
      ],
      ['tools/call', (params, extra) => this.options.callTool(callParams(params), extra)],
    ])
  }

  /** Attaches to `transport` and starts it. Callbacks already set on the transport keep being called first. */
  async connect(transport: Transport): Promise<void> {
    if (this.transport) throw new Error('Already connected to a transport')
    this.transport = transport
    const { onclose, onerror, onmessage } = transport
    transport.onclose = () => {
      onclose?.()
      this.closed()
    }
    transport.onerror = (error) => {
      onerror?.(error)
      this.onerror?.(error)
    }
    transport.onmessage = (message, extra) => {
      onmessage?.(message, extra)
      this.receive(message, extra)
    }
    await transport.start()
  }

  /** Closes the transport; `onclose` follows. */
  async close(): Promise<void> {
    await this.transport?.close()
  }

  /** The client's capabilities, once it sent initialize. */
  getClientCapabilities(): ClientCapabilities | undefined {
    return this.clientCapabilities
  }

  /** The client's name and version, once it sent initialize. */
  getClientVersion(): Implementation | undefined {
    return this.clientVersion
  }

  /** Asks the client for its roots; rejects with `MCP error -32001: Request timed out` after `timeout` ms. */
  async listRoots(options: { timeout?: number } = {}): Promise<{ roots: Root[] }> {
    const result = await this.request('roots/list', undefined, options.timeout ?? DEFAULT_REQUEST_TIMEOUT_MS)
    const roots = result.roots
    const valid =
      Array.isArray(roots) &&
      roots.every(
        (root) =>
          isObject(root) &&
          typeof root.uri === 'string' &&
          root.uri.startsWith('file://') &&
          (root.name === undefined || typeof root.name === 'string'),
      )
    if (!valid) throw new Error('roots/list answer is malformed: expected roots, each with a file:// uri')
    return result as { roots: Root[] }
  }

  /** A `notifications/message`, unless the client asked for a higher level with `logging/setLevel`. */
  async sendLoggingMessage(params: { level: LoggingLevel; logger?: string; data: unknown }): Promise<void> {
    if (
      this.loggingLevel !== undefined &&
      LOGGING_LEVELS.indexOf(params.level) < LOGGING_LEVELS.indexOf(this.loggingLevel)
    )
      return
    await this.notification({ method: 'notifications/message', params }, {})
  }

  private async notification(
    notification: { method: string; params?: JsonObject },
    options: TransportSendOptions,
  ): Promise<void> {
    if (!this.transport) throw new Error('Not connected')
    await this.transport.send({ ...notification, jsonrpc: '2.0' } as JSONRPCMessage, options)
  }

  private async request(method: string, params: JsonObject | undefined, timeoutMs: number): Promise<JsonObject> {
    // A client that sent more behind its initialize (one read of stdin) gets the initialize answer first.
    await this.answeringInitialize
    return new Promise((resolve, reject) => {
      const transport = this.transport
      if (!transport) return reject(new Error('Not connected'))
      const id = this.nextId++
      const cancel = (error: McpProtocolError) => {
        this.pending.delete(id)
        transport
          .send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: String(error) } })
          .catch((failure: unknown) => this.fail(`Failed to send cancellation: ${failure}`))
        reject(error)
      }
      const timer = setTimeout(
        () => cancel(new McpProtocolError(ErrorCode.RequestTimeout, 'Request timed out', { timeout: timeoutMs })),
        timeoutMs,
      )
      this.pending.set(id, {
        timer,
        settle: (outcome) => ('result' in outcome ? resolve(outcome.result) : reject(outcome.error)),
      })
      transport
        .send({ jsonrpc: '2.0', id, method, ...(params ? { params } : {}) } as JSONRPCMessage)
        .catch((error: Error) => {
          clearTimeout(timer)
          this.pending.delete(id)
          reject(error)
        })
    })
  }

  private receive(message: JSONRPCMessage, extra: MessageExtraInfo | undefined): void {
    const value = message as unknown as JsonObject
    switch (messageKind(message)) {
      case 'request':
        return this.dispatch(value, extra)
      case 'notification':
        return this.notified(value)
      case 'result':
      case 'error':
        return this.answered(value)
      default:
        return this.fail(`Unknown message type: ${JSON.stringify(message)}`)
    }
  }

  private dispatch(request: JsonObject, info: MessageExtraInfo | undefined): void {
    const id = request.id as RequestId
    const transport = this.transport
    const handler = this.handlers.get(request.method as string)
    if (!handler) {
      transport
        ?.send({ jsonrpc: '2.0', id, error: { code: ErrorCode.MethodNotFound, message: 'Method not found' } })
        .catch((error: unknown) => this.fail(`Failed to send an error response: ${error}`))
      return
    }
    const controller = new AbortController()
    this.running.set(id, controller)
    const params = request.params as JsonObject | undefined
    const extra: RequestExtra = {
      signal: controller.signal,
      requestId: id,
      sessionId: transport?.sessionId,
      _meta: params?._meta as RequestExtra['_meta'],
      authInfo: info?.authInfo,
      requestInfo: info?.requestInfo,
      sendNotification: async (notification) => {
        if (controller.signal.aborted) return
        await this.notification(notification, { relatedRequestId: id })
      },
    }
    // Starting from a resolved promise turns a synchronous throw into a rejection too.
    const answered = Promise.resolve()
      .then(() => handler(params, extra))
      .then(
        async (result) => {
          if (controller.signal.aborted) return this.unanswered(id) // cancelled: no answer (MCP's rule)
          await transport?.send({ jsonrpc: '2.0', id, result } as JSONRPCMessage)
        },
        async (error: unknown) => {
          if (controller.signal.aborted) return this.unanswered(id)
          await transport?.send({ jsonrpc: '2.0', id, error: errorObject(error) })
        },
      )
      .catch((error: unknown) => this.fail(`Failed to send response: ${error}`))
      .finally(() => {
        if (this.running.get(id) === controller) this.running.delete(id)
      })
    if (request.method === 'initialize') this.answeringInitialize = answered
  }

  private notified(notification: JsonObject): void {
    const params = notification.params as JsonObject | undefined
    switch (notification.method) {
      case 'notifications/cancelled': {
        const requestId = params?.requestId
        if (requestId !== undefined && !isId(requestId))
          return this.fail('Uncaught error in notification handler: malformed notifications/cancelled')
        if (requestId !== undefined) this.running.get(requestId)?.abort(params?.reason)
        return
      }
      case 'notifications/initialized':
        try {
          this.oninitialized?.()
        } catch (error) {
          this.fail(`Uncaught error in notification handler: ${error}`)
        }
        return
      case 'notifications/progress':
        // This server asks for no progress: every token is unknown.
        return this.fail(`Received a progress notification for an unknown token: ${JSON.stringify(notification)}`)
      default:
      // Notifications nobody subscribed to are ignored.
    }
  }

  private answered(response: JsonObject): void {
    const id = Number(response.id)
    const pending = this.pending.get(id)
    if (!pending) return this.fail(`Received a response for an unknown message ID: ${JSON.stringify(response)}`)
    this.pending.delete(id)
    clearTimeout(pending.timer)
    if ('result' in response) return pending.settle({ result: response.result as JsonObject })
    const error = response.error as { code: number; message: string; data?: unknown }
    pending.settle({ error: new McpProtocolError(error.code, error.message, error.data) })
  }

  private closed(): void {
    const pending = [...this.pending.values()]
    this.pending.clear()
    for (const { timer } of pending) clearTimeout(timer)
    // Calls in flight stop, and send nothing more.
    for (const controller of this.running.values()) controller.abort()
    this.running.clear()
    this.transport = undefined
    this.onclose?.()
    const error = new McpProtocolError(ErrorCode.ConnectionClosed, 'Connection closed')
    for (const { settle } of pending) settle({ error })
  }

  /** Only while connected: a closed connection has no streams left to close. */
  private unanswered(id: RequestId): void {
    if (this.transport) this.onunanswered?.(id)
  }

  private fail(message: string): void {
    this.onerror?.(new Error(message))
  }

  private initialize(params: unknown): JsonObject {
    const problem = initializeProblem(params)
    if (problem !== undefined) throw invalid('initialize', problem)
    const { protocolVersion, capabilities, clientInfo } = params as {
      protocolVersion: string
      capabilities: ClientCapabilities
      clientInfo: Implementation
    }
    this.clientCapabilities = capabilities
    this.clientVersion = clientInfo
    return {
      // The client's revision when it is one we speak, else our newest: the client then decides whether to go on.
      protocolVersion: SUPPORTED_PROTOCOL_VERSIONS.includes(protocolVersion)
        ? protocolVersion
        : LATEST_PROTOCOL_VERSION,
      capabilities: { tools: {}, logging: {} },
      serverInfo: this.options.serverInfo,
      ...(this.options.instructions ? { instructions: this.options.instructions } : {}),
    }
  }

  private setLevel(params: unknown): JsonObject {
    const level = isObject(params) ? params.level : undefined
    if (!LOGGING_LEVELS.includes(level as LoggingLevel)) {
      throw invalid('logging/setLevel', `params.level must be one of ${LOGGING_LEVELS.join(', ')}`)
    }
    this.loggingLevel = level as LoggingLevel
    return {}
  }
}

function invalid(method: string, problem: string): RequestError {
  return new RequestError(ErrorCode.InvalidParams, `Invalid ${method} request: ${problem}`)
}

/** The params of a `tools/call`, checked as the SDK's `CallToolRequestSchema` does. */
function callParams(params: unknown): CallToolParams {
  if (!isObject(params)) throw invalid('tools/call', 'params must be an object')
  if (typeof params.name !== 'string') throw invalid('tools/call', 'params.name must be a string')
  if (params.arguments !== undefined && !isObject(params.arguments))
    throw invalid('tools/call', 'params.arguments must be an object')
  const task = params.task
  if (task !== undefined && !(isObject(task) && (task.ttl === undefined || typeof task.ttl === 'number'))) {
    throw invalid('tools/call', 'params.task must be an object with a numeric ttl')
  }
  return { name: params.name, ...(params.arguments === undefined ? {} : { arguments: params.arguments }) }
}

/** A thrown value as a JSON-RPC error object: its integer `code` (else -32603), message and `data`, as the SDK sends them. */
function errorObject(error: unknown): { code: number; message: string; data?: unknown } {
  const fields = (typeof error === 'object' && error !== null ? error : {}) as {
    code?: unknown
    message?: unknown
    data?: unknown
  }
  return {
    code: Number.isSafeInteger(fields.code) ? (fields.code as number) : ErrorCode.InternalError,
    message: typeof fields.message === 'string' ? fields.message : 'Internal error',
    ...(fields.data === undefined ? {} : { data: fields.data }),
  }
}
