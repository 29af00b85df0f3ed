import { isAscii } from 'node:buffer'
import { statSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import type { ToolExecution, ToolOutput } from '@deepseek-ai/dsh-tools'
import { invalidArgs } from '@deepseek-ai/dsh-tools'
import { argRoom, globArgv, globThreads, normalizeGlob } from './argv.ts'
import { errorPath, globOverflowMessage, nulInPathMessage, quoteArg } from './common-text.ts'
import { SearchError, SearchErrorCode } from './errors.ts'
import { type GlobArgs, type GlobValue, pageGlob, savedGlob, wholeGlob } from './glob-text.ts'
import { decodeKey, enclosingVcsDir, fsPath, joinDisplay, pathKey, relativeKey, resolveRoot, type SearchRoot, sortInPathOrder } from './paths.ts'
import { MalformedOutput, RecordSplitter } from './records.ts'
import { endRecords, judgeExit, runRipgrep, searchDeadline } from './ripgrep.ts'
import { deliver, openRoot, type OpenedRoot, type SearchServices, sessionCwd } from './search.ts'

const WALKERS = globThreads(availableParallelism())

interface Entry {
  /** The path below the root (see pathKey). */
  readonly rel: string
  /** Modification time in ms (Infinity when the file could not be stat'ed). */
  readonly mtime: number
}

/** `glob`: every file below `path` whose path matches `pattern`, newest modification first, ties in path order. */
export async function glob(services: SearchServices, args: GlobArgs, exec: ToolExecution): Promise<ToolOutput<GlobValue>> {
  const { config } = services
  if (args.path?.includes('\0')) throw invalidArgs(nulInPathMessage('glob'))
  if (args.pattern.includes('\0')) {
    throw new SearchError('invalid glob pattern: a file name cannot contain a NUL byte', { code: SearchErrorCode.SEARCH_INVALID_PATTERN })
  }
  const root = resolveRoot(sessionCwd(exec), args.path)
  const binary = await services.locator.path('glob')
  // Opened and checked (DESIGN §17); ripgrep lists what was opened, and the descriptor is closed once it is done.
  const opened = await openRoot(services, 'glob', root, exec)
  try {
    return await globOpened(services, args, exec, root, opened, binary)
  } finally {
    await opened.close()
  }
}

async function globOpened(services: SearchServices, args: GlobArgs, exec: ToolExecution, root: SearchRoot, opened: OpenedRoot, binary: string): Promise<ToolOutput<GlobValue>> {
  const { config } = services
  if (!opened.directory) {
    throw invalidArgs(`glob path must be a directory, but ${errorPath(root.display)} is not one: pass the directory that holds it, or read the file with read`)
  }
  const normal = normalizeGlob(args.pattern, root.absolute)
  if ('problem' in normal) throw invalidArgs(`glob pattern "${quoteArg(args.pattern)}" is ${normal.problem}`)
  const passed = argRoom('--glob=', normal.pattern)
  if (passed.bytes > passed.room) {
    throw new SearchError(`invalid glob pattern: it is ${passed.bytes} bytes long, but ripgrep takes at most ${passed.room} bytes of glob (one program argument); use a shorter pattern`, { code: SearchErrorCode.SEARCH_INVALID_PATTERN })
  }
  const vcs = enclosingVcsDir(root.absolute)
  if (vcs) return finish(services, exec, { paths: [], insideVcs: { root: root.display, dir: vcs } })

  // Each file is stat'ed as soon as ripgrep lists it, while ripgrep walks on (see modificationTime).
  const rootKey = pathKey(opened.searched.bytes)
  const entries: Entry[] = []
  // Until a chunk holds a byte over 0x7f, every name is ASCII and needs no conversion (the common case).
  let ascii = isAscii(root.bytes)
  let listed = 0
  const splitter = new RecordSplitter(0x00, (bytes, start, end) => {
    const printed = bytes.toString('latin1', start, end)
    const rel = relativeKey(rootKey, printed)
    if (!rel) throw new MalformedOutput(`a path outside the search root: ${decodeKey(printed)}`)
    // `./rel` below the opened directory, stat'ed through its /proc path (the same directory ripgrep listed).
    const path = opened.statBase + printed.slice(1)
    entries.push({ rel, mtime: modificationTime(ascii ? path : fsPath(path)) })
  })
  // Within the budget the call really has: a timeout policy may give a shorter one than the tool's own.
  const deadlineMs = searchDeadline(exec.budgetMs ?? config.timeoutMs)
  const run = await runRipgrep(services.subprocess, {
    tool: 'glob',
    binary,
    args: globArgv(normal.pattern, opened.searched.absolute, WALKERS, opened.exclude),
    // ripgrep matches globs that contain "/" relative to its working directory: the root, as the model expects.
    cwd: opened.cwd,
    signal: exec.signal,
    graceMs: config.graceMs,
    stderrMaxBytes: config.stderrMaxBytes,
    deadlineMs,
    memoryLimitBytes: config.rgMaxMemoryBytes > 0 ? config.rgMaxMemoryBytes : undefined,
    onOutput: (chunk) => {
      // The listing is what glob holds: its bytes are bounded as they come.
      listed += chunk.length
      if (listed > config.rawOutputMaxBytes) throw new SearchError(globOverflowMessage(config.rawOutputMaxBytes), { code: SearchErrorCode.SEARCH_RAW_OUTPUT_OVERFLOW })
      if (ascii && !isAscii(chunk)) ascii = false
      splitter.push(chunk)
    },
  })
  if (!run.stoppedAtDeadline) endRecords('glob', splitter)
  const outcome = judgeExit('glob', { ...run, stderr: opened.stderr(run.stderr) }, entries.length, { pattern: args.pattern, walked: root.absolute })
  sortByModificationThenPath(entries)
  const paths = entries.map((entry) => joinDisplay(root.display, ascii ? entry.rel : decodeKey(entry.rel)))
  return finish(services, exec, {
    paths,
    ...(outcome.warning === undefined ? {} : { warning: outcome.warning }),
    ...(outcome.stopped ? { stoppedAfterMs: deadlineMs } : {}),
  })
}

function finish(services: SearchServices, exec: ToolExecution, value: GlobValue): Promise<ToolOutput<GlobValue>> {
  const caps = { maxResults: services.config.globMaxResults, maxBytes: services.config.maxResultBytes }
  return deliver(services, exec, value, { fileName: 'glob-results.txt', whole: (v) => wholeGlob(v, caps), page: (v) => pageGlob(v, caps), saved: savedGlob })
}

/**
 * ripgrep's own `--sort=modified` walks on one thread and cannot break ties, so the tool lists in parallel and
 * stats every file itself, as ripgrep prints it (docs/decisions/2026-11-30-glob-ordering.md): a synchronous stat
 * is several times cheaper than a promise per file, and a chunk of names takes a few milliseconds. A file gone
 * since the listing has no time and sorts last, as in ripgrep. Times are compared as a double of milliseconds
 * (about a quarter of a microsecond apart at today's dates): closer ones count as ties, never as inverted.
 */
function modificationTime(path: string | Buffer): number {
  try {
    return statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? Infinity
  } catch {
    return Infinity
  }
}

/**
 * Newest first; files with equal times in path order; files that could not be stat'ed last. Grouping by time and
 * sorting the distinct times natively (a Float64Array, then read backwards) costs a fraction of a comparison sort
 * over every entry.
 */
function sortByModificationThenPath(entries: Entry[]): void {
  const groups = new Map<number, Entry[]>()
  for (const entry of entries) {
    const group = groups.get(entry.mtime)
    if (group) group.push(entry)
    else groups.set(entry.mtime, [entry])
  }
  const times = Float64Array.from(groups.keys()).sort()
  let at = 0
  // Infinity (no time) sorts last ascending: it is read last here too.
  const last = times.length > 0 && times[times.length - 1] === Infinity ? times.length - 1 : times.length
  const order = [...times.subarray(0, last).reverse(), ...times.subarray(last)]
  for (const time of order) {
    const group = groups.get(time) as Entry[]
    if (group.length > 1) sortInPathOrder(group, (entry) => entry.rel)
    for (const entry of group) entries[at++] = entry
  }
}
