export { connect, type McpConnection, type McpOptions } from './connection.ts'
export { ERROR_META_KEY, instructionsPreamble, progressMessage, toCallToolResult, toMcpTool } from './results.ts'
export { HttpConfigError, MCP_HTTP_PATH, serveHttp, type HttpOptions, type McpHttpServer } from './http.ts'
export { LineTransport, serveStdio, type StdioOptions } from './stdio.ts'
