import { readFileSync, realpathSync } from 'node:fs'
import { dirname, isAbsolute, join } from 'node:path'
import { privateCopy, resolveTrusted } from '@deepseek-ai/dsh-subprocess'
import { type ToolExecution, within } from '@deepseek-ai/dsh-tools'
import type { ToolName } from './values.ts'
import { launchFailedMessage } from './common-text.ts'
import { SearchError, SearchErrorCode } from './errors.ts'
import { packagedRipgrep, RipgrepLocator, type RipgrepLoader } from './ripgrep.ts'

/** The file `npm run pack` writes beside the bundle: platform package → its version and the SHA-256 of its rg. */
export const DIGESTS_FILE = 'ripgrep-digests.json'

/** What pack.mjs recorded: `{ "@vscode/ripgrep-linux-x64": { "version": "1.18.0", "sha256": "…" } }`. */
export type PackedDigests = Readonly<Record<string, { readonly version: string; readonly sha256: string }>>

/**
 * The ripgrep that runs (docs/security.md#boundary trusted launch, docs/security.md#boundary): always an absolute path, never a PATH lookup (a bare
 * `rgPath` is looked up in the system directories only). While workspace roots confine the tools (`--sandbox`, a
 * `workspace` section), rg runs from a private read-only copy, made when the plugin starts (before any command of
 * this process can run) from bytes that were checked: a binary that lies inside a writable root of the calling
 * session is used only when its SHA-256 is the one recorded when dsh was packed for its platform package and version
 * (docs/decisions/2026-12-04-trusted-ripgrep.md); otherwise the call fails and says which rg to use. A later process
 * (a fresh `dsh call`) therefore never copies a binary a command replaced. Without roots nothing is confined, and
 * the binary runs where it lies.
 */
export class TrustedRipgrep extends RipgrepLocator {
  private copy: { source: string; path: string; vouched: boolean } | undefined
  private trustedOverride: string | undefined

  constructor(
    private readonly rgPath: string | undefined,
    private readonly confined: () => boolean,
    /** The writable roots of the calling session (empty without one). */
    private readonly writable: (exec: ToolExecution | undefined) => readonly string[] = () => [],
    load?: RipgrepLoader,
    private readonly digests: () => PackedDigests | undefined = packedDigests,
  ) {
    super(rgPath, load)
    if (!confined()) return
    // At start, when it can be found without loading anything: a platform package found only later is copied then.
    try {
      const source = rgPath === undefined ? packagedRipgrep(import.meta.url) : this.resolveOverride('grep', rgPath)
      if (source !== undefined) this.copy = this.privateCopy('grep', source)
    } catch {
      // The first call reports it (or finds it by then): a search problem must not fail the plugin's start.
    }
  }

  override async path(tool: ToolName, exec?: ToolExecution): Promise<string> {
    const found =
      this.rgPath === undefined
        ? await super.path(tool)
        : (this.trustedOverride ??= this.resolveOverride(tool, this.rgPath))
    if (!this.confined()) return found
    if (this.copy?.source !== found) this.copy = this.privateCopy(tool, found)
    const copy = this.copy
    if (copy.vouched) return copy.path
    const real = realOrSelf(found)
    const root = this.writable(exec).find((dir) => within(real, dir))
    if (root !== undefined)
      throw untrusted(
        tool,
        found,
        `it lies inside the writable directory ${root}, where a command can replace it, and no SHA-256 recorded when dsh was packed vouches for it`,
      )
    return copy.path
  }

  /** The private copy of `source`, refused when a digest recorded for its package and version differs. */
  private privateCopy(tool: ToolName, source: string): { source: string; path: string; vouched: boolean } {
    const recorded = recordFor(source, this.digests())
    let vouched = false
    try {
      const path = privateCopy(source, (sha256) => {
        if (recorded === undefined) return
        if (sha256 !== recorded.sha256)
          throw untrusted(
            tool,
            source,
            `its SHA-256 ${sha256.slice(0, 16)}… is not ${recorded.sha256.slice(0, 16)}…, the one recorded for ${recorded.name}@${recorded.version} when dsh was packed: it was replaced`,
          )
        vouched = true
      })
      return { source, path, vouched }
    } catch (error) {
      if (error instanceof SearchError) throw error
      throw new SearchError(launchFailedMessage(tool, source, (error as Error).message), {
        code: SearchErrorCode.SEARCH_FAILED,
        cause: error,
      })
    }
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

function untrusted(tool: ToolName, binary: string, why: string): SearchError {
  return new SearchError(
    launchFailedMessage(
      tool,
      binary,
      `it is not trusted: ${why}. Install ripgrep outside the workspace (e.g. apt-get install ripgrep) and set "tool-fs-search": {"rgPath": "/usr/bin/rg"}, or install dsh outside the workspace (npm install -g dsh-agent-tools)`,
    ),
    { code: SearchErrorCode.SEARCH_FAILED },
  )
}

/**
 * The digest recorded for the platform package that holds `binary` (`…/<name>/bin/rg`, its package.json beside
 * `bin`), at that package's version; undefined when nothing is recorded for it.
 */
function recordFor(
  binary: string,
  digests: PackedDigests | undefined,
): { name: string; version: string; sha256: string } | undefined {
  if (digests === undefined) return undefined
  try {
    const manifest = JSON.parse(readFileSync(join(dirname(dirname(binary)), 'package.json'), 'utf8')) as {
      name?: unknown
      version?: unknown
    }
    if (typeof manifest.name !== 'string' || typeof manifest.version !== 'string') return undefined
    const entry = digests[manifest.name]
    return entry !== undefined && entry.version === manifest.version
      ? { name: manifest.name, version: entry.version, sha256: entry.sha256 }
      : undefined
  } catch {
    return undefined
  }
}

let packed: PackedDigests | null | undefined

/**
 * The digests written beside the bundle by `npm run pack` (dist/ripgrep-digests.json, found from the bundle's
 * chunks or its entry); undefined when running from sources or an unpacked build. Read once.
 */
export function packedDigests(from: string = import.meta.url): PackedDigests | undefined {
  if (packed === undefined) {
    packed = null
    for (const relative of [`../${DIGESTS_FILE}`, `./${DIGESTS_FILE}`]) {
      try {
        packed = JSON.parse(readFileSync(new URL(relative, from), 'utf8')) as PackedDigests
        break
      } catch {
        // not there: a source tree or an unpacked build
      }
    }
  }
  return packed ?? undefined
}

function realOrSelf(path: string): string {
  try {
    return realpathSync.native(path)
  } catch {
    return path
  }
}
