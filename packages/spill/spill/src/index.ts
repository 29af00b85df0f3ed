import { Context, Service } from 'cordis'
import { HarnessError } from '@deepseek-ai/dsh-tools'

declare module 'cordis' {
  interface Context {
    spillStore: SpillStore
  }
}

export interface SaveTextRequest {
  /** The session the text belongs to; a backend keeps sessions apart. */
  owner: { sessionId: string }
  /** Which call produced it. */
  source: { toolName: string; callId: string }
  /** A hint only: backends make it safe (any string, even `../../etc/passwd`, is accepted). */
  suggestedName: string
  content: string
}

export interface SavedText {
  /** Where the text is; for the local backend an absolute path that `read` and `grep` accept. */
  locator: string
  /** UTF-8 bytes written. */
  bytes: number
  /**
   * One sentence for the model on how to get at it (page with `read` offset/limit, or search with `grep`). It does
   * not repeat the locator: callers print the locator first, then the hint.
   */
  retrievalHint: string
}

export const SpillErrorCode = {
  /** The store could not be written (root unusable, disk full…). */
  SPILL_WRITE_FAILED: 'SPILL_WRITE_FAILED',
} as const
export type SpillErrorCode = (typeof SpillErrorCode)[keyof typeof SpillErrorCode]

export class SpillError extends HarnessError {
  override name = 'SpillError'
}

/** `ctx.spillStore`: keeps results too large to show so that the model can page through them later. */
export abstract class SpillStore extends Service {
  static readonly provide = 'spillStore'

  constructor(ctx: Context) {
    super(ctx, 'spillStore')
  }

  /**
   * Keeps `content` complete, byte for byte, and says where. Never overwrites an earlier save. Rejects with a
   * SpillError (SPILL_WRITE_FAILED) when the text could not be kept; callers treat that as "not saved", never as a
   * failed tool call.
   */
  abstract saveText(request: SaveTextRequest): Promise<SavedText>

  /**
   * For a store that keeps results as local files: the directory holding every session's (`all`) and the one
   * holding `sessionId`'s (`own`, which may not exist yet). Confinement uses it to show a session only its own
   * saved results (the bash sandbox masks `all` but `own`). Undefined (the default) for other stores.
   */
  localDirectories(_sessionId: string): { all: string; own: string } | undefined {
    return undefined
  }
}
