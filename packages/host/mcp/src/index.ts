export { connect, type McpConnection, type McpOptions } from './connection.ts'
export {
  LATEST_PROTOCOL_VERSION,
  McpEngine,
  McpProtocolError,
  SUPPORTED_PROTOCOL_VERSIONS,
  type CallToolParams,
  type McpEngineOptions,
  type RequestExtra,
} from './protocol.ts'
export { progressMessage, toCallToolResult, toMcpTool } from './results.ts'
// dsh's wire conventions live below both ends of the wire; re-exported for this package's users.
export { ERROR_META_KEY, instructionsPreamble, LineSplitter } from '@deepseek-ai/dsh-mcp-wire'
export {
  HTTP_LIMITS,
  HttpConfigError,
  MCP_HTTP_PATH,
  serveHttp,
  TOO_MANY_SESSIONS,
  type HttpOptions,
  type McpHttpServer,
} from './http.ts'
export { LineTransport, serveStdio, type StdioOptions } from './stdio.ts'
