import { stat } from 'node:fs/promises'
import type { Context } from 'cordis'
import type {} from '@deepseek-ai/dsh-spill'
import type {} from '@deepseek-ai/dsh-workspace'
import type { ToolExecution } from '@deepseek-ai/dsh-tools'
import { escapeControl, type SearchRoot } from './paths.ts'
import { missingPathMessage, type SpillOutcome, type ToolName, UNSAVED, unusablePathMessage } from './common-text.ts'
import { SearchError, SearchErrorCode } from './errors.ts'
import type { Config } from './config.ts'
import type { RipgrepLocator } from './ripgrep.ts'

/** What both tools share for the lifetime of the plugin. */
export interface SearchDeps {
  readonly ctx: Context
  readonly config: Config
  readonly locator: RipgrepLocator
}

/** The calling session's directory: relative paths resolve against it, results are shown relative to it. */
export function sessionCwd(exec: ToolExecution): string {
  return exec.session?.cwd ?? process.cwd()
}

/** Workspace roots (optional service): a search root that resolves outside every root is refused before rg runs. */
export async function confineRoot(deps: SearchDeps, tool: ToolName, root: SearchRoot, exec: ToolExecution): Promise<void> {
  await deps.ctx.get('workspace')?.confine(root.absolute, { cwd: sessionCwd(exec), tool })
}

/** Whether the root is a directory; a root that is not there is a SEARCH_FAILED naming it. */
export async function isDirectory(tool: ToolName, root: SearchRoot): Promise<boolean> {
  try {
    return (await stat(root.absolute)).isDirectory()
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      throw new SearchError(missingPathMessage(tool, root.display), { code: SearchErrorCode.SEARCH_FAILED, cause: error })
    }
    throw new SearchError(unusablePathMessage(tool, root.display, (error as Error).message), { code: SearchErrorCode.SEARCH_FAILED, cause: error })
  }
}

/**
 * Keeps the complete formatted result in the spill store (owner: the calling session). Best effort: without a
 * store, a session or a successful save, the reason goes into the footer; never an error.
 */
export async function keepComplete(deps: SearchDeps, exec: ToolExecution, suggestedName: string, content: () => string): Promise<SpillOutcome> {
  const store = deps.ctx.get('spillStore')
  if (!store) return { unsaved: UNSAVED.noStore }
  if (!exec.session) return { unsaved: UNSAVED.noSession }
  try {
    const saved = await store.saveText({
      owner: { sessionId: exec.session.id },
      source: { toolName: exec.name, callId: exec.callId },
      suggestedName,
      content: content(),
    })
    return { saved: { locator: saved.locator, retrievalHint: saved.retrievalHint } }
  } catch (error) {
    return { unsaved: UNSAVED.failed(escapeControl((error as Error)?.message ?? String(error), { keepTab: false })) }
  }
}
