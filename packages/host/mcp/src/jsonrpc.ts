import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/sdk/types.js'

// The JSON-RPC 2.0 message shapes of MCP, checked by hand: the SDK's `JSONRPCMessageSchema` (zod) gives the same
// verdicts, but loading it costs the ~200 zod schemas of the SDK's `types.js` (docs/decisions/2026-12-01-own-mcp-server-engine.md).

/** JSON-RPC's error codes, and the two the MCP SDK adds (the same numbers as its `ErrorCode`). */
export const ErrorCode = {
  ConnectionClosed: -32000,
  RequestTimeout: -32001,
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
} as const

export type MessageKind = 'request' | 'notification' | 'result' | 'error'

export type JsonObject = Record<string, unknown>

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** A request id or progress token: a string or a (safe) integer. */
export function isId(value: unknown): value is RequestId {
  return typeof value === 'string' || Number.isSafeInteger(value)
}

const KEYS: Record<MessageKind, ReadonlySet<string>> = {
  request: new Set(['jsonrpc', 'id', 'method', 'params']),
  notification: new Set(['jsonrpc', 'method', 'params']),
  result: new Set(['jsonrpc', 'id', 'result']),
  error: new Set(['jsonrpc', 'id', 'error']),
}

/** `_meta` of params or a result: an object whose `progressToken` and related task, when present, are well formed. */
function isMeta(value: unknown): boolean {
  if (value === undefined) return true
  if (!isObject(value)) return false
  if ('progressToken' in value && !isId(value.progressToken)) return false
  const related = value['io.modelcontextprotocol/related-task']
  return related === undefined || (isObject(related) && typeof related.taskId === 'string')
}

/** Params of a request or notification, or a result: an object with a well-formed `_meta`. */
function isCarrier(value: unknown): boolean {
  return isObject(value) && isMeta(value._meta)
}

/**
 * Which JSON-RPC message `value` is — a request, a notification, a result or an error response — or undefined when
 * it is none (the same verdict as the SDK's `JSONRPCMessageSchema`: no keys beyond the message's own, `jsonrpc: "2.0"`,
 * ids strings or integers; an error response may lack its id).
 */
export function messageKind(value: unknown): MessageKind | undefined {
  if (!isObject(value) || value.jsonrpc !== '2.0') return undefined
  const kind: MessageKind | undefined =
    'method' in value
      ? 'id' in value
        ? 'request'
        : 'notification'
      : 'result' in value
        ? 'result'
        : 'error' in value
          ? 'error'
          : undefined
  if (kind === undefined) return undefined
  for (const key of Object.keys(value)) if (!KEYS[kind].has(key)) return undefined
  switch (kind) {
    case 'request':
      return isId(value.id) &&
        typeof value.method === 'string' &&
        (value.params === undefined || isCarrier(value.params))
        ? kind
        : undefined
    case 'notification':
      return typeof value.method === 'string' && (value.params === undefined || isCarrier(value.params))
        ? kind
        : undefined
    case 'result':
      return isId(value.id) && isCarrier(value.result) ? kind : undefined
    case 'error': {
      const error = value.error
      const ok =
        (value.id === undefined || isId(value.id)) &&
        isObject(error) &&
        Number.isSafeInteger(error.code) &&
        typeof error.message === 'string'
      return ok ? kind : undefined
    }
  }
}

export function isMessage(value: unknown): value is JSONRPCMessage {
  return messageKind(value) !== undefined
}

/** What is wrong with `initialize` params (the fields a server relies on), or undefined when they are usable. */
export function initializeProblem(params: unknown): string | undefined {
  if (!isObject(params)) return 'params must be an object'
  if (typeof params.protocolVersion !== 'string') return 'params.protocolVersion must be a string'
  if (!isObject(params.capabilities)) return 'params.capabilities must be an object'
  const info = params.clientInfo
  if (!isObject(info)) return 'params.clientInfo must be an object'
  if (typeof info.name !== 'string') return 'params.clientInfo.name must be a string'
  if (typeof info.version !== 'string') return 'params.clientInfo.version must be a string'
  return undefined
}

/** An `initialize` request (what opens a Streamable HTTP session); like the SDK's check, the envelope is not looked at. */
export function isInitializeRequest(value: unknown): boolean {
  return (
    isObject(value) &&
    value.method === 'initialize' &&
    initializeProblem(value.params) === undefined &&
    isCarrier(value.params)
  )
}
