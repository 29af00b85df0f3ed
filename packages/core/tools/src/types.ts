import type { ToolSession } from './session.ts'

/** A JSON Schema object, as sent to the model. */
export interface JsonSchema {
  readonly type?: string | readonly string[]
  readonly [keyword: string]: unknown
}

/** What a tool receives besides its arguments. */
export interface ToolExecution {
  readonly callId: string
  readonly name: string
  readonly arguments: Readonly<Record<string, unknown>>
  /** Always present: aborts on caller cancellation, or on the tool's time budget. */
  readonly signal: AbortSignal
  /**
   * The time budget `signal` enforces, in ms, when a timeout policy gave one (it may differ from the tool's own
   * `timeoutMs`): a tool that can stop early with what it found stops within it rather than lose it to the timeout.
   */
  readonly budgetMs?: number
  readonly session?: ToolSession
}

export interface ToolOutput<V = unknown> {
  text: string
  value?: V
  /** Images shown after the text (read of a PNG, JPEG, GIF or WebP): MCP image content blocks. */
  images?: readonly ImageContent[]
}

export interface TextContent {
  type: 'text'
  text: string
}

/** An MCP image content block: the image's bytes in base64 and its MIME type. */
export interface ImageContent {
  type: 'image'
  data: string
  mimeType: string
}

/** MCP tool annotations: hints clients use to decide whether a call needs the user's approval. */
export interface ToolAnnotations {
  readonly readOnlyHint?: boolean
  readonly destructiveHint?: boolean
  readonly idempotentHint?: boolean
  readonly openWorldHint?: boolean
}

export interface ToolDefinition<A = Record<string, unknown>> {
  readonly name: string
  /** A short human-readable name for clients' lists (`Search file contents`). */
  readonly title?: string
  readonly description: string
  readonly annotations?: ToolAnnotations
  readonly parameters: JsonSchema
  /** Cooperative budget applied by the timeout policy; never sent to the model. */
  readonly timeoutMs?: number
  /**
   * The most UTF-8 bytes the tool's result text takes (docs/model-surface.md#budgets), when the tool keeps such a budget: session
   * notices join its result only as far as they fit, the rest wait for the next result. Never sent to the model.
   */
  readonly maxResultBytes?: number
  /**
   * Other agent clients' names for this tool's arguments: renamed to ours, ignored, or refused with a hint (see
   * `ArgumentAliases`). Never sent to the model.
   */
  readonly aliases?: ArgumentAliases
  execute(args: A, exec: ToolExecution): Promise<string | ToolOutput> | string | ToolOutput
}

/**
 * Other agent clients' names for a tool's top-level arguments (docs/model-surface.md#tools), applied before validation:
 * - a name of ours (`{ file_path: 'path' }`): the same meaning in the same unit; the argument is renamed to ours,
 *   silently. Given under several names with differing values, it is INVALID_ARGS (`"path" and "file_path" name the
 *   same argument but differ: pass only "path"`); a schema problem names it as passed (`property "path" (passed as
 *   "file_path") must be a string`).
 * - `{ ignore: true }`: a request the tool always fulfils (grep's `-n`: rows are always numbered); dropped, silently.
 * - `{ hint }`: a name whose meaning differs (a timeout in seconds): INVALID_ARGS, `unexpected property "timeout": `
 *   followed by the hint, which says what to pass instead.
 */
export type ArgumentAliases = Readonly<Record<string, string | { readonly ignore: true } | { readonly hint: string }>>

export interface ToolErrorInfo {
  readonly message: string
  readonly name: string
  readonly code: string
}

export interface ToolResult {
  /** The text first, always; images (if any) after it. Budgets and spilling apply to the text. */
  content: [TextContent, ...ImageContent[]]
  isError: boolean
  error?: ToolErrorInfo
  /** Structured value a tool may return beside its text (library users only; never shown to the model). */
  value?: unknown
}

/** What `schemas()` gives the model and its client: no behaviour, no budget. */
export interface ToolSchema {
  readonly name: string
  readonly title?: string
  readonly description: string
  readonly parameters: JsonSchema
  readonly annotations?: ToolAnnotations
}

/**
 * A message for one session's model that arrives outside any call (a background task finished). It is emitted as
 * `tools/session-notice` at once (hosts forward it, e.g. as an MCP log message) and appended, once, to that
 * session's next tool result, so clients that drop out-of-band messages still tell the model.
 */
export interface SessionNotice {
  readonly session: ToolSession
  readonly text: string
  /** Names what the notice is about (`bash-3`), so that `withdrawNotice` can drop it once it is moot. */
  readonly key?: string
}

export interface ExecuteOptions {
  signal?: AbortSignal
  session?: ToolSession
  /** Defaults to a fresh `call-<n>`. */
  callId?: string
}

/**
 * One call as it passes through the pipeline. `tools/pre-execute` listeners may replace `signal` (the timeout
 * policy does) or deny the call; `tools/post-execute` listeners may replace `result`.
 */
export interface ToolCall {
  readonly definition: ToolDefinition
  readonly callId: string
  readonly arguments: Readonly<Record<string, unknown>>
  readonly session?: ToolSession
  /** The caller's own signal. */
  readonly callerSignal: AbortSignal
  /** The signal the tool will see. */
  signal: AbortSignal
  /** The time budget that `signal` enforces, set by the timeout policy (`tools/pre-execute`); the tool sees it. */
  budgetMs?: number
  /** Set before `tools/post-execute` runs. */
  result?: ToolResult
}

export interface ToolDenial {
  deny: string
}
