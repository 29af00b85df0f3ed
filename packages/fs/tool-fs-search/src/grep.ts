import { dirname } from 'node:path'
import type { ToolExecution, ToolOutput } from '@deepseek-ai/dsh-tools'
import { invalidArgs } from '@deepseek-ai/dsh-tools'
import { argRoom, grepArgv, includeProblem, literalArgv, normalizeInclude } from './argv.ts'
import { nulInPathMessage, quoteArg, recordOverflowMessage, savedOverflowMessage, UNSAVED } from './common-text.ts'
import { SearchError, SearchErrorCode } from './errors.ts'
import { GrepResults } from './grep-results.ts'
import { type GrepArgs, literalHint, pageGrep, savedHeader, wholeGrep } from './grep-text.ts'
import { hostileIgnoreFiles, ignoreFileMessage } from './ignore-trap.ts'
import { displayPath, resolveRoot, type SearchRoot } from './paths.ts'
import { GrepCollector, RecordSplitter } from './records.ts'
import { endRecords, judgeExit, RipgrepOutOfMemory, runRipgrep, searchDeadline } from './ripgrep.ts'
import { cannotSave, deliver, openRoot, type OpenedRoot, type SearchServices, sessionCwd } from './search.ts'
import type { GrepValue } from './values.ts'

/** Saved rows gathered in memory before they go to the temporary file, at most (UTF-8 bytes). */
const CHUNK_BYTES = 4 * 1024 * 1024

/** `grep`: every line matching `pattern` below `path`, grouped by file in path order, lines ascending. */
export async function grep(
  services: SearchServices,
  args: GrepArgs,
  exec: ToolExecution,
): Promise<ToolOutput<GrepValue>> {
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
): Promise<ToolOutput<GrepValue>> {
  const { config } = services
  const { directory } = opened
  // ripgrep matches an include glob that contains "/" relative to its working directory: the root, or its directory.
  const base = directory ? root.absolute : dirname(root.absolute)
  const include = args.include === undefined ? undefined : usableInclude(args.include, base)
  const started = Date.now()
  // Within the budget the call really has: a timeout policy may give a shorter one than the tool's own.
  const deadlineMs = searchDeadline(exec.budgetMs ?? config.timeoutMs)
  // Rows are kept for the saved result only when it can be saved (a store and a session), decided once per call.
  const unsaved = cannotSave(services, exec)
  const search: Search = { root, opened, include, deadlineMs, keepRows: unsaved === undefined }

  let found: Found
  let skipped: string[] | undefined
  try {
    found = await searchOnce(services, args, exec, search, false)
  } catch (error) {
    // ripgrep ran out of memory: an ignore file it cannot use is the likely cause. A .gitignore is named in the
    // error; when only .ignore / .rgignore files are to blame, they are skipped (--no-ignore-dot) and named in a note.
    if (!(error instanceof RipgrepOutOfMemory) || !directory) throw error
    const hostile = await hostileIgnoreFiles(root.absolute)
    const first = hostile[0]
    if (first === undefined) throw error
    if (!first.skippable)
      throw new SearchError(ignoreFileMessage(first, sessionCwd(exec)), {
        code: SearchErrorCode.SEARCH_FAILED,
        cause: error,
      })
    skipped = hostile.map((file) => `${displayPath(sessionCwd(exec), file.path) || '.'} (${file.why})`)
    found = await searchOnce(
      services,
      args,
      exec,
      { ...search, deadlineMs: Math.max(1, deadlineMs - (Date.now() - started)) },
      true,
    )
  }
  using results = found.results
  const { outcome } = found

  let literalMatches: boolean | undefined
  if (results.total === 0 && literalHint(args.pattern) !== undefined) {
    literalMatches = await matchesLiterally(services, args, exec, search, deadlineMs - (Date.now() - started))
  }
  const value: GrepValue = {
    query: {
      pattern: args.pattern,
      path: root.display,
      ...(args.include === undefined ? {} : { include: args.include }),
    },
    files: results.files(),
    total: results.total,
    ...(literalMatches === undefined ? {} : { literalMatches }),
    ...(skipped === undefined ? {} : { skippedIgnoreFiles: skipped }),
    ...(outcome.warning === undefined ? {} : { warning: outcome.warning }),
    ...(outcome.stopped ? { stoppedAfterMs: deadlineMs } : {}),
  }
  const caps = { maxMatches: config.grepMaxMatches, maxBytes: config.maxResultBytes }
  // Awaited here: the saved rows are read from the temporary file while the store writes them, before disposal.
  return await deliver(services, exec, value, {
    fileName: 'grep-results.txt',
    whole: (v) => wholeGrep(v, caps),
    page: (v) => pageGrep(v, caps),
    saved: (v) => {
      if (unsaved !== undefined) return { unsaved }
      const failure = results.failure
      if (failure !== undefined) return { unsaved: UNSAVED.failed(quoteArg(failure)) }
      return { parts: () => results.saved(savedHeader(v)) }
    },
  })
}

