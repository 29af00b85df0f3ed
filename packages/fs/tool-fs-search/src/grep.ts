import { dirname } from 'node:path'
import type { ToolExecution, ToolOutput } from '@deepseek-ai/dsh-tools'
import { invalidArgs } from '@deepseek-ai/dsh-tools'
import { argRoom, type GrepFlags, grepArgv, includeProblem, literalArgv, normalizeInclude } from './argv.ts'
import {
  malformedMessage,
  nulInPathMessage,
  quoteArg,
  recordOverflowMessage,
  savedOverflowMessage,
  UNSAVED,
} from './common-text.ts'
import { SearchError, SearchErrorCode } from './errors.ts'
import { CountList } from './grep-lists.ts'
import { type Around, GrepResults } from './grep-results.ts'
import {
  type GrepArgs,
  literalHint,
  type OutputMode,
  renderGrep,
  savedCountHeader,
  savedCountRow,
  savedFileRow,
  savedFilesHeader,
  savedHeader,
  unknownTypeMessage,
  wholeResult,
} from './grep-text.ts'
import { PathListing } from './listing.ts'
import { hostileIgnoreFiles, type RetryRun, retryPlan } from './ignore-trap.ts'
import { resolveRoot, type SearchRoot } from './paths.ts'
import { GrepCollector, RecordSplitter } from './records.ts'
import { endRecords, judgeExit, RipgrepOutOfMemory, runRipgrep, searchDeadline } from './ripgrep.ts'
import { cannotSave, deliver, openRoot, type OpenedRoot, runIn, type SearchServices, sessionCwd } from './search.ts'
import type { GrepCountValue, GrepFilesValue, GrepNotes, GrepResultValue, GrepValue, GrepWindow } from './values.ts'

/** Saved rows gathered in memory before they go to the temporary file, at most (UTF-8 bytes). */
const CHUNK_BYTES = 4 * 1024 * 1024

/** `grep`: every line matching `pattern` below `path`, grouped by file in path order, lines ascending. */
export async function grep(
  services: SearchServices,
  args: GrepArgs,
  exec: ToolExecution,
): Promise<ToolOutput<GrepResultValue>> {
  checkArgs(args)
  const root = resolveRoot(sessionCwd(exec), args.path)
  // Opened and checked (docs/security.md#boundary); every ripgrep run searches what was opened, and the descriptor is closed once
  // the last one ends.
  const opened = await openRoot(services, 'grep', root, exec)
  try {
    return await grepOpened(services, args, exec, root, opened)
  } finally {
    await opened.close()
  }
}

