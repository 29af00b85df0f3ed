import { HarnessError } from '@deepseek-ai/dsh-tools'

export const RemoteErrorCode = {
  /** The remote could not be reached, or the connection was lost (or stalled) during the call. The next call reconnects. */
  REMOTE_UNAVAILABLE: 'REMOTE_UNAVAILABLE',
  /** The remote answered, but with a protocol error instead of a tool result (not a dsh, or a version mismatch). */
  REMOTE_PROTOCOL_ERROR: 'REMOTE_PROTOCOL_ERROR',
  /** The plugin's config names no remote, both kinds, or an unusable one (nothing was started). */
  REMOTE_CONFIG_INVALID: 'REMOTE_CONFIG_INVALID',
} as const
export type RemoteErrorCode = (typeof RemoteErrorCode)[keyof typeof RemoteErrorCode]

export class RemoteError extends HarnessError {
  override name = 'RemoteError'
}

/**
 * A remote tool's own error result, carried across unchanged: the same message, name and code as on the remote
 * side, so the local result is byte-identical to the remote one.
 */
export class RemoteToolError extends HarnessError {
  constructor(message: string, name: string, code: string) {
    super(message, { code })
    this.name = name
  }
}
