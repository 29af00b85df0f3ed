import { type Context, Service } from 'cordis'
import { HarnessError, type ToolSession } from '@deepseek-ai/dsh-tools'

declare module 'cordis' {
  interface Context {
    spillStore: SpillStore
  }
}

export interface SaveTextRequest {
  /** The session the text belongs to; a backend keeps sessions apart (by the session's random `dirName`). */
  owner: ToolSession
  /** Which call produced it. */
  source: { toolName: string; callId: string }
  /** A hint only: backends make it safe (any string, even `../../etc/passwd`, is accepted). */
  suggestedName: string
  content: string
}

/** A text that arrives in parts (UTF-8 bytes or strings, in order), such as a search result too large to hold. */
export interface SaveStreamRequest extends Omit<SaveTextRequest, 'content'> {
  /**
   * Read once, in order. A part may be reused by its producer once the next one is asked for, so a store that
   * keeps parts copies them.
   */
  content: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>
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
   * Keeps a text that arrives in parts, with saveText's guarantees. This default joins the parts and calls saveText
   * (so every store offers it, holding the whole text once); a backend that can write as it reads overrides it and
   * holds one part at a time.
   */
  async saveStream(request: SaveStreamRequest): Promise<SavedText> {
    const { content, ...rest } = request
    const parts: Buffer[] = []
    for await (const part of content)
      parts.push(typeof part === 'string' ? Buffer.from(part, 'utf8') : Buffer.from(part))
    return this.saveText({ ...rest, content: Buffer.concat(parts).toString('utf8') })
  }

  /**
   * For a store that keeps results as local files: the directory holding every session's (`all`) and the one
   * holding `session`'s (`own`, which may not exist yet). Confinement uses it to show a session only its own
   * saved results (every other session's are hidden paths, for the file tools as for commands). Undefined (the
   * default) for other stores.
   */
  localDirectories(_session: ToolSession): { all: string; own: string } | undefined {
    return undefined
  }
}

/** A session's local directories in a store (see SpillStore.localDirectories). */
export type LocalDirectories = ReturnType<SpillStore['localDirectories']>

const DIRECTORIES: unique symbol = Symbol('dsh.spill.local-directories')

/** `store.localDirectories(session)`, asked once per session and store (the answer is kept in the session). */
export function localDirectoriesOf(store: SpillStore, session: ToolSession): LocalDirectories {
  const known = session.slot(DIRECTORIES, (): { store?: SpillStore; dirs?: LocalDirectories } => ({}))
  if (known.store !== store) Object.assign(known, { store, dirs: store.localDirectories(session) })
  return known.dirs
}
