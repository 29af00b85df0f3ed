import { stat } from 'node:fs/promises'
import { sep } from 'node:path'
import type { Confinement } from '@deepseek-ai/dsh-confinement'
import type { SpillStore } from '@deepseek-ai/dsh-spill'
import type { SubprocessService } from '@deepseek-ai/dsh-subprocess'
import { fileKind } from '@deepseek-ai/dsh-text'
import {
  checkPath,
  openDirectory,
  openFile,
  WorkspaceError,
  type OpenOptions,
  type PathPolicy,
  type Workspace,
} from '@deepseek-ai/dsh-workspace'
import type { ToolExecution } from '@deepseek-ai/dsh-tools'
import { invalidArgs, within } from '@deepseek-ai/dsh-tools'
import type { SearchRoot } from './paths.ts'
import { missingPathMessage, quoteArg, specialPathMessage, UNSAVED, unusablePathMessage } from './common-text.ts'
import { SearchError, SearchErrorCode } from './errors.ts'
import type { Config } from './config.ts'
import type { Confine, RipgrepLocator } from './ripgrep.ts'
import { RealPathFilter } from './real-path-filter.ts'
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
  /** Runs ripgrep inside the session's sandbox, when one is loaded (`--sandbox`; optional, looked up at call time). */
  readonly confinement: () => Confinement | undefined
  readonly locator: RipgrepLocator
}

/** What every ripgrep run of a search shares: where it runs (the opened root, its sandbox), its signal and budgets. */
export function runIn(opened: OpenedRoot, exec: ToolExecution, config: Config, deadlineMs: number) {
  return {
    cwd: opened.cwd,
    confine: opened.confine,
    signal: exec.signal,
    graceMs: config.graceMs,
    stderrMaxBytes: config.stderrMaxBytes,
    deadlineMs,
    memoryLimitBytes: config.rgMaxMemoryBytes > 0 ? config.rgMaxMemoryBytes : undefined,
  }
}

/** The calling session's directory: relative paths resolve against it, results are shown relative to it. */
export function sessionCwd(exec: ToolExecution): string {
  return exec.session?.cwd ?? process.cwd()
}

/**
 * A search root, opened and checked against the workspace policy (docs/security.md#boundary) before ripgrep starts, and what
 * ripgrep is given so that it searches exactly what was checked: on the host, a directory is searched as `.` from a
 * working directory that is the opened descriptor's `/proc/<pid>/fd/<n>` (a symbolic link swapped into the path
 * since cannot redirect it), and a file is named by its descriptor's `/proc` path. Confined (docs/security.md#boundary), ripgrep
 * runs in the session's sandbox, which has its own /proc: it is given the verified real path, and whatever a swap
 * puts there meets the sandbox's masks, as `cat` would. Printed paths start with `searched`.
 */
export interface OpenedRoot {
  readonly directory: boolean
  /** The root as ripgrep is given it and prints it, with the display of the root the model named. */
  readonly searched: SearchRoot
  /** ripgrep's working directory (a directory root's /proc path; for a file, the directory that holds it). */
  readonly cwd: string
  /** The /proc path of an opened directory root: `${statBase}${printed.slice(1)}` names a printed `./…` path. */
  readonly statBase: string
  /** `--glob=!/<rel>` for each hidden path below the root: after the model's globs, so they win. */
  readonly exclude: readonly string[]
  /** The session's sandbox that ripgrep runs in; undefined: it runs on the host. */
  readonly confine: Confine | undefined
  /** On the host with a policy, below a directory root: judges each printed file's real path (real-path-filter.ts). */
  readonly filter: RealPathFilter | undefined
  /** ripgrep's stderr with its `./` paths written below the root the model named. */
  stderr(text: string): string
  close(): Promise<void>
}

/**
 * Opens the root: a path the policy refuses is refused first; one that is not there is a SEARCH_FAILED naming it;
 * a FIFO, socket or device is refused from its stat alone, never opened — ripgrep would open it, and opening a
 * FIFO releases a waiting writer or blocks.
 */
