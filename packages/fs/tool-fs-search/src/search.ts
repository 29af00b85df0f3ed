import { stat } from 'node:fs/promises'
import type { SpillStore } from '@deepseek-ai/dsh-spill'
import type { SubprocessService } from '@deepseek-ai/dsh-subprocess'
import type { Workspace } from '@deepseek-ai/dsh-workspace'
import type { ToolExecution } from '@deepseek-ai/dsh-tools'
import { invalidArgs } from '@deepseek-ai/dsh-tools'
import type { SearchRoot } from './paths.ts'
import { missingPathMessage, quoteArg, specialPathMessage, UNSAVED, unusablePathMessage } from './common-text.ts'
import { SearchError, SearchErrorCode } from './errors.ts'
import type { Config } from './config.ts'
import type { RipgrepLocator } from './ripgrep.ts'
import type { Page, SpillOutcome, ToolName } from './values.ts'

/**
 * What both tools use, for the lifetime of the plugin: their services, not the Cordis context, so the behaviour
 * reads (and can be driven) without one. The spill store is optional and looked up at call time.
 */
export interface SearchServices {
  readonly config: Config
  readonly subprocess: SubprocessService
  readonly spillStore: () => SpillStore | undefined
  /** The workspace roots, when confinement is on (optional, looked up at call time). */
  readonly workspace: () => Workspace | undefined
  readonly locator: RipgrepLocator
}

/** The calling session's directory: relative paths resolve against it, results are shown relative to it. */
export function sessionCwd(exec: ToolExecution): string {
  return exec.session?.cwd ?? process.cwd()
}

/** Workspace roots (optional service): a search root that resolves outside every root is refused before rg runs. */
export async function confineRoot(services: SearchServices, tool: ToolName, root: SearchRoot, exec: ToolExecution): Promise<void> {
  await services.workspace()?.confine(root.absolute, { cwd: sessionCwd(exec), tool })
}

/**
 * Whether the root is a directory (else a regular file). A root that is not there is a SEARCH_FAILED naming it; a
 * FIFO, socket or device is refused from its stat alone — ripgrep would open it, and opening a FIFO releases a
 * waiting writer or blocks.
 */
export async function isDirectory(tool: ToolName, root: SearchRoot): Promise<boolean> {
  let stats
  try {
    stats = await stat(root.absolute)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      throw new SearchError(missingPathMessage(tool, root.display), { code: SearchErrorCode.SEARCH_FAILED, cause: error })
    }
    throw new SearchError(unusablePathMessage(tool, root.display, error), { code: SearchErrorCode.SEARCH_FAILED, cause: error })
  }
  if (stats.isDirectory()) return true
  if (stats.isFile()) return false
  const kind = stats.isFIFO() ? 'a FIFO (named pipe)' : stats.isSocket() ? 'a socket' : stats.isCharacterDevice() ? 'a character device' : stats.isBlockDevice() ? 'a block device' : 'not a regular file'
  throw invalidArgs(specialPathMessage(tool, root.display, kind))
}

/** Why the complete result of this call cannot be saved at all (no store, no session), before the search runs. */
export function cannotSave(services: SearchServices, exec: ToolExecution): string | undefined {
  if (!services.spillStore()) return UNSAVED.noStore
  if (!exec.session) return UNSAVED.noSession
  return undefined
}

/**
 * Keeps the complete formatted result in the spill store (owner: the calling session), written part by part as
 * `content` yields it. Best effort: without a store, a session or a successful save, the reason goes into the
 * footer; never an error.
 */
export async function keepComplete(services: SearchServices, exec: ToolExecution, suggestedName: string, content: () => Iterable<Buffer | string>): Promise<SpillOutcome> {
  const store = services.spillStore()
  if (!store) return { unsaved: UNSAVED.noStore }
  if (!exec.session) return { unsaved: UNSAVED.noSession }
  try {
    const saved = await store.saveStream({
      owner: { sessionId: exec.session.id },
      source: { toolName: exec.name, callId: exec.callId },
      suggestedName,
      content: content(),
    })
    return { saved: { locator: saved.locator, retrievalHint: saved.retrievalHint } }
  } catch (error) {
    return { unsaved: UNSAVED.failed(quoteArg((error as Error)?.message ?? String(error))) }
  }
}

/**
 * The one paging step of glob and grep: the whole result when it fits the page (count and bytes); else the
 * complete result saved (or why it could not be), and the page rendered once, with the footer that says where it is.
 */
export async function deliver<V extends { readonly spill?: SpillOutcome }>(
  services: SearchServices,
  exec: ToolExecution,
  value: V,
  view: {
    readonly fileName: string
    readonly whole: (value: V) => string | undefined
    readonly page: (value: V) => Page
    /** The complete result as saved, in parts; or why it cannot be saved. */
    readonly saved: (value: V) => { readonly unsaved: string } | { readonly parts: () => Iterable<Buffer | string> }
  },
): Promise<{ text: string; value: V }> {
  const whole = view.whole(value)
  if (whole !== undefined) return { text: whole, value }
  const saved = view.saved(value)
  const spill = 'unsaved' in saved ? { unsaved: saved.unsaved } : await keepComplete(services, exec, view.fileName, saved.parts)
  const capped = { ...value, spill }
  return { text: view.page(capped).text, value: capped }
}
