/** Every text of this package that a model or a user reads. Pure, so that each is a unit test. */
import { instructionsPreamble } from '@deepseek-ai/dsh-mcp-wire'

/** How a remote is named in messages: the command line as given, or the URL without credentials or query. */
export function endpointLabel(endpoint: { command: readonly string[] } | { url: string }): string {
  if ('command' in endpoint) return endpoint.command.map(quoteWord).join(' ')
  try {
    const url = new URL(endpoint.url)
    url.username = ''
    url.password = ''
    url.search = ''
    url.hash = ''
    return url.href
  } catch {
    return endpoint.url
  }
}

function quoteWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`
}

/** The last lines of the remote command's stderr (ssh's own errors end up there), on one line, bounded. */
export function stderrSummary(stderr: string, maxChars = 400): string {
  const lines = stderr
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
  let text = lines.slice(-3).join(' / ')
  if (text.length > maxChars) text = `…${text.slice(text.length - maxChars + 1)}`
  return text
}

export interface ExitFacts {
  exitCode: number | null
  signal: string | null
  stderr: string
}

function exitClause(exit: ExitFacts | undefined): string {
  if (!exit) return ''
  const how = exit.signal
    ? `was killed by ${exit.signal}`
    : exit.exitCode === null
      ? 'ended'
      : `exited with code ${exit.exitCode}`
  const said = stderrSummary(exit.stderr)
  return ` (the command ${how}${said ? `: ${said}` : ''})`
}

const RETRY = 'The next call tries to connect again.'

/** What the command wrote on stdout besides JSON-RPC: how many lines, and the first (clipped). */
export interface NoiseFacts {
  lines: number
  first: string | undefined
}

function noiseClause(noise: NoiseFacts | undefined): string {
  if (!noise || noise.lines === 0) return ''
  const lines = noise.lines === 1 ? '1 line that is' : `${noise.lines} lines that are`
  return `; its stdout held ${lines} not JSON-RPC, the first: ${JSON.stringify(noise.first ?? '')} (is the command a dsh mcp, and does the remote shell print to stdout?)`
}

export const unavailableText = {
  /** The command could not be started at all. */
  spawnFailed: (label: string, reason: string) =>
    `remote unavailable: the remote command ${label} could not start: ${reason}. ${RETRY}`,
  /** The command ran but ended (or the server refused) before the MCP handshake completed. */
  handshakeFailed: (label: string, reason: string, exit?: ExitFacts, noise?: NoiseFacts) =>
    `remote unavailable: no MCP connection to ${label}: ${reason}${exitClause(exit)}${noiseClause(noise)}. ${RETRY}`,
  handshakeTimeout: (label: string, ms: number, exit?: ExitFacts, noise?: NoiseFacts) =>
    `remote unavailable: ${label} did not complete the MCP handshake within ${ms}ms${exitClause(exit)}${noiseClause(noise)}. ${RETRY}`,
  /** The connection went away while the call ran: its outcome on the remote side is unknown. */
  lostDuringCall: (label: string, exit?: ExitFacts) =>
    `remote unavailable: the connection to ${label} was lost during the call${exitClause(exit)}; whether the call took effect there is unknown, and background tasks it had started there were stopped. ${RETRY}`,
  /** No answer and no progress for too long: the connection is dropped. */
  stalled: (label: string, ms: number) =>
    `remote unavailable: ${label} sent nothing for ${ms}ms during the call (no result, no progress), so the connection was dropped; whether the call took effect there is unknown. ${RETRY}`,
  /** An HTTP remote answered a request with an HTTP error, or could not be reached. */
  http: (label: string, reason: string) => `remote unavailable: ${label}: ${reason}. ${RETRY}`,
  /** The plugin is being disposed. */
  closing: (label: string) => `remote unavailable: the connection to ${label} is closing (the host is shutting down)`,
}

/** An HTTP failure in words; a 401/403 says what to check. */
export function httpReason(status: number | undefined, message: string): string {
  if (status === 401) return 'the server refused the token (HTTP 401): check --token-file / --token-env on both sides'
  if (status === 403) return 'the server refused the request (HTTP 403): its Origin/Host check rejected it'
  if (status === 404)
    return 'the server does not know this MCP session (HTTP 404): it restarted, or the URL is not its /mcp endpoint'
  if (status !== undefined) return `HTTP ${status}: ${message}`
  return message
}

export const protocolErrorText = (label: string, message: string) =>
  `the remote ${label} answered with a protocol error: ${message}`

/** The remote's instructions become one prompt section with this id. */
export const PROMPT_SECTION_ID = 'remote:instructions'

/**
 * The prompt in a remote dsh's instructions. `dsh mcp` opens them with a paragraph that ties the prompt's tool
 * names to its MCP server (for clients that rename tools); mounted here they are this context's tools again, and a
 * host that serves them over MCP adds its own paragraph. So that paragraph is dropped, when it is exactly the one
 * that server (`server`, with these tools) sends; any other server's instructions are kept as they are.
 */
export function remotePrompt(instructions: string, server: string | undefined, tools: readonly string[]): string {
  if (server === undefined) return instructions
  const preamble = `${instructionsPreamble(server, tools)}\n\n`
  return instructions.startsWith(preamble) ? instructions.slice(preamble.length) : instructions
}
