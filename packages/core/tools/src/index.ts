export { CoreErrorCode, HarnessError, invalidArgs, type HarnessErrorOptions } from './errors.ts'
export { errorResult, textResult } from './results.ts'
export { ToolsService } from './service.ts'
export type {
  ArgumentAliases,
  ExecuteOptions,
  ImageContent,
  JsonSchema,
  SessionNotice,
  ToolAnnotations,
  ToolCall,
  ToolDefinition,
  ToolDenial,
  ToolErrorInfo,
  ToolExecution,
  ToolOutput,
  ToolResult,
  ToolSchema,
  ToolSession,
  TextContent,
} from './types.ts'
export { ToolsService as default } from './service.ts'
