import type { Context } from 'cordis'
import Schema from 'schemastery'
import type { Tool } from '@modelcontextprotocol/sdk/types.js'
import type {} from '@deepseek-ai/dsh-system-prompt'
import type {} from '@deepseek-ai/dsh-subprocess'
import type { ToolExecution, ToolSession } from '@deepseek-ai/dsh-tools'
import { RemoteError, RemoteErrorCode } from './errors.ts'
import { RemoteLink, type Endpoint, type LinkOptions } from './link.ts'
import { resultText, toolAnnotations, toolTitle } from './result.ts'
import { PROMPT_SECTION_ID, endpointLabel, remotePrompt, unavailableText } from './text.ts'

export { RemoteError, RemoteErrorCode, RemoteToolError } from './errors.ts'
export { splitCommandLine } from './command.ts'
export { endpointLabel, stderrSummary, unavailableText, httpReason, PROMPT_SECTION_ID, remotePrompt } from './text.ts'
export { resultText, toolAnnotations, toolTitle } from './result.ts'

declare module 'cordis' {
  interface Events {
    /** The remote reported progress of a running call (a dsh does every few seconds while a call runs). */
    'tools-remote/progress'(event: RemoteProgress): void
  }
}

export interface RemoteProgress {
  readonly sessionId: string | undefined
  readonly callId: string
  readonly tool: string
  readonly progress: number
  readonly message?: string
}

export const name = 'tools-remote'
export const inject = ['tools', 'systemPrompt']

export interface Config {
  /** argv of a command whose stdin/stdout speak MCP (`ssh -T host dsh mcp --cwd /repo`). Exclusive with `url`. */
  command?: string[]
  /** Directory the command is started in. Default: the process's working directory. */
  cwd?: string
  /** A Streamable HTTP endpoint (`http://host:port/mcp`). Exclusive with `command`. */
  url?: string
  /** Bearer token sent to `url` (required with `url`). */
  token?: string
  connectTimeoutMs: number
  idleTimeoutMs: number
  graceMs: number
}

export const Config: Schema<Partial<Config>, Config> = Schema.object({
  command: Schema.array(String).description(
    'argv of a command whose stdin/stdout speak MCP, e.g. ["ssh", "-T", "host", "dsh", "mcp", "--cwd", "/repo"]. No shell is involved.',
  ),
  cwd: Schema.string().description('Directory the command is started in; default: the process working directory.'),
  url: Schema.string().description('Streamable HTTP endpoint of a `dsh mcp --http`, e.g. http://127.0.0.1:8765/mcp.'),
  token: Schema.string().description('Bearer token for `url` (required with it).'),
  connectTimeoutMs: Schema.natural()
    .min(1)
    .default(30_000)
    .description('Bound on starting the command or reaching the URL and completing the MCP handshake.'),
  idleTimeoutMs: Schema.natural()
    .min(1)
    .default(60_000)
    .description(
      'A call that gets neither its result nor a progress report for this long is given up: the connection is dropped (REMOTE_UNAVAILABLE).',
    ),
  graceMs: Schema.natural()
    .min(1)
    .default(3000)
    .description(
      "After closing the remote's stdin, how long it may take to exit before its process group is terminated.",
    ),
})

function configError(message: string): RemoteError {
  return new RemoteError(`tools-remote: ${message}`, { code: RemoteErrorCode.REMOTE_CONFIG_INVALID })
}

