import { createHash, randomUUID, timingSafeEqual } from 'node:crypto'
import { createServer, type IncomingMessage, type Server as NodeHttpServer, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { hostname, networkInterfaces } from 'node:os'
import type { Context } from 'cordis'
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { connect, type McpConnection, type McpOptions } from './connection.ts'
import { ErrorCode, isInitializeRequest } from './jsonrpc.ts'

/** The one path the server answers on. */
export const MCP_HTTP_PATH = '/mcp'
/** Largest request body accepted (a tool call's arguments are small; this only bounds memory). */
const MAX_BODY_BYTES = 4 * 1024 * 1024

export interface HttpOptions extends Omit<McpOptions, 'sessionId'> {
  /** The bearer token every request must carry (`Authorization: Bearer <token>`). Required, never empty. */
  token: string
  /** Address to listen on. Default `127.0.0.1`. */
  host?: string
  /** Default 0: a free port (read it from `url`). */
  port?: number
  /**
   * Host names (with or without `:port`) accepted in the Host header besides the defaults: the loopback names
   * for a loopback bind; the bound address for a specific one; the machine's addresses and name for 0.0.0.0/::.
   */
  allowedHosts?: readonly string[]
  /** Most MCP sessions open at once (mcp.maxSessions); the next initialize is refused with 503. Default 64. */
  maxSessions?: number
  /**
   * A session with no request in flight for this long ends, its calls aborted and its tasks ended
   * (mcp.sessionIdleMs). Default 30 minutes.
   */
  sessionIdleMs?: number
  /** A socket that has not sent a whole request head within this long is closed (before any check). Default 10 s. */
  headersTimeoutMs?: number
}

/** Defaults of the limits that keep a server up under load (docs/security.md#boundary). */
export const HTTP_LIMITS = { maxSessions: 64, sessionIdleMs: 30 * 60_000, headersTimeoutMs: 10_000 } as const

export interface McpHttpServer {
  /** `http://<host>:<port>/mcp` */
  readonly url: string
  readonly host: string
  readonly port: number
  /** MCP sessions open now. */
  sessions(): number
  /** Resolves once the server has stopped and every session is closed. */
  readonly closed: Promise<void>
  /** Stops listening, closes every session (calls aborted, their tasks killed) and every socket. Idempotent. */
  close(): Promise<void>
}

export class HttpConfigError extends Error {
  override name = 'HttpConfigError'
  readonly code = 'MCP_HTTP_CONFIG_INVALID'
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost', '[::1]'])

export function isLoopback(host: string): boolean {
  return LOOPBACK.has(host.toLowerCase()) || /^127\.\d+\.\d+\.\d+$/.test(host)
}

/** `host:port` forms the Host header may take (lower case). */
export function allowedHostHeaders(bind: string, port: number, extra: readonly string[] = []): Set<string> {
  const names = new Set<string>()
  const add = (name: string) => {
    const bare = name.toLowerCase()
    const bracketed = bare.includes(':') && !bare.startsWith('[') ? `[${bare}]` : bare
    names.add(`${bracketed}:${port}`)
    if (port === 80) names.add(bracketed)
  }
  if (isLoopback(bind)) ['127.0.0.1', 'localhost', '::1'].forEach(add)
  else if (bind === '0.0.0.0' || bind === '::') {
    ;['127.0.0.1', 'localhost', '::1', hostname()].forEach(add)
    for (const list of Object.values(networkInterfaces())) for (const item of list ?? []) add(item.address)
  } else add(bind)
  add(bind)
  for (const name of extra) {
    // An entry with its own port is taken as is; a bare name gets the server's port.
    if (/:\d+$/.test(name) && !/^[^[]*:[^:]*:/.test(name)) names.add(name.toLowerCase())
    else add(name.replace(/^\[|\]$/g, ''))
  }
  return names
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest()
}

/** A refusal as a JSON-RPC error without an id: -32600 for a bad request, -32000 for the HTTP-level ones, unless `code`. */
function send(
  res: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
  code?: number,
): void {
  if (res.headersSent) return
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers })
  res.end(
    JSON.stringify({
      jsonrpc: '2.0',
      error: { code: code ?? (status === 400 ? ErrorCode.InvalidRequest : -32000), message },
      id: null,
    }),
  )
}

/** Why a request must be refused before anything runs for it, or undefined. */
export function refusal(
  headers: IncomingMessage['headers'],
  allowed: ReadonlySet<string>,
  tokenDigest: Buffer,
): { status: 401 | 403; message: string } | undefined {
  const host = headers.host?.toLowerCase()
  if (!host || !allowed.has(host))
    return { status: 403, message: `Forbidden: Host ${JSON.stringify(headers.host ?? '')} is not this server` }
  const origin = headers.origin
  if (origin !== undefined && origin !== 'null') {
    let originHost: string | undefined
    try {
      const url = new URL(origin)
      if (url.protocol === 'http:' || url.protocol === 'https:') originHost = url.host.toLowerCase()
    } catch {
      originHost = undefined
    }
    // Browsers omit the default port in Origin: compare with the port filled in too.
    const withPort =
      originHost && !/:\d+$/.test(originHost) ? `${originHost}:${origin.startsWith('https:') ? 443 : 80}` : originHost
    if (!originHost || !(allowed.has(originHost) || (withPort !== undefined && allowed.has(withPort)))) {
      return { status: 403, message: `Forbidden: Origin ${JSON.stringify(origin)} is not this server` }
    }
  } else if (origin === 'null') {
    return { status: 403, message: 'Forbidden: Origin "null" is not this server' }
  }
  const authorization = headers.authorization
  const match = authorization === undefined ? null : /^Bearer[ ]+(\S+)\s*$/i.exec(authorization)
  if (!match) return { status: 401, message: 'Unauthorized: send Authorization: Bearer <token>' }
  if (!timingSafeEqual(digest(match[1]!), tokenDigest)) return { status: 401, message: 'Unauthorized: wrong token' }
  return undefined
}

async function readBody(
  req: IncomingMessage,
): Promise<{ body: unknown } | { status: number; message: string; code?: number }> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req) {
    size += (chunk as Buffer).length
    if (size > MAX_BODY_BYTES) return { status: 413, message: `Payload Too Large: at most ${MAX_BODY_BYTES} bytes` }
    chunks.push(chunk as Buffer)
  }
  try {
    return { body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }
  } catch (error) {
    return { status: 400, message: `Parse error: ${(error as Error).message}`, code: ErrorCode.ParseError }
  }
}

