import { HarnessError } from '@deepseek-ai/dsh-tools'

export const SearchErrorCode = {
  /** ripgrep rejected the regex or a glob, or the pattern holds something no search can use (a line break, NUL). */
  SEARCH_INVALID_PATTERN: 'SEARCH_INVALID_PATTERN',
  /** ripgrep could not be started, was killed, printed something unreadable, or failed (a missing path included). */
  SEARCH_FAILED: 'SEARCH_FAILED',
  /** ripgrep printed more than `rawOutputMaxBytes`; it was stopped. */
  SEARCH_RAW_OUTPUT_OVERFLOW: 'SEARCH_RAW_OUTPUT_OVERFLOW',
  /** The call's signal aborted (cancellation or the time budget); ripgrep was stopped. */
  SEARCH_ABORTED: 'SEARCH_ABORTED',
} as const
export type SearchErrorCode = (typeof SearchErrorCode)[keyof typeof SearchErrorCode]

export class SearchError extends HarnessError {
  override name = 'SearchError'
  declare readonly code: SearchErrorCode

  constructor(message: string, options: { code: SearchErrorCode; cause?: unknown }) {
    super(message, options)
  }
}
