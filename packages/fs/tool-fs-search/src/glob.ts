import { isAscii } from 'node:buffer'
import { statSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import type { ToolExecution, ToolOutput } from '@deepseek-ai/dsh-tools'
import { invalidArgs } from '@deepseek-ai/dsh-tools'
import { argRoom, globArgv, globThreads, normalizeGlob } from './argv.ts'
import { errorPath, nulInPathMessage, quoteArg, recordOverflowMessage, savedOverflowMessage } from './common-text.ts'
import { SearchError, SearchErrorCode } from './errors.ts'
import { type GlobArgs, pageGlob, savedGlobRow, wholeGlob } from './glob-text.ts'
import { NumberColumn, PathTable } from './path-table.ts'
import { decodeKey, enclosingVcsDir, joinDisplay, pathKey, resolveRoot, type SearchRoot } from './paths.ts'
import { MalformedOutput, RecordSplitter } from './records.ts'
import { endRecords, judgeExit, runRipgrep, searchDeadline } from './ripgrep.ts'
import { cannotSave, deliver, openRoot, type OpenedRoot, type SearchServices, sessionCwd } from './search.ts'
import type { GlobValue } from './values.ts'

const WALKERS = globThreads(availableParallelism())

/** `glob`: every file below `path` whose path matches `pattern`, newest modification first, ties in path order. */
export async function glob(
  services: SearchServices,
  args: GlobArgs,
  exec: ToolExecution,
): Promise<ToolOutput<GlobValue>> {
  if (args.path?.includes('\0')) throw invalidArgs(nulInPathMessage('glob'))
  if (args.pattern.includes('\0')) {
    throw new SearchError('invalid glob pattern: a file name cannot contain a NUL byte', {
      code: SearchErrorCode.SEARCH_INVALID_PATTERN,
    })
  }
  const root = resolveRoot(sessionCwd(exec), args.path)
  const binary = await services.locator.path('glob')
  // Opened and checked (docs/security.md#boundary); ripgrep lists what was opened, and the descriptor is closed once it is done.
  const opened = await openRoot(services, 'glob', root, exec)
  try {
    return await globOpened(services, args, exec, root, opened, binary)
  } finally {
    await opened.close()
  }
}

async function globOpened(
  services: SearchServices,
  args: GlobArgs,
  exec: ToolExecution,
  root: SearchRoot,
  opened: OpenedRoot,
  binary: string,
): Promise<ToolOutput<GlobValue>> {
  const { config } = services
  if (!opened.directory) {
    throw invalidArgs(
      `glob path must be a directory, but ${errorPath(root.display)} is not one: pass the directory that holds it, or read the file with read`,
    )
  }
  const normal = normalizeGlob(args.pattern, root.absolute)
  if ('problem' in normal) throw invalidArgs(`glob pattern "${quoteArg(args.pattern)}" is ${normal.problem}`)
  const passed = argRoom('--glob=', normal.pattern)
  if (passed.bytes > passed.room) {
    throw new SearchError(
      `invalid glob pattern: it is ${passed.bytes} bytes long, but ripgrep takes at most ${passed.room} bytes of glob (one program argument); use a shorter pattern`,
      { code: SearchErrorCode.SEARCH_INVALID_PATTERN },
    )
  }
  const vcs = enclosingVcsDir(root.absolute)
  if (vcs)
    return finish(services, exec, { paths: [], total: 0, insideVcs: { root: root.display, dir: vcs } }, undefined)

  // Each file is stat'ed as soon as ripgrep lists it, while ripgrep walks on (see modificationTime). What is kept per
  // file is its path below the root, in one buffer, and its time, in a typed column: no object per file.
  // ripgrep lists `./rel` below the opened directory; each is stat'ed through its /proc path (the directory listed).
  const listing = new Listing()
  const searched = opened.searched.bytes
  const prefix = searched.length + 1
  const rootKey = pathKey(searched)
  const statBase = Buffer.from(opened.statBase)
  // Until a chunk holds a byte over 0x7f, every name is ASCII and needs no conversion (the common case).
  let ascii = isAscii(root.bytes)
  const splitter = new RecordSplitter(0x00, (bytes, start, end) => {
    if (
      end - start < prefix ||
      bytes.toString('latin1', start, start + rootKey.length) !== rootKey ||
      (prefix > rootKey.length && bytes[start + rootKey.length] !== 0x2f)
    ) {
      throw new MalformedOutput(`a path outside the search root: ${decodeKey(bytes.toString('latin1', start, end))}`)
    }
    const below = start + searched.length
    listing.add(
      bytes,
      start + prefix,
      end,
      modificationTime(
        ascii
          ? opened.statBase + bytes.toString('latin1', below, end)
          : Buffer.concat([statBase, bytes.subarray(below, end)]),
      ),
    )
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
      if (ascii && !isAscii(chunk)) ascii = false
      splitter.push(chunk)
      if (splitter.pendingLength > config.rawOutputMaxBytes)
        throw new SearchError(recordOverflowMessage('glob', config.rawOutputMaxBytes), {
          code: SearchErrorCode.SEARCH_RAW_OUTPUT_OVERFLOW,
        })
      // What the saved list would hold: the paths, each with the root's display and a newline.
      const saved = listing.bytes + listing.length * (Buffer.byteLength(root.display) + 2)
      if (saved > config.savedResultMaxBytes)
        throw new SearchError(savedOverflowMessage('glob', config.savedResultMaxBytes, listing.length), {
          code: SearchErrorCode.SEARCH_RAW_OUTPUT_OVERFLOW,
        })
    },
  })
  if (!run.stoppedAtDeadline) endRecords('glob', splitter)
  const outcome = judgeExit('glob', { ...run, stderr: opened.stderr(run.stderr) }, listing.length, {
    pattern: args.pattern,
    walked: root.absolute,
  })
  const order = listing.newestFirst()
  const shown = (index: number): string => joinDisplay(root.display, listing.display(index, ascii))
  return finish(
    services,
    exec,
    {
      paths: Array.from(order.subarray(0, config.globMaxResults), shown),
      total: order.length,
      ...(outcome.warning === undefined ? {} : { warning: outcome.warning }),
      ...(outcome.stopped ? { stoppedAfterMs: deadlineMs } : {}),
    },
    { order, shown },
  )
}