export async function openRoot(
  services: SearchServices,
  tool: ToolName,
  root: SearchRoot,
  exec: ToolExecution,
): Promise<OpenedRoot> {
  const cwd = sessionCwd(exec)
  // fresh: a walk must also skip a hidden directory moved (renamed) into the root since the last look.
  const policy = services.workspace()?.policy(exec.session ?? cwd, tool, true)
  const options: OpenOptions = { cwd, tool, access: 'read', policy }
  if (policy) await checkPath(root.absolute, options)
  const service = services.confinement()
  const confine = service && { service, session: exec.session }
  const directory = await isDirectory(tool, root)
  try {
    if (!directory) {
      const file = await openFile(root.absolute, options)
      const fdPath = `/proc/${process.pid}/fd/${file.handle.fd}`
      const printed = confine ? file.real : fdPath
      return {
        directory,
        searched: { absolute: printed, bytes: Buffer.from(printed), display: root.display },
        cwd: confine ? parentOf(file.real) : parentOf(root.absolute),
        statBase: fdPath,
        exclude: [],
        confine,
        filter: undefined,
        stderr: (text) => text.replaceAll(printed, root.absolute),
        close: () => file.close(),
      }
    }
    const dir = await openDirectory(root.absolute, options)
    const below = root.absolute === sep ? sep : root.absolute + sep
    return {
      directory,
      searched: { absolute: '.', bytes: Buffer.from('.'), display: root.display },
      cwd: confine ? dir.real : dir.fdPath,
      statBase: dir.fdPath,
      exclude: policy ? hiddenBelow(policy, dir.real) : [],
      confine,
      filter: policy && !confine ? new RealPathFilter(dir.fdPath, options) : undefined,
      stderr: (text) =>
        text
          .replace(/(^rg: |IO error for operation on )\.\//gm, (_, lead: string) => lead + below)
          .replace(/^rg: \.:/gm, `rg: ${root.absolute}:`),
      close: () => dir.close(),
    }
  } catch (error) {
    if (error instanceof WorkspaceError) throw error
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR')
      throw new SearchError(missingPathMessage(tool, root.display), {
        code: SearchErrorCode.SEARCH_FAILED,
        cause: error,
      })
    throw new SearchError(unusablePathMessage(tool, root.display, error), {
      code: SearchErrorCode.SEARCH_FAILED,
      cause: error,
    })
  }
}

/** Whether the root is a directory (else a regular file), from its stat (see openRoot). */
async function isDirectory(tool: ToolName, root: SearchRoot): Promise<boolean> {
  let stats
  try {
    stats = await stat(root.absolute)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      throw new SearchError(missingPathMessage(tool, root.display), {
        code: SearchErrorCode.SEARCH_FAILED,
        cause: error,
      })
    }
    throw new SearchError(unusablePathMessage(tool, root.display, error), {
      code: SearchErrorCode.SEARCH_FAILED,
      cause: error,
    })
  }
  if (stats.isDirectory()) return true
  if (stats.isFile()) return false
  throw invalidArgs(specialPathMessage(tool, root.display, fileKind(stats)))
}

function parentOf(path: string): string {
  const at = path.lastIndexOf(sep)
  return at <= 0 ? sep : path.slice(0, at)
}

/** ripgrep globs for the hidden entries below `real` (a directory), anchored at the root, specials escaped. */
export function hiddenBelow(policy: PathPolicy, real: string): string[] {
  const globs = new Set<string>()
  for (const rule of policy.rules) {
    if (!within(rule.parent, real)) continue
    const rel = rule.parent === real ? '' : rule.parent.slice(real === sep ? 1 : real.length + 1)
    const name = typeof rule.name === 'string' ? escapeGlob(rule.name) : escapeGlob(rule.raw, /[\\[\]{}!]/g)
    globs.add(
      `--glob=!/${
        rel === ''
          ? ''
          : `${rel
              .split(sep)
              .map((part) => escapeGlob(part))
              .join('/')}/`
      }${name}`,
    )
  }
  return [...globs]
}

function escapeGlob(text: string, specials = /[\\*?[\]{}!]/g): string {
  return text.replace(specials, '\\$&')
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
export async function keepComplete(
  services: SearchServices,
  exec: ToolExecution,
  suggestedName: string,
  content: () => Iterable<Buffer | string>,
): Promise<SpillOutcome> {
  const store = services.spillStore()
  if (!store) return { unsaved: UNSAVED.noStore }
  if (!exec.session) return { unsaved: UNSAVED.noSession }
  try {
    const saved = await store.saveStream({
      owner: exec.session,
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
  const spill =
    'unsaved' in saved ? { unsaved: saved.unsaved } : await keepComplete(services, exec, view.fileName, saved.parts)
  const capped = { ...value, spill }
  return { text: view.page(capped).text, value: capped }
}