interface Found {
  readonly results: GrepResults
  readonly outcome: ReturnType<typeof judgeExit>
}

interface Search {
  readonly root: SearchRoot
  /** The verified root: ripgrep searches `opened.searched` from `opened.cwd`, with the hidden paths excluded. */
  readonly opened: OpenedRoot
  readonly include: string | undefined
  readonly deadlineMs: number
  readonly keepRows: boolean
}

/** One run of ripgrep, its records read into a GrepResults (which the caller disposes). */
async function searchOnce(
  services: SearchServices,
  args: GrepArgs,
  exec: ToolExecution,
  search: Search,
  noIgnoreDot: boolean,
): Promise<Found> {
  const { config } = services
  const { root, opened, include, deadlineMs } = search
  // Saved rows go to disk a chunk at a time: what is held is a chunk, the first page, and a path and a few numbers
  // per matching file.
  const results = new GrepResults(
    config.grepMaxMatches,
    search.keepRows ? Math.min(CHUNK_BYTES, config.rawOutputMaxBytes) : undefined,
  )
  try {
    const collector = new GrepCollector(opened.searched, config.grepMaxLineBytes, results)
    const splitter = new RecordSplitter(0x0a, collector.record)
    const run = await runRipgrep(services.subprocess, {
      tool: 'grep',
      binary: await services.locator.path('grep'),
      args: grepArgv(args.pattern, opened.searched.absolute, include, { noIgnoreDot, exclude: opened.exclude }),
      cwd: opened.cwd,
      signal: exec.signal,
      graceMs: config.graceMs,
      stderrMaxBytes: config.stderrMaxBytes,
      deadlineMs,
      memoryLimitBytes: config.rgMaxMemoryBytes > 0 ? config.rgMaxMemoryBytes : undefined,
      onOutput: (chunk) => {
        splitter.push(chunk)
        if (splitter.pendingLength > config.rawOutputMaxBytes)
          throw new SearchError(recordOverflowMessage('grep', config.rawOutputMaxBytes), {
            code: SearchErrorCode.SEARCH_RAW_OUTPUT_OVERFLOW,
          })
        if (results.savedBytes > config.savedResultMaxBytes)
          throw new SearchError(savedOverflowMessage('grep', config.savedResultMaxBytes, results.total), {
            code: SearchErrorCode.SEARCH_RAW_OUTPUT_OVERFLOW,
          })
      },
    })
    if (!run.stoppedAtDeadline) endRecords('grep', splitter)
    const outcome = judgeExit('grep', { ...run, stderr: opened.stderr(run.stderr) }, results.total, {
      pattern: args.pattern,
      ...(opened.directory ? { walked: root.absolute } : {}),
    })
    return { results, outcome }
  } catch (error) {
    results[Symbol.dispose]()
    throw error
  }
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
      binary: await services.locator.path('grep'),
      args: literalArgv(args.pattern, search.opened.searched.absolute, search.include, search.opened.exclude),
      cwd: search.opened.cwd,
      signal: exec.signal,
      graceMs: config.graceMs,
      stderrMaxBytes: config.stderrMaxBytes,
      deadlineMs: leftMs,
      memoryLimitBytes: config.rgMaxMemoryBytes > 0 ? config.rgMaxMemoryBytes : undefined,
      onOutput: () => {},
    })
    return !run.stoppedAtDeadline && run.exit.exitCode === 0 ? true : run.exit.exitCode === 1 ? false : undefined
  } catch (error) {
    if ((error as SearchError)?.code === SearchErrorCode.SEARCH_ABORTED) throw error
    return undefined
  }
}

function checkArgs(args: GrepArgs): void {
  if (args.pattern.includes('\n')) {
    throw new SearchError(
      'invalid grep pattern: it contains a line break, but grep matches one line at a time; search for a single line of the text',
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
