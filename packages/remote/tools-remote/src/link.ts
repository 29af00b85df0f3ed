import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import {
  ErrorCode,
  LoggingMessageNotificationSchema,
  McpError,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js'
import * as z from 'zod'
import type { SubprocessService } from '@deepseek-ai/dsh-subprocess'
import { CoreErrorCode, HarnessError } from '@deepseek-ai/dsh-tools'
import { RemoteError, RemoteErrorCode } from './errors.ts'
import { ProcessTransport } from './transport.ts'
import { httpReason, protocolErrorText, unavailableText, type ExitFacts } from './text.ts'

export type Endpoint =
  | { kind: 'command'; argv: readonly string[]; cwd: string; env: Readonly<Record<string, string | undefined>> }
  | { kind: 'url'; url: URL; token: string }

export interface LinkOptions {
  label: string
  clientInfo: { name: string; version: string }
  connectTimeoutMs: number
  idleTimeoutMs: number
  graceMs: number
  /** A logging notification from the remote (a background task's completion notice, say). */
  onLog: (text: string) => void
  log: (line: string) => void
}

const STDERR_TAIL_BYTES = 16_384
/**
 * tools/list with each tool kept exactly as the remote sent it: the SDK's own result schema rebuilds every
 * inputSchema in its own key order, and a tool list is a prompt prefix that should match the remote's bytes.
 */
const ToolsPage = z.looseObject({ tools: z.array(z.any()), nextCursor: z.string().optional() })
/** How long a lost connection's process may take to report its exit status, for the error message. */
const EXIT_REPORT_MS = 5000

function unavailable(message: string, cause?: unknown): RemoteError {
  return new RemoteError(
    message,
    cause === undefined
      ? { code: RemoteErrorCode.REMOTE_UNAVAILABLE }
      : { code: RemoteErrorCode.REMOTE_UNAVAILABLE, cause },
  )
}

/** One MCP connection to the remote dsh. Dead once `closed`; the plugin then opens a new one on the next call. */
export class RemoteLink {
  closed = false
  private process: ProcessTransport | undefined
  private http: StreamableHTTPClientTransport | undefined
  private stderr: (() => string) | undefined
  private exited: Promise<ExitFacts> | undefined
  private closing: Promise<void> | undefined

  private constructor(
    readonly client: Client,
    private readonly options: LinkOptions,
  ) {}

  /** Connects and completes the MCP handshake, or throws REMOTE_UNAVAILABLE saying why (nothing is left running). */
  static async open(
    endpoint: Endpoint,
    subprocess: SubprocessService | undefined,
    options: LinkOptions,
  ): Promise<RemoteLink> {
    const client = new Client(options.clientInfo, { capabilities: {} })
    const link = new RemoteLink(client, options)
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      const data = notification.params.data
      options.onLog(typeof data === 'string' ? data : JSON.stringify(data))
    })
    client.onclose = () => {
      link.closed = true
      // The far side went away (or stdout closed): reap the process group if it still runs.
      void link.close()
    }
    client.onerror = (error) => options.log(`remote ${options.label}: ${error.message}`)
    let transport: Transport
    if (endpoint.kind === 'command') {
      if (!subprocess)
        throw unavailable(unavailableText.spawnFailed(options.label, 'no ctx.subprocess provider is loaded'))
      let handle
      try {
        handle = await subprocess.spawn({
          argv: endpoint.argv,
          cwd: endpoint.cwd,
          env: endpoint.env,
          stdin: 'pipe',
          stdout: 'pipe',
          stderr: { maxBytes: STDERR_TAIL_BYTES },
          graceMs: options.graceMs,
        })
      } catch (error) {
        throw unavailable(unavailableText.spawnFailed(options.label, (error as Error).message), error)
      }
      const stderr = handle.collected.stderr
      link.stderr = () => stderr?.readFrom(0).text ?? ''
      link.exited = handle.done.then((status) => ({ ...status, stderr: link.stderr?.() ?? '' }))
      transport = link.process = new ProcessTransport(handle, options.graceMs)
    } else {
      transport = link.http = new StreamableHTTPClientTransport(endpoint.url, {
        requestInit: { headers: { Authorization: `Bearer ${endpoint.token}` } },
      })
    }
    try {
      await client.connect(transport, { timeout: options.connectTimeoutMs })
    } catch (error) {
      const exit = await link.exitFacts()
      await link.close()
      if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
        throw unavailable(
          unavailableText.handshakeTimeout(options.label, options.connectTimeoutMs, exit, link.process?.noise),
          error,
        )
      }
      if (endpoint.kind === 'url')
        throw unavailable(unavailableText.http(options.label, describeHttpFailure(error)), error)
      // Once the command has ended, its exit and stderr say why; a write error (EPIPE) on the way says nothing.
      const reason = exit ? 'the command ended before the MCP handshake completed' : describe(error)
      throw unavailable(unavailableText.handshakeFailed(options.label, reason, exit, link.process?.noise), error)
    }
    return link
  }

  /** Every tool the remote lists (all pages). */
  async tools(): Promise<Tool[]> {
    const tools: Tool[] = []
    let cursor: string | undefined
    do {
      const page = await this.client.request(
        { method: 'tools/list', params: cursor === undefined ? {} : { cursor } },
        ToolsPage,
        { timeout: this.options.connectTimeoutMs },
      )
      tools.push(...(page.tools as Tool[]))
      cursor = page.nextCursor
    } while (cursor !== undefined)
    return tools
  }

  /**
   * One call. Resolves with the remote's result; rejects with ABORTED when `signal` aborted (the remote was sent
   * a cancellation), REMOTE_UNAVAILABLE when the connection was lost or stalled (this link is then closed), or
   * REMOTE_PROTOCOL_ERROR when the remote answered with a JSON-RPC error.
   */
  async call(
    name: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
    onProgress: (progress: { progress: number; message?: string }) => void,
  ): Promise<CallToolResult> {
    if (this.closed) throw unavailable(unavailableText.lostDuringCall(this.options.label, await this.exitFacts()))
    try {
      // Asking for progress makes a dsh report a running call every few seconds: that is the liveness signal
      // which resets the idle timeout, so a long bash may run as long as it needs while a dead link is noticed.
      return (await this.client.callTool({ name, arguments: args }, undefined, {
        signal,
        timeout: this.options.idleTimeoutMs,
        resetTimeoutOnProgress: true,
        onprogress: ({ progress, message }) => onProgress(message === undefined ? { progress } : { progress, message }),
      })) as CallToolResult
    } catch (error) {
      if (signal.aborted) throw new HarnessError('tool call aborted', { code: CoreErrorCode.ABORTED, cause: error })
      if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
        void this.close()
        throw unavailable(unavailableText.stalled(this.options.label, this.options.idleTimeoutMs), error)
      }
      if (error instanceof McpError && error.code !== ErrorCode.ConnectionClosed) {
        throw new RemoteError(protocolErrorText(this.options.label, error.message), {
          code: RemoteErrorCode.REMOTE_PROTOCOL_ERROR,
          cause: error,
        })
      }
      if (this.http && !(error instanceof McpError)) {
        void this.close()
        throw unavailable(unavailableText.http(this.options.label, describeHttpFailure(error)), error)
      }
      void this.close()
      throw unavailable(unavailableText.lostDuringCall(this.options.label, await this.exitFacts()), error)
    }
  }

  /**
   * Closes the connection: over a command, ends the remote's stdin (the remote dsh stops everything it started)
   * and reaps the process group; over HTTP, ends the MCP session (DELETE), which does the same on the server.
   */
  close(): Promise<void> {
    this.closed = true
    return (this.closing ??= (async () => {
      if (this.http) {
        await this.http.terminateSession().catch(() => {})
        await this.client.close().catch(() => {})
      } else {
        await this.process?.close()
        await this.client.close().catch(() => {})
      }
    })())
  }

  /** How the command ended (bounded wait), for messages; undefined over HTTP or when it still runs. */
  private async exitFacts(): Promise<ExitFacts | undefined> {
    if (!this.exited) return undefined
    let timer: NodeJS.Timeout | undefined
    const facts = await Promise.race([
      this.exited,
      new Promise<undefined>((resolve) => {
        timer = setTimeout(() => resolve(undefined), EXIT_REPORT_MS)
      }),
    ])
    clearTimeout(timer)
    return facts
  }
}

function describe(error: unknown): string {
  if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed)
    return 'the connection closed during the handshake'
  return error instanceof Error ? error.message : String(error)
}

/** fetch's own errors hide the reason in `cause` (ECONNREFUSED and the like). */
function describeHttpFailure(error: unknown): string {
  if (error instanceof StreamableHTTPError) return httpReason(error.code, error.message)
  if (error instanceof Error) {
    const cause = (error as Error & { cause?: { code?: string; message?: string } }).cause
    const detail = cause?.code ?? cause?.message
    return detail ? `${error.message} (${detail})` : error.message
  }
  return String(error)
}