let servers = 0

/** JSON-RPC error code of the refused initialize past mcp.maxSessions (a server error, in the implementation range). */
export const TOO_MANY_SESSIONS = -32001

interface Session {
  readonly id: string
  readonly transport: StreamableHTTPServerTransport
  readonly connection: Promise<McpConnection>
  /** Requests of this session whose responses are still open (an event stream counts until it closes). */
  inFlight: number
  idle: NodeJS.Timeout | undefined
}

/**
 * Serves `ctx.tools` over MCP's Streamable HTTP transport at `/mcp`, one `connect()` session per MCP session
 * (each with its own tool session, background tasks and notices). Every request must come with the bearer token
 * and a Host (and, when sent, an Origin) naming this server; a refused request gets 401/403 before its body is
 * read, so nothing runs for it. Resolves once listening.
 */
export async function serveHttp(ctx: Context, options: HttpOptions): Promise<McpHttpServer> {
  if (typeof options.token !== 'string' || options.token.trim() === '') {
    throw new HttpConfigError(
      'dsh mcp --http needs a token (--token-file FILE or --token-env NAME): it refuses to serve without one',
    )
  }
  // A bearer token travels as one header word (RFC 6750): one with whitespace inside could never be presented.
  if (/\s/.test(options.token.trim())) throw new HttpConfigError('the --http token must not contain whitespace')
  // The SDK's transport (and the zod schemas it validates with) loads only here: stdio never pays for it.
  const { StreamableHTTPServerTransport } = await import('@modelcontextprotocol/sdk/server/streamableHttp.js')
  const host = options.host ?? '127.0.0.1'
  const tokenDigest = digest(options.token.trim())
  const log = options.log ?? (() => {})
  const server = servers++
  let sessionCount = 0
  const sessions = new Map<string, Session>()
  const maxSessions = options.maxSessions ?? HTTP_LIMITS.maxSessions
  const idleMs = options.sessionIdleMs ?? HTTP_LIMITS.sessionIdleMs
  /** Sessions whose initialize is still being answered: they count against maxSessions already. */
  let starting = 0
  let allowed = new Set<string>()
  let stopping = false

  const {
    token: _token,
    host: _host,
    port: _port,
    allowedHosts: _allowed,
    maxSessions: _max,
    sessionIdleMs: _idle,
    headersTimeoutMs: _headers,
    ...given
  } = options
  // Anyone with the token may connect: a client's roots may only narrow the server's own, never widen them (docs/security.md#boundary).
  const connectOptions = { ...given, roots: given.roots ?? [given.cwd ?? process.cwd()], rootsAtFirstCall: true }

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?', 1)[0]
    const refused = refusal(req.headers, allowed, tokenDigest)
    if (refused)
      return send(res, refused.status, refused.message, refused.status === 401 ? { 'WWW-Authenticate': 'Bearer' } : {})
    if (path !== MCP_HTTP_PATH) return send(res, 404, `Not Found: the MCP endpoint is ${MCP_HTTP_PATH}`)
    if (stopping) return send(res, 503, 'Service Unavailable: the server is shutting down')
    const sessionHeader = req.headers['mcp-session-id']
    const sessionId = Array.isArray(sessionHeader) ? sessionHeader[0] : sessionHeader
    let body: unknown
    if (req.method === 'POST') {
      const read = await readBody(req)
      if ('status' in read) return send(res, read.status, read.message, {}, read.code)
      body = read.body
    }
    if (sessionId !== undefined) {
      const entry = sessions.get(sessionId)
      if (!entry) return send(res, 404, 'Session not found')
      // A GET is the client's listening stream: it stays open while the client is away, so it never keeps a session.
      if (req.method !== 'GET') busy(entry, res)
      return entry.transport.handleRequest(req, res, body)
    }
    if (req.method !== 'POST' || !isInitializeRequest(body)) {
      return send(res, 400, 'Bad Request: no Mcp-Session-Id; the first request of a session is a POST of initialize')
    }
    if (sessions.size + starting >= maxSessions) {
      return send(
        res,
        503,
        `Service Unavailable: ${maxSessions} MCP sessions are open, the most this server keeps (mcp.maxSessions); end one (DELETE ${MCP_HTTP_PATH} with its Mcp-Session-Id) or wait for an idle one to expire, then initialize again`,
        { 'Retry-After': '1' },
        TOO_MANY_SESSIONS,
      )
    }
    starting++
    try {
      await startSession(req, res, body)
    } finally {
      starting--
    }
  }

  /** A request of `entry` is in flight until its response closes; then the idle clock starts again. */
  const busy = (entry: Session, res: ServerResponse) => {
    entry.inFlight++
    clearTimeout(entry.idle)
    res.once('close', () => {
      if (--entry.inFlight === 0 && sessions.get(entry.id) === entry) entry.idle = idleTimer(entry)
    })
  }
  const idleTimer = (entry: Session) => {
    const timer = setTimeout(() => {
      if (entry.inFlight > 0 || sessions.get(entry.id) !== entry) return
      sessions.delete(entry.id)
      log(`session ${entry.id} ended after ${idleMs} ms without a request (mcp.sessionIdleMs)`)
      void entry.connection.then((open) => open.close()).catch(() => {})
    }, idleMs)
    timer.unref()
    return timer
  }

  const startSession = async (req: IncomingMessage, res: ServerResponse, body: unknown) => {
    let entry: Session | undefined
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        entry = { id, transport, connection, inFlight: 0, idle: undefined }
        sessions.set(id, entry)
        busy(entry, res)
      },
    })
    const connection = connect(ctx, transport, {
      ...connectOptions,
      sessionId: `mcp-http-${process.pid}-${server}-${++sessionCount}`,
    })
    void connection
      .then((open) => open.closed)
      .then(
        () => {
          if (transport.sessionId !== undefined) sessions.delete(transport.sessionId)
          clearTimeout(entry?.idle)
        },
        (error: Error) => log(`a session could not start: ${error.message}`),
      )
    const open = await connection
    // A cancelled call is never answered: its POST's event stream would stay open until the session ends.
    open.server.onunanswered = (id) => transport.closeSSEStream(id)
    await transport.handleRequest(req, res, body)
  }

  // Sockets are checked for a slow head at this interval, so a short timeout takes effect (Node checks every 30 s).
  const headersTimeout = options.headersTimeoutMs ?? HTTP_LIMITS.headersTimeoutMs
  const timeouts = {
    headersTimeout,
    requestTimeout: Math.max(headersTimeout, 300_000),
    connectionsCheckingInterval: Math.min(headersTimeout, 30_000),
  }
  const heads = new WeakMap<Socket, NodeJS.Timeout>()
  const http: NodeHttpServer = createServer(timeouts, (req, res) => {
    clearTimeout(heads.get(req.socket))
    handle(req, res).catch((error: Error) => {
      log(`request failed: ${error.message}`)
      send(res, 500, 'Internal Server Error')
    })
  })
  // A socket must bring a whole request head within headersTimeout (Node's own check misses a socket that sends
  // nothing); after its first request, keep-alive sockets are closed by Node's keepAliveTimeout.
  http.on('connection', (socket: Socket) => {
    const silent = setTimeout(() => socket.destroy(), headersTimeout)
    silent.unref()
    heads.set(socket, silent)
    socket.once('close', () => clearTimeout(silent))
  })
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject)
    http.listen(options.port ?? 0, host, () => {
      http.off('error', reject)
      resolve()
    })
  })
  const port = (http.address() as AddressInfo).port
  allowed = allowedHostHeaders(host, port, options.allowedHosts)
  const urlHost = host.includes(':') ? `[${host}]` : host

  let closing: Promise<void> | undefined
  let finish!: () => void
  const closed = new Promise<void>((resolve) => {
    finish = resolve
  })
  const close = () =>
    (closing ??= (async () => {
      stopping = true
      const stopped = new Promise<void>((resolve) => http.close(() => resolve()))
      for (const entry of sessions.values()) clearTimeout(entry.idle)
      const open = await Promise.all([...sessions.values()].map((entry) => entry.connection.catch(() => undefined)))
      sessions.clear()
      await Promise.all(open.map((connection) => connection?.close()))
      http.closeAllConnections()
      await stopped
      finish()
    })())
  // Disposing the context stops the server too.
  ctx.effect(() => () => close(), 'mcp http server')
  return {
    url: `http://${urlHost}:${port}${MCP_HTTP_PATH}`,
    host,
    port,
    sessions: () => sessions.size,
    closed,
    close,
  }
}
