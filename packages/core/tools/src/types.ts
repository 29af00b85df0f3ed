/** A JSON Schema object, as sent to the model. */
export interface JsonSchema {
  readonly type?: string | readonly string[]
  readonly [keyword: string]: unknown
}

export interface ToolSession {
  readonly id: string
  /** Absolute directory that relative paths resolve against. */
  readonly cwd: string
}

/** What a tool receives besides its arguments. */
export interface ToolExecution {
  readonly callId: string
  readonly name: string
  readonly arguments: Readonly<Record<string, unknown>>
  /** Always present: aborts on caller cancellation, or on the tool's time budget. */
  readonly signal: AbortSignal
  readonly session?: ToolSession
}

export interface ToolOutput<V = unknown> {
  text: string
  value?: V
}

export interface ToolDefinition<A = Record<string, unknown>> {
  readonly name: string
  readonly description: string
  readonly parameters: JsonSchema
  /** Cooperative budget applied by the timeout policy; never sent to the model. */
  readonly timeoutMs?: number
  execute(args: A, exec: ToolExecution): Promise<string | ToolOutput> | string | ToolOutput
}

export interface ToolErrorInfo {
  readonly message: string
  readonly name: string
  readonly code: string
}

export interface ToolResult {
  content: [{ type: 'text'; text: string }]
  isError: boolean
  error?: ToolErrorInfo
  /** Structured value a tool may return beside its text (library users only; never shown to the model). */
  value?: unknown
}

/** What `schemas()` gives the model: no behaviour, no budget. */
export interface ToolSchema {
  readonly name: string
  readonly description: string
  readonly parameters: JsonSchema
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
  /** Set before `tools/post-execute` runs. */
  result?: ToolResult
}

export interface ToolDenial {
  deny: string
}
