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
  TextContent,
} from './types.ts'
export {
  createSession,
  pinRoot,
  SessionErrorCode,
  type PinnedRoot,
  type SessionOptions,
  type ToolSession,
} from './session.ts'
export { CREDENTIAL_STORES, expandForHomes, expandHome, homeDirs, within } from './paths.ts'
export { followService } from './follow.ts'
export { ToolsService as default } from './service.ts'
