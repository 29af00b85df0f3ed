import { statSync } from 'node:fs'
import type { ToolExecution, ToolOutput } from '@deepseek-ai/dsh-tools'
import { invalidArgs } from '@deepseek-ai/dsh-tools'
import { globArgv } from './argv.ts'
import { abortedMessage, nulInPathMessage, showPath } from './common-text.ts'
import { SearchError, SearchErrorCode } from './errors.ts'
import { type GlobArgs, type GlobValue, renderGlob } from './glob-text.ts'
import { decodeLossy, enclosingVcsDir, joinDisplay, pathKey, relativeBytes, resolveRoot } from './paths.ts'
import { MalformedOutput, RecordSplitter } from './records.ts'
import { judgeExit, runRipgrep } from './ripgrep.ts'
import { isDirectory, keepComplete, type SearchDeps, sessionCwd } from './search.ts'

interface Entry {
  /** As ripgrep printed it: absolute, so it can be stat'ed as is. */
  readonly printed: Buffer
  readonly rel: Buffer
  readonly key: string
  mtime: bigint | undefined
}

// Stats per event-loop turn: a few milliseconds each, so other calls are never held up for long.
const STAT_BATCH = 2048

/** `glob`: every file below `path` whose path matches `pattern`, oldest modification first, ties in path order. */
export async function glob(deps: SearchDeps, args: GlobArgs, exec: ToolExecution): Promise<ToolOutput<GlobValue>> {
  const { config } = deps
  if (args.path?.includes('\0')) throw invalidArgs(nulInPathMessage('glob'))
  if (args.pattern.includes('\0')) {
    throw new SearchError('invalid glob pattern: a file name cannot contain a NUL byte', { code: SearchErrorCode.SEARCH_INVALID_PATTERN })
  }
  const root = resolveRoot(sessionCwd(exec), args.path)
  if (!(await isDirectory('glob', root))) {
    throw invalidArgs(`glob path must be a directory, but ${showPath(root.display)} is not one: pass the directory that holds it, or read the file with read`)
  }
  const vcs = enclosingVcsDir(root.absolute)
  if (vcs) return finish(deps, exec, { paths: [], insideVcs: { root: root.display, dir: vcs } })

  const entries: Entry[] = []
  const splitter = new RecordSplitter(0, (printed) => {
    const rel = relativeBytes(root, printed)
    if (!rel || rel.length === 0) throw new MalformedOutput(`a path outside the search root: ${decodeLossy(printed)}`)
    entries.push({ printed, rel, key: pathKey(rel), mtime: undefined })
  })
  const run = await runRipgrep(deps.ctx.subprocess, {
    tool: 'glob',
    binary: await deps.locator.path('glob'),
    args: globArgv(args.pattern, root.absolute),
    // ripgrep matches globs that contain "/" relative to its working directory: the root, as the model expects.
    cwd: root.absolute,
    signal: exec.signal,
    graceMs: config.graceMs,
    stderrMaxBytes: config.stderrMaxBytes,
    rawOutputMaxBytes: config.rawOutputMaxBytes,
    onOutput: (chunk) => splitter.push(chunk),
  })
  try {
    splitter.end()
  } catch (error) {
    throw new SearchError(`glob search failed: could not read ripgrep's output (${(error as Error).message})`, { code: SearchErrorCode.SEARCH_FAILED, cause: error })
  }
  const { warning } = judgeExit('glob', run, entries.length)

  await readModificationTimes(entries, exec.signal)
  entries.sort(byModificationThenPath)
  const paths = entries.map((entry) => joinDisplay(root.display, decodeLossy(entry.rel)))
  return finish(deps, exec, warning === undefined ? { paths } : { paths, warning })
}

async function finish(deps: SearchDeps, exec: ToolExecution, value: GlobValue): Promise<ToolOutput<GlobValue>> {
  const caps = { maxResults: deps.config.globMaxResults }
  if (value.paths.length <= caps.maxResults) return { text: renderGlob(value, caps), value }
  const spill = await keepComplete(deps, exec, 'glob-results.txt', () => renderGlob(value, { maxResults: Infinity }))
  const capped = { ...value, spill }
  return { text: renderGlob(capped, caps), value: capped }
}

/**
 * One stat per listed file (ripgrep's own `--sort=modified` cannot break ties, so the tool stats anyway; see
 * docs/decisions/2026-11-30-glob-ordering.md). Synchronous stats in batches are several times cheaper than
 * one promise each; a file gone since the listing keeps no time and sorts last, as in ripgrep.
 */
async function readModificationTimes(entries: Entry[], signal: AbortSignal): Promise<void> {
  for (let start = 0; start < entries.length; start += STAT_BATCH) {
    if (start > 0) await new Promise((resolve) => setImmediate(resolve))
    if (signal.aborted) throw new SearchError(abortedMessage('glob'), { code: SearchErrorCode.SEARCH_ABORTED })
    const end = Math.min(entries.length, start + STAT_BATCH)
    for (let i = start; i < end; i++) {
      const entry = entries[i] as Entry
      try {
        entry.mtime = statSync(entry.printed, { bigint: true, throwIfNoEntry: false })?.mtimeNs
      } catch {
        entry.mtime = undefined
      }
    }
  }
}

function byModificationThenPath(a: Entry, b: Entry): number {
  if (a.mtime !== b.mtime) {
    if (a.mtime === undefined) return 1
    if (b.mtime === undefined) return -1
    return a.mtime < b.mtime ? -1 : 1
  }
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0
}