async function grepOpened(
  services: SearchServices,
  args: GrepArgs,
  exec: ToolExecution,
  root: SearchRoot,
  opened: OpenedRoot,
): Promise<ToolOutput<GrepResultValue>> {
  const { config } = services
  const { directory } = opened
  // ripgrep matches an include glob that contains "/" relative to its working directory: the root, or its directory.
  const base = directory ? root.absolute : dirname(root.absolute)
  const include = args.include === undefined ? undefined : usableInclude(args.include, base)
  const started = Date.now()
  // Within the budget the call really has: a timeout policy may give a shorter one than the tool's own.
  const deadlineMs = searchDeadline(exec.budgetMs ?? config.timeoutMs)
  const mode = args.output_mode ?? 'content'
  const window: GrepWindow | undefined =
    args.offset === undefined && args.head_limit === undefined
      ? undefined
      : { offset: args.offset ?? 0, limit: args.head_limit ?? Number.MAX_SAFE_INTEGER }
  // Rows are kept for the saved result only when it can be saved (a store and a session) and the model did not ask
  // for a page of its own, decided once per call.
  const unsaved = window !== undefined ? 'the call asked for a page of its own' : cannotSave(services, exec)
  const search: Search = {
    root,
    opened,
    include,
    deadlineMs,
    keepRows: unsaved === undefined,
    mode,
    around: mode === 'content' ? around(args) : undefined,
    window,
    multiline: args.multiline === true,
  }

  let found: Found
  let skipped: string[] | undefined
  try {
    found = await searchOnce(services, args, exec, search, false)
  } catch (error) {
    // ripgrep ran out of memory: an ignore file it cannot use is the likely cause. The search runs again without
    // the rules of those files (ignore-trap.ts), and the answer says which were left out and why.
    if (!(error instanceof RipgrepOutOfMemory) || !directory) throw error
    const hostile = await hostileIgnoreFiles(root.absolute)
    if (hostile.length === 0) throw error
    const plan = retryPlan(hostile, root.absolute, sessionCwd(exec))
    skipped = plan.notes
    found = await searchRuns(
      services,
      args,
      exec,
      { ...search, deadlineMs: Math.max(1, deadlineMs - (Date.now() - started)) },
      plan.runs,
    )
  }
  using gathered = found.gathered
  const { outcome } = found

  let literalMatches: boolean | undefined
  if (gathered.found === 0 && literalHint(args.pattern) !== undefined) {
    literalMatches = await matchesLiterally(services, args, exec, search, deadlineMs - (Date.now() - started))
  }
  const notes: GrepNotes = {
    query: {
      pattern: args.pattern,
      path: root.display,
      ...(args.include === undefined ? {} : { include: args.include }),
      ...(args.type === undefined ? {} : { type: args.type }),
    },
    ...(literalMatches === undefined ? {} : { literalMatches }),
    ...(skipped === undefined ? {} : { skippedIgnoreFiles: skipped }),
    ...(outcome.warning === undefined ? {} : { warning: outcome.warning }),
    ...(outcome.stopped ? { stoppedAfterMs: deadlineMs } : {}),
    ...(window === undefined ? {} : { window }),
  }
  const caps = { maxMatches: config.grepMaxMatches, maxBytes: config.maxResultBytes }
  const value = gathered.value(notes, pageEntries(caps.maxMatches, window))
  const view = {
    fileName: 'grep-results.txt',
    whole: (v: GrepResultValue) => wholeResult(v, caps),
    page: (v: GrepResultValue) => renderGrep(v, caps),
  }
  // A page the model asked for is shown as it is: nothing saved, the footer names the next offset.
  if (window !== undefined) return { text: view.whole(value) ?? view.page(value).text, value }
  // Awaited here: the saved rows are read from the temporary file while the store writes them, before disposal.
  return await deliver(services, exec, value, {
    ...view,
    saved: (v) => {
      if (unsaved !== undefined) return { unsaved }
      const failure = gathered.failure
      if (failure !== undefined) return { unsaved: UNSAVED.failed(quoteArg(failure)) }
      return { parts: () => gathered.saved(v) }
    },
  })
}

/** How many entries (matches, files) a page can hold from the window's offset: the cap, or head_limit within it. */
function pageEntries(cap: number, window: GrepWindow | undefined): number {
  return Math.min(cap, window?.limit ?? cap)
}

/** The lines asked around each match, or undefined when none were. */
function around(args: GrepArgs): Around | undefined {
  const before = args.before ?? args.context ?? 0
  const after = args.after ?? args.context ?? 0
  return before === 0 && after === 0 ? undefined : { before, after }
}

/**
 * What one run of ripgrep gathered, in the call's output mode: how many entries it found (matching lines, or
 * files), the value of the page, and the complete result to save.
 */
interface Gathered extends Disposable {
  /** Matching lines (content, count) or files (files_with_matches): what judges an exit 2, and an empty result. */
  readonly found: number
  readonly failure: string | undefined
  value(notes: GrepNotes, entries: number): GrepResultValue
  saved(value: GrepResultValue): Iterable<Buffer | string>
}

/** Reads one run of ripgrep's output as it comes. */
interface Reader {
  push(chunk: Buffer): void
  readonly pendingLength: number
  /** The output ended (not stopped): a last record is read, and may be malformed. */
  end(): void
}

/** What the runs of a call (one, or the runs of an ignore-file retry) are read into. */
interface Gatherer {
  /** A reader for one more run of ripgrep. */
  reader(): Reader
  /** Bytes the saved result would hold so far. */
  readonly savedBytes: number
  readonly gathered: Gathered
}

interface Found {
  readonly gathered: Gathered
  readonly outcome: ReturnType<typeof judgeExit>
}

interface Search {
  readonly root: SearchRoot
  /** The verified root: ripgrep searches `opened.searched` from `opened.cwd`, with the hidden paths excluded. */
  readonly opened: OpenedRoot
  readonly include: string | undefined
  readonly deadlineMs: number
  readonly keepRows: boolean
  readonly mode: OutputMode
  readonly around: Around | undefined
  readonly window: GrepWindow | undefined
  readonly multiline: boolean
}

