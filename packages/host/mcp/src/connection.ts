import type { Context } from 'cordis'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import type { ProgressToken } from '@modelcontextprotocol/sdk/types.js'
import { createSession, type ToolSession } from '@deepseek-ai/dsh-tools'
import type {} from '@deepseek-ai/dsh-system-prompt'
import { McpEngine } from './protocol.ts'
import { ERROR_META_KEY, instructionsPreamble } from '@deepseek-ai/dsh-mcp-wire'
import { progressMessage, toCallToolResult, toMcpTool } from './results.ts'
import { outsideAllowed, rootDirectory, type RefusedRoot } from './session.ts'

export interface McpOptions {
  /** Reported to the client in the initialize result. Default `{ name: 'dsh', version: '0.0.0' }`. */
  serverInfo?: { name: string; version: string }
  /** The session's directory. Unset: the client's first `file://` root, else `process.cwd()`. */
  cwd?: string
  /** Default `mcp-<n>`. Only a label: the session's directories get random names. */
  sessionId?: string
  /** How often a call that the client asked progress for reports that it still runs. Default 3000 ms. */
  progressIntervalMs?: number
  /**
   * The directories a client's root must lie inside (an HTTP server's own roots: `--cwd`, `workspace.roots`). A
   * client whose roots are all outside them gets no session: each call is refused with a text that says why.
   * Unset (stdio): the client's first root is taken as it is.
   */
  roots?: readonly string[]
  /** Ask for the client's roots at its first call, not as soon as it is initialized (HTTP). Default false. */
  rootsAtFirstCall?: boolean
  /** How long the first call waits for the client's answer to roots/list before using `process.cwd()`. Default 1000 ms. */
  rootsTimeoutMs?: number
  /** Host diagnostics (never the protocol stream). Default: ignored. */
  log?: (line: string) => void
}

export interface McpConnection {
  /** The protocol engine serving this connection. */
  readonly server: McpEngine
  readonly sessionId: string
  /** The session tools run in, once its directory is known (after roots/list when the client has roots). */
  session(): Promise<ToolSession>
  /** Resolves when the connection has closed, from either side, and its session's tasks were stopped. */
  readonly closed: Promise<void>
  /** Closes the connection: calls in flight are aborted, the session's background tasks are killed. */
  close(): Promise<void>
}

let connections = 0

/**
 * Serves `ctx.tools` on one MCP connection, as one session. Tools are listed with their JSON Schemas verbatim;
 * a call runs through the whole pipeline with the request's signal (a client cancellation aborts it); the
 * session's finished background tasks are announced as `info` log messages. The connection closes itself
 * when `ctx` is disposed.
 */
export async function connect(ctx: Context, transport: Transport, options: McpOptions = {}): Promise<McpConnection> {
  const sessionId = options.sessionId ?? `mcp-${++connections}`
  const log = options.log ?? (() => {})
  const progressIntervalMs = options.progressIntervalMs ?? 3000
  const serverInfo = options.serverInfo ?? { name: 'dsh', version: '0.0.0' }
  const prompt = ctx.get('systemPrompt')?.assemble()
  const instructions = prompt
    ? `${instructionsPreamble(
        serverInfo.name,
        ctx.tools.list().map((tool) => tool.name),
      )}\n\n${prompt}`
    : undefined
  let session: Promise<ToolSession | RefusedRoot> | undefined
  let current: ToolSession | undefined
  const settle = (): Promise<ToolSession | RefusedRoot> =>
    (session ??= (async () => {
      const root: string | RefusedRoot =
        options.cwd ??
        (await rootDirectory(server, options.rootsTimeoutMs ?? 1000, log, options.roots)) ??
        process.cwd()
      if (typeof root !== 'string') return root
      // Pinned here, once: a later rename of the path, or a link put in its place, never moves the session.
      const made = createSession({ id: sessionId, cwd: root })
      const refused = outsideAllowed(made.cwd, options.roots)
      if (ended || refused) void made.dispose()
      if (refused) {
        log(`refused a session: ${refused.refused}`)
        return refused
      }
      current = made
      return made
    })())
  const resolveSession = async (): Promise<ToolSession> => {
    const settled = await settle()
    if ('refused' in settled) throw new Error(settled.refused)
    return settled
  }
  const server = new McpEngine({
    serverInfo,
    instructions,
    listTools: () => ctx.tools.schemas().map(toMcpTool),
    callTool: async ({ name, arguments: args }, extra) => {
      const current = await settle()
      if ('refused' in current) {
        return {
          content: [{ type: 'text', text: `Error: ${current.refused}` }],
          isError: true,
          _meta: { [ERROR_META_KEY]: { name: 'McpError', code: 'WORKSPACE_ROOT_REFUSED' } },
        }
      }
      const stopProgress = reportProgress(extra._meta?.progressToken, name, progressIntervalMs, (params) =>
        extra.sendNotification({ method: 'notifications/progress', params }),
      )
      try {
        const result = await ctx.tools.execute(name, args ?? {}, { signal: extra.signal, session: current })
        return toCallToolResult(result)
      } finally {
        stopProgress()
      }
    },
  })
  server.onerror = (error) => log(`protocol error: ${error.message}`)
  // Ask for the roots as soon as the client is ready, so that the first call does not wait for them. A client that
  // sends `initialized` before its `initialize` was handled (both in one read of stdin) has no capabilities known
  // yet: its first call asks instead, rather than settling the session without its roots.
  // Over HTTP the question could only travel on the client's GET stream, which it opens after `initialized`: asked
  // then, it would be lost and the session settled without the roots. There the first call asks.
  server.oninitialized = () => {
    if (!options.rootsAtFirstCall && server.getClientCapabilities() !== undefined) void settle()
  }

  // Session notices (a background task finished) travel on the generic channel of ctx.tools: no seam's package here.
  const offNotice = ctx.on('tools/session-notice', (notice) => {
    if (notice.session !== current) return
    server
      .sendLoggingMessage({ level: 'info', logger: 'dsh', data: notice.text })
      .catch((error: Error) => log(`could not send a session notice: ${error.message}`))
  })

  let finish!: () => void
  const closed = new Promise<void>((resolve) => {
    finish = resolve
  })
  let unbind: (() => unknown) | undefined
  let ended = false
  server.onclose = () => {
    if (ended) return
    ended = true
    offNotice()
    void unbind?.()
    // The session ends what it owns (its background tasks, its private /tmp) in one dispose().
    Promise.resolve(session)
      .then((settled) => (settled && !('refused' in settled) ? settled.dispose() : undefined))
      .then(finish, (error: Error) => {
        log(`could not end the session: ${error.message}`)
        finish()
      })
  }
  const close = async () => {
    await server.close()
    await closed
  }
  // Disposing the context (or the plugin that owns it) closes the connection.
  unbind = ctx.effect(() => () => void server.close(), `mcp connection ${sessionId}`)
  await server.connect(transport)
  return { server, sessionId, session: resolveSession, closed, close }
}

type ProgressParams = { progressToken: ProgressToken; progress: number; message: string }

/** While a call runs, tells a client that asked for progress (a progressToken) that it still runs. */
function reportProgress(
  token: ProgressToken | undefined,
  tool: string,
  everyMs: number,
  send: (params: ProgressParams) => Promise<void>,
): () => void {
  if (token === undefined) return () => {}
  const started = Date.now()
  let progress = 0
  const timer = setInterval(() => {
    send({ progressToken: token, progress: ++progress, message: progressMessage(tool, Date.now() - started) }).catch(
      () => {},
    )
  }, everyMs)
  timer.unref()
  return () => clearInterval(timer)
}
