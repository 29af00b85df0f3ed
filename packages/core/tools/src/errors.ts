/**
 * The error vocabulary of the pipeline. Every error result carries a code: these are the core ones, and each
 * package adds its own (`SEARCH_*`, `FS_*`, `BASH_*`, …) on a subclass of HarnessError.
 */
export const CoreErrorCode = {
  /** The caller's signal was already aborted; the tool was not called. */
  TOOL_ABORTED_BEFORE_DISPATCH: 'TOOL_ABORTED_BEFORE_DISPATCH',
  UNKNOWN_TOOL: 'UNKNOWN_TOOL',
  /** The model's arguments do not fit the schema, or the tool found them unusable. */
  INVALID_ARGS: 'INVALID_ARGS',
  /** A `tools/pre-execute` listener denied the call. */
  TOOL_DENIED: 'TOOL_DENIED',
  /** The timeout policy's budget ran out first. */
  TOOL_TIMEOUT: 'TOOL_TIMEOUT',
  /** The caller cancelled the call while it ran. */
  ABORTED: 'ABORTED',
  /** The tool threw something that is not a HarnessError: a bug, named as such. */
  TOOL_FAILED: 'TOOL_FAILED',
} as const
export type CoreErrorCode = (typeof CoreErrorCode)[keyof typeof CoreErrorCode]

export interface HarnessErrorOptions {
  code: string
  cause?: unknown
}

/** Base class of every error a tool or service throws on purpose: a message for the model and a stable code. */
export class HarnessError extends Error {
  override name = 'HarnessError'
  readonly code: string

  constructor(message: string, options: HarnessErrorOptions) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.code = options.code
  }
}

/** An error the model can fix by changing its arguments. */
export function invalidArgs(message: string, cause?: unknown): HarnessError {
  return new HarnessError(
    message,
    cause === undefined ? { code: CoreErrorCode.INVALID_ARGS } : { code: CoreErrorCode.INVALID_ARGS, cause },
  )
}