/** The gatherer of the content mode: rg's JSON records, the page kept in path order, every row saved. */
function contentGatherer(config: SearchServices['config'], search: Search): Gatherer {
  // Saved rows go to disk a chunk at a time: what is held is a chunk, the first page, and a path and a few numbers
  // per matching file.
  const results = new GrepResults(
    pageEntries(config.grepMaxMatches, search.window),
    search.keepRows ? Math.min(CHUNK_BYTES, config.rawOutputMaxBytes) : undefined,
    {
      ...(search.around === undefined ? {} : { around: search.around }),
      ...(search.window === undefined ? {} : { window: search.window }),
    },
  )
  const { filter } = search.opened
  return {
    reader: () => {
      // Without confinement, the rows of a file whose real path the policy refuses are never kept.
      const sink = filter ? filter.sink(results) : results
      const collector = new GrepCollector(search.opened.searched, config.grepMaxLineBytes, sink, search.multiline)
      const splitter = new RecordSplitter(0x0a, collector.record)
      return {
        push: (chunk) => splitter.push(chunk),
        get pendingLength() {
          return splitter.pendingLength
        },
        end: () => endRecords('grep', splitter),
      }
    },
    get savedBytes() {
      return results.savedBytes
    },
    gathered: {
      get found() {
        return results.total
      },
      get failure() {
        return results.failure
      },
      value: (notes) => ({
        ...notes,
        ...(search.around === undefined ? {} : { around: search.around }),
        files: results.files(),
        total: results.total,
      }),
      saved: (value) => results.saved(savedHeader(value as GrepValue)),
      [Symbol.dispose]: () => results[Symbol.dispose](),
    },
  }
}

/** The gatherer of files_with_matches: rg's NUL-ended paths, each stat'ed, newest first. */
function filesGatherer(search: Search): Gatherer {
  const listing = new PathListing(search.opened, search.root, { rootItself: true })
  const display = Buffer.byteLength(search.root.display) + 2
  let order: Uint32Array | undefined
  const newestFirst = (): Uint32Array => {
    order ??= listing.newestFirst()
    return order
  }
  return {
    reader: () => {
      const splitter = listing.newSplitter()
      return {
        push: (chunk) => listing.push(chunk, splitter),
        get pendingLength() {
          return splitter.pendingLength
        },
        end: () => endRecords('grep', splitter),
      }
    },
    get savedBytes() {
      return search.keepRows ? listing.bytes + listing.length * display : 0
    },
    gathered: {
      get found() {
        return listing.length
      },
      failure: undefined,
      value: (notes, entries) => {
        const from = notes.window?.offset ?? 0
        return {
          ...notes,
          mode: 'files_with_matches',
          paths: Array.from(newestFirst().subarray(from, from + entries), (index) => listing.shown(index)),
          total: listing.length,
        }
      },
      saved: (value) =>
        inParts(savedFilesHeader(value as GrepFilesValue), newestFirst(), (index) =>
          savedFileRow(listing.shown(index)),
        ),
      [Symbol.dispose]: () => {},
    },
  }
}

/** The gatherer of count: rg's `<path>NUL<count>` lines, in path order. */
function countGatherer(search: Search): Gatherer {
  const list = new CountList(search.opened, search.root)
  const display = Buffer.byteLength(search.root.display) + 12
  let order: Uint32Array | undefined
  const inPathOrder = (): Uint32Array => {
    order ??= list.inPathOrder()
    return order
  }
  return {
    reader: () => ({
      push: (chunk) => list.push(chunk),
      get pendingLength() {
        return list.pendingLength
      },
      end: () => {
        try {
          list.end()
        } catch (error) {
          throw new SearchError(malformedMessage('grep', (error as Error).message), {
            code: SearchErrorCode.SEARCH_FAILED,
            cause: error,
          })
        }
      },
    }),
    get savedBytes() {
      return search.keepRows ? list.bytes + list.length * display : 0
    },
    gathered: {
      get found() {
        return list.matches
      },
      failure: undefined,
      value: (notes, entries) => {
        const from = notes.window?.offset ?? 0
        return {
          ...notes,
          mode: 'count',
          counts: Array.from(inPathOrder().subarray(from, from + entries), (index) => list.entry(index)),
          total: list.length,
          matches: list.matches,
        }
      },
      saved: (value) =>
        inParts(savedCountHeader(value as GrepCountValue), inPathOrder(), (index) => savedCountRow(list.entry(index))),
      [Symbol.dispose]: () => {},
    },
  }
}