function endpointOf(config: Config): Endpoint {
  // Schemastery defaults an absent array to [], so an empty command counts as none.
  const command = config.command?.length ? config.command : undefined
  if ((command === undefined) === (config.url === undefined))
    throw configError('set exactly one of "command" and "url"')
  if (command !== undefined) {
    if (command[0] === '') throw configError('"command" names no program')
    // The user's own command (ssh, kubectl, docker) needs the user's environment — agent sockets, kube
    // credentials — so the provider's credential scrub, meant for commands a model writes, is undone here.
    return { kind: 'command', argv: command, cwd: config.cwd ?? process.cwd(), env: { ...process.env } }
  }
  let url: URL
  try {
    url = new URL(config.url!)
  } catch {
    throw configError(`"url" is not a URL: ${config.url}`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw configError(`"url" must be http: or https:, got ${url.protocol}`)
  if (!config.token) throw configError('"url" needs a "token" (a dsh mcp --http always requires one)')
  return { kind: 'url', url, token: config.token }
}

/**
 * Mounts the tools and the instructions of a dsh that runs elsewhere. The start connection lists them (and is
 * kept as the first session's connection); every local session then has its own remote connection, opened on
 * its first call, so remote background tasks, their ownership and their notices follow the session. A lost
 * connection fails the call with REMOTE_UNAVAILABLE and the next call reconnects; a session that ends, and
 * disposal, close their connections, which makes the remote stop everything it started for them.
 */
export async function apply(ctx: Context, config: Config): Promise<void> {
  const endpoint = endpointOf(config)
  const label = endpointLabel(endpoint.kind === 'command' ? { command: endpoint.argv } : { url: endpoint.url.href })
  const logger = ctx.logger('tools-remote')
  /** Every session's link holder (kept in the session, and here only to close them all at disposal). */
  const holders = new Set<LinkHolder>()
  const LINK = Symbol('dsh.tools-remote.link')
  const unsessioned: LinkHolder = { pending: undefined }
  holders.add(unsessioned)
  let disposing = false

  const linkOptions = (route: Route): LinkOptions => ({
    label,
    clientInfo: { name: 'dsh-tools-remote', version: '0.1.0' },
    connectTimeoutMs: config.connectTimeoutMs,
    idleTimeoutMs: config.idleTimeoutMs,
    graceMs: config.graceMs,
    log: (line) => logger.debug(line),
    // The remote dsh has already queued the notice for this session's next result there, which comes back
    // through this connection: so it is only announced here (hosts forward the event), never queued again.
    onLog: (text) => {
      if (route.session !== undefined) ctx.emit('tools/session-notice', { session: route.session, text })
    },
  })

  const open = (route: Route) => RemoteLink.open(endpoint, ctx.get('subprocess'), linkOptions(route))

  // The start connection: the catalog, then kept for the first session that calls.
  const startRoute: Route = { session: undefined }
  let spare: RemoteLink | undefined = await open(startRoute)
  let tools: Tool[]
  let instructions: string | undefined
  try {
    tools = await spare.tools()
    const given = spare.client.getInstructions()
    instructions =
      given === undefined
        ? undefined
        : remotePrompt(
            given,
            spare.client.getServerVersion()?.name,
            tools.map((tool) => tool.name),
          )
  } catch (error) {
    await spare.close()
    throw new RemoteError(
      unavailableText.handshakeFailed(label, `listing the tools failed: ${(error as Error).message}`),
      { code: RemoteErrorCode.REMOTE_UNAVAILABLE, cause: error },
    )
  }

  // The session's own link, kept in the session; its dispose() closes it, which makes the remote stop its tasks.
  const holderOf = (session: ToolSession | undefined): LinkHolder =>
    session === undefined
      ? unsessioned
      : session.slot(LINK, () => {
          const holder: LinkHolder = { pending: undefined }
          holders.add(holder)
          session.defer(async () => {
            holders.delete(holder)
            const pending = holder.pending
            holder.pending = undefined
            const link = await pending?.catch(() => undefined)
            await link?.close()
          })
          return holder
        })

  const linkFor = async (session: ToolSession | undefined): Promise<RemoteLink> => {
    if (disposing) throw new RemoteError(unavailableText.closing(label), { code: RemoteErrorCode.REMOTE_UNAVAILABLE })
    const holder = holderOf(session)
    const pending = holder.pending
    if (pending) {
      const link = await pending.catch(() => undefined)
      if (link && !link.closed) return link
      if (holder.pending === pending) holder.pending = undefined
      return linkFor(session)
    }
    let next: Promise<RemoteLink>
    if (spare && !spare.closed) {
      startRoute.session = session
      next = Promise.resolve(spare)
      spare = undefined
    } else {
      next = open({ session })
    }
    holder.pending = next
    next.catch(() => {
      if (holder.pending === next) holder.pending = undefined
    })
    return next
  }

  const execute = async (tool: string, args: Record<string, unknown>, exec: ToolExecution): Promise<string> => {
    const sessionId = exec.session?.id
    const link = await linkFor(exec.session)
    const result = await link.call(tool, args, exec.signal, (progress) => {
      ctx.emit('tools-remote/progress', { sessionId, callId: exec.callId, tool, ...progress })
    })
    return resultText(result)
  }

  for (const tool of tools) {
    const title = toolTitle(tool)
    const annotations = toolAnnotations(tool)
    try {
      ctx.tools.register<Record<string, unknown>>({
        name: tool.name,
        ...(title === undefined ? {} : { title }),
        description: tool.description ?? '',
        parameters: tool.inputSchema,
        ...(annotations === undefined ? {} : { annotations }),
        execute: (args, exec) => execute(tool.name, args, exec),
      })
    } catch (error) {
      logger.warn('remote tool %s is not mounted: %s', tool.name, (error as Error).message)
    }
  }
  if (instructions?.trim()) ctx.systemPrompt.register({ id: PROMPT_SECTION_ID, order: 100, text: instructions })

  ctx.effect(
    () => async () => {
      disposing = true
      const all = [...holders].flatMap((holder) => (holder.pending ? [holder.pending] : []))
      holders.clear()
      const closing = all.map((pending) =>
        pending.then(
          (link) => link.close(),
          () => {},
        ),
      )
      if (spare) closing.push(spare.close())
      await Promise.all(closing)
    },
    'tools-remote connections',
  )
}

/** Which session a link serves (its notices go to that session). */
interface Route {
  session: ToolSession | undefined
}

/** A session's remote connection, opened on its first call. */
interface LinkHolder {
  pending: Promise<RemoteLink> | undefined
}

export default { name, inject, Config, apply }