function finish(
  services: SearchServices,
  exec: ToolExecution,
  value: GlobValue,
  all: { order: Uint32Array; shown: (index: number) => string } | undefined,
): Promise<ToolOutput<GlobValue>> {
  const caps = { maxResults: services.config.globMaxResults, maxBytes: services.config.maxResultBytes }
  return deliver(services, exec, value, {
    fileName: 'glob-results.txt',
    whole: (v) => wholeGlob(v, caps),
    page: (v) => pageGlob(v, caps),
    saved: () => {
      const unsaved = cannotSave(services, exec)
      return unsaved !== undefined ? { unsaved } : { parts: () => savedList(all) }
    },
  })
}

/** The complete list as saved, in parts of about 64 KiB: one path per line, in the order shown. */
function* savedList(all: { order: Uint32Array; shown: (index: number) => string } | undefined): Generator<string> {
  if (all === undefined) return
  let part = ''
  for (const index of all.order) {
    part += savedGlobRow(all.shown(index))
    if (part.length >= 1 << 16) {
      yield part
      part = ''
    }
  }
  if (part !== '') yield part
}

/** The listed files: their paths below the root (one buffer) and modification times (a typed column). */
class Listing {
  private readonly paths = new PathTable()
  private readonly times = new NumberColumn()

  get length(): number {
    return this.paths.length
  }

  get bytes(): number {
    return this.paths.bytes
  }

  add(bytes: Buffer, start: number, end: number, mtime: number): void {
    this.paths.push(bytes, start, end)
    this.times.push(mtime)
  }

  /** Entry `index` as shown below the root (lossy UTF-8 unless every name was ASCII). */
  display(index: number, ascii: boolean): string {
    const key = this.paths.key(index)
    return ascii ? key : decodeKey(key)
  }

  /**
   * The entries newest first; equal times in path order; files that could not be stat'ed last. The distinct times
   * are sorted natively (a Float64Array), each entry finds its time's rank by binary search, a counting pass places
   * the entries, and only groups of equal times go through the path sort.
   */
  newestFirst(): Uint32Array {
    const n = this.times.length
    const times = this.times.values()
    const distinct = uniqueSorted(times.slice().sort())
    // Rank 0 is the newest time; Infinity (no time) sorts last ascending and stays last.
    const finite =
      distinct.length > 0 && distinct[distinct.length - 1] === Infinity ? distinct.length - 1 : distinct.length
    const rankOf = (time: number): number => {
      if (time === Infinity) return finite
      let lo = 0
      let hi = finite - 1
      while (lo < hi) {
        const mid = (lo + hi) >> 1
        if ((distinct[mid] as number) < time) lo = mid + 1
        else hi = mid
      }
      return finite - 1 - lo
    }
    const ranks = new Uint32Array(n)
    const starts = new Uint32Array(distinct.length + 1)
    for (let i = 0; i < n; i++) {
      const rank = rankOf(times[i] as number)
      ranks[i] = rank
      starts[rank + 1] = (starts[rank + 1] as number) + 1
    }
    for (let r = 0; r < distinct.length; r++) starts[r + 1] = (starts[r + 1] as number) + (starts[r] as number)
    const order = new Uint32Array(n)
    const next = starts.slice(0, distinct.length)
    for (let i = 0; i < n; i++) order[(next[ranks[i] as number] as number)++] = i
    const inPathOrder = this.paths.sorter()
    for (let r = 0; r < distinct.length; r++) {
      const lo = starts[r] as number
      const hi = starts[r + 1] as number
      if (hi - lo > 1) inPathOrder(order, lo, hi)
    }
    return order
  }
}

/** The distinct values of an ascending array. */
function uniqueSorted(sorted: Float64Array): Float64Array {
  let kept = 0
  for (let i = 0; i < sorted.length; i++)
    if (i === 0 || sorted[i] !== sorted[kept - 1]) sorted[kept++] = sorted[i] as number
  return sorted.subarray(0, kept)
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