/** A saved list in parts of about 64 KiB: the header line, then a row per entry in `order`. */
function* inParts(header: string, order: Uint32Array, row: (index: number) => string): Generator<string> {
  let part = `${header}\n`
  for (const index of order) {
    part += row(index)
    if (part.length >= 1 << 16) {
      yield part
      part = ''
    }
  }
  if (part !== '') yield part
}

function gatherer(config: SearchServices['config'], search: Search): Gatherer {
  if (search.mode === 'files_with_matches') return filesGatherer(search)
  if (search.mode === 'count') return countGatherer(search)
  return contentGatherer(config, search)
}

/** The runs of a retry (ignore-trap.ts) into one Gathered; the outcome of the last that had something to say. */
async function searchRuns(
  services: SearchServices,
  args: GrepArgs,
  exec: ToolExecution,
  search: Search,
  runs: readonly RetryRun[],
): Promise<Found> {
  const gather = gatherer(services.config, search)
  let outcome: Found['outcome'] = {}
  try {
    for (const run of runs) {
      const found = await searchOnce(services, args, exec, search, false, { ...run, into: gather })
      if (found.outcome.warning !== undefined || found.outcome.stopped) outcome = found.outcome
    }
  } catch (error) {
    gather.gathered[Symbol.dispose]()
    throw error
  }
  return { gathered: gather.gathered, outcome }
}

/** One run of ripgrep, its output read into a Gathered (which the caller disposes, unless it passed `into`). */
async function searchOnce(
  services: SearchServices,
  args: GrepArgs,
  exec: ToolExecution,
  search: Search,
  noIgnoreDot: boolean,
  retry?: RetryRun & { readonly into: Gatherer },
): Promise<Found> {
  const { config } = services
  const { root, opened, include, deadlineMs } = search
  const gather = retry?.into ?? gatherer(config, search)
  try {
    const reader = gather.reader()
    const binary = await services.locator.path('grep', exec)
    const run = await runRipgrep(services.subprocess, {
      tool: 'grep',
      binary,
      args: grepArgv(args.pattern, retry?.path ?? opened.searched.absolute, include, {
        noIgnoreDot,
        exclude: [...opened.exclude, ...(retry?.flags ?? [])],
        mode: search.mode,
        ...flags(args),
        ...(search.around === undefined ? {} : search.around),
        // A page from an offset needs the matches in their final order as they come: ripgrep sorts (one thread).
        sorted: search.mode === 'content' && (search.window?.offset ?? 0) > 0,
      }),
      ...runIn(opened, exec, config, deadlineMs),
      onOutput: (chunk) => {
        reader.push(chunk)
        if (reader.pendingLength > config.rawOutputMaxBytes)
          throw new SearchError(recordOverflowMessage('grep', config.rawOutputMaxBytes), {
            code: SearchErrorCode.SEARCH_RAW_OUTPUT_OVERFLOW,
          })
        if (gather.savedBytes > config.savedResultMaxBytes)
          throw new SearchError(savedOverflowMessage('grep', config.savedResultMaxBytes, gather.gathered.found), {
            code: SearchErrorCode.SEARCH_RAW_OUTPUT_OVERFLOW,
          })
      },
    })
    if (!run.stoppedAtDeadline) reader.end()
    if (args.type !== undefined && run.exit.exitCode === 2 && UNKNOWN_TYPE.test(run.stderr))
      throw invalidArgs(unknownTypeMessage(args.type, await typeNames(services, exec, binary, opened)))
    const outcome = judgeExit('grep', { ...run, stderr: opened.stderr(run.stderr) }, gather.gathered.found, {
      pattern: args.pattern,
      ...(opened.directory ? { walked: root.absolute } : {}),
    })
    return { gathered: gather.gathered, outcome }
  } catch (error) {
    if (retry === undefined) gather.gathered[Symbol.dispose]()
    throw error
  }
}

/** The model's options that reach ripgrep as flags in every run of the call. */
function flags(args: GrepArgs): Pick<GrepFlags, 'caseInsensitive' | 'multiline' | 'type'> {
  return {
    ...(args.case_insensitive === true ? { caseInsensitive: true } : {}),
    ...(args.multiline === true ? { multiline: true } : {}),
    ...(args.type === undefined ? {} : { type: args.type }),
  }
}

// How ripgrep words a --type it does not know.
const UNKNOWN_TYPE = /^rg: unrecognized file type: /m

