import { isAbsolute } from 'node:path'
import { privateCopy, resolveTrusted } from '@deepseek-ai/dsh-subprocess'
import type { ToolName } from './values.ts'
import { launchFailedMessage } from './common-text.ts'
import { SearchError, SearchErrorCode } from './errors.ts'
import { packagedRipgrep, RipgrepLocator, type RipgrepLoader } from './ripgrep.ts'

/**
 * The ripgrep that runs (docs/security.md#boundary, trusted launch): always an absolute path, never a PATH lookup (a bare `rgPath`
 * is looked up in the system directories only). While workspace roots confine the tools (`--sandbox`, a
 * `workspace` section), rg runs from a private read-only copy made when the plugin starts — before any command can
 * run — so a command that replaces the packaged binary (dsh installed inside the workspace) never gets its
 * program run on the host. Without roots nothing is confined, and the binary runs where it lies.
 */
export class TrustedRipgrep extends RipgrepLocator {
  private copy: { source: string; path: string } | undefined
  private trustedOverride: string | undefined

  constructor(
    private readonly rgPath: string | undefined,
    private readonly confined: () => boolean,
    load?: RipgrepLoader,
  ) {
    super(rgPath, load)
    if (!confined()) return
    // At start, when it can be found without loading anything: a platform package found only later is copied then.
    try {
      const source = rgPath === undefined ? packagedRipgrep(import.meta.url) : this.resolveOverride('grep', rgPath)
      if (source !== undefined) this.copy = { source, path: privateCopy(source) }
    } catch {
      // The first call reports it (or finds it by then): a search problem must not fail the plugin's start.
    }
  }

  override async path(tool: ToolName): Promise<string> {
    const found =
      this.rgPath === undefined
        ? await super.path(tool)
        : (this.trustedOverride ??= this.resolveOverride(tool, this.rgPath))
    if (!this.confined()) return found
    if (this.copy?.source !== found) {
      try {
        this.copy = { source: found, path: privateCopy(found) }
      } catch (error) {
        throw new SearchError(launchFailedMessage(tool, found, (error as Error).message), {
          code: SearchErrorCode.SEARCH_FAILED,
          cause: error,
        })
      }
    }
    return this.copy.path
  }

  /** `rgPath` as an absolute path: as written (its spawn reports a missing one), or a bare name found in the system directories. */
  private resolveOverride(tool: ToolName, rgPath: string): string {
    if (isAbsolute(rgPath)) return rgPath
    const found = resolveTrusted(rgPath)
    if ('problem' in found) {
      throw new SearchError(
        launchFailedMessage(tool, rgPath, `${found.problem}; set "tool-fs-search": {"rgPath": "/absolute/path/to/rg"}`),
        { code: SearchErrorCode.SEARCH_FAILED },
      )
    }
    return found.path
  }
}
