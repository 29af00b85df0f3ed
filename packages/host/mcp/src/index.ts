export { connect, type McpConnection, type McpOptions } from './connection.ts'
export { ERROR_META_KEY, instructionsPreamble, progressMessage, toCallToolResult, toMcpTool } from './results.ts'
export { LineTransport, serveStdio, type StdioOptions } from './stdio.ts'