/** ripgrep's file type names (`rg --type-list`), asked only after it refused one; none when that fails. */
async function typeNames(
  services: SearchServices,
  exec: ToolExecution,
  binary: string,
  opened: OpenedRoot,
): Promise<string[]> {
  const { config } = services
  let out = ''
  try {
    await runRipgrep(services.subprocess, {
      tool: 'grep',
      binary,
      args: ['--no-config', '--type-list'],
      cwd: opened.cwd,
      confine: opened.confine,
      signal: exec.signal,
      graceMs: config.graceMs,
      stderrMaxBytes: config.stderrMaxBytes,
      deadlineMs: 5000,
      onOutput: (chunk) => {
        if (out.length < 1 << 20) out += chunk.toString('utf8')
      },
    })
  } catch (error) {
    if ((error as SearchError)?.code === SearchErrorCode.SEARCH_ABORTED) throw error
    return []
  }
  return out
    .split('\n')
    .map((line) => line.slice(0, line.indexOf(':')))
    .filter((name) => name !== '')
}

/**
 * Whether the pattern's text, searched literally (`--fixed-strings`, quietly: rg stops at the first match), is in
 * the files searched: only then does the no-match hint about metacharacters help. Bounded by what is left of the
 * call's time and by the same memory watch; any failure means no hint.
 */
async function matchesLiterally(
  services: SearchServices,
  args: GrepArgs,
  exec: ToolExecution,
  search: Search,
  leftMs: number,
): Promise<boolean | undefined> {
  if (leftMs < 1) return undefined
  const { config } = services
  try {
    const run = await runRipgrep(services.subprocess, {
      tool: 'grep',
      binary: await services.locator.path('grep', exec),
      args: literalArgv(
        args.pattern,
        search.opened.searched.absolute,
        search.include,
        search.opened.exclude,
        flags(args),
      ),
      ...runIn(search.opened, exec, config, leftMs),
      onOutput: () => {},
    })
    return !run.stoppedAtDeadline && run.exit.exitCode === 0 ? true : run.exit.exitCode === 1 ? false : undefined
  } catch (error) {
    if ((error as SearchError)?.code === SearchErrorCode.SEARCH_ABORTED) throw error
    return undefined
  }
}

function checkArgs(args: GrepArgs): void {
  if (args.pattern.includes('\n') && args.multiline !== true) {
    throw new SearchError(
      'invalid grep pattern: it contains a line break, but grep matches one line at a time; search for a single line of the text, or pass multiline: true',
      { code: SearchErrorCode.SEARCH_INVALID_PATTERN },
    )
  }
  if (args.pattern.includes('\0')) {
    throw new SearchError('invalid grep pattern: it contains a NUL byte; write \\x00 to match one', {
      code: SearchErrorCode.SEARCH_INVALID_PATTERN,
    })
  }
  const pattern = argRoom('--regexp=', args.pattern)
  if (pattern.bytes > pattern.room) {
    throw new SearchError(
      `invalid grep pattern: it is ${pattern.bytes} bytes long, but ripgrep takes at most ${pattern.room} bytes of pattern (one program argument); search for a shorter, distinctive part of it`,
      { code: SearchErrorCode.SEARCH_INVALID_PATTERN },
    )
  }
  if (args.path?.includes('\0')) throw invalidArgs(nulInPathMessage('grep'))
  if (args.type !== undefined && !/^[\w.+-]+$/.test(args.type))
    throw invalidArgs(unknownTypeMessage(args.type, ['ts', 'js', 'py', 'rust', 'go', 'java', 'c', 'cpp', 'md']))
  if (args.include !== undefined) {
    if (args.include.includes('\0')) throw invalidArgs('include must not contain a NUL byte')
    const include = argRoom('--glob=', args.include)
    if (include.bytes > include.room) {
      throw invalidArgs(
        `include is ${include.bytes} bytes long, but ripgrep takes at most ${include.room} bytes of glob (one program argument): use a shorter glob`,
      )
    }
    const problem = includeProblem(args.include)
    if (problem) {
      throw invalidArgs(
        `include must be ONE positive glob, not ${problem} ("${quoteArg(args.include)}"): use braces for alternatives, e.g. "*.{ts,tsx}"; to leave files out, choose a narrower path or pattern`,
      )
    }
  }
}

function usableInclude(include: string, base: string): string {
  const normal = normalizeInclude(include, base)
  if ('problem' in normal) throw invalidArgs(`include "${quoteArg(include)}" is ${normal.problem}`)
  return normal.include
}
