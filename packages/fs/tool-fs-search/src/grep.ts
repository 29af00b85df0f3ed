import { dirname } from 'node:path'
import type { ToolExecution, ToolOutput } from '@deepseek-ai/dsh-tools'
import { invalidArgs } from '@deepseek-ai/dsh-tools'
import { argRoom, grepArgv, includeProblem, normalizeInclude } from './argv.ts'
import { grepOverflowMessage, nulInPathMessage, quoteArg, recordOverflowMessage } from './common-text.ts'
import { SearchError, SearchErrorCode } from './errors.ts'
import { type GrepArgs, type GrepValue, pageGrep, savedGrep, wholeGrep } from './grep-text.ts'
import { resolveRoot } from './paths.ts'
import { GrepCollector, RecordSplitter } from './records.ts'
import { endRecords, judgeExit, runRipgrep, searchDeadline } from './ripgrep.ts'
import { deliver, openRoot, type SearchServices, sessionCwd } from './search.ts'

/** `grep`: every line matching `pattern` below `path`, grouped by file in path order, lines ascending. */
export async function grep(services: SearchServices, args: GrepArgs, exec: ToolExecution): Promise<ToolOutput<GrepValue>> {
  const { config } = services
  checkArgs(args)
  const root = resolveRoot(sessionCwd(exec), args.path)
  const binary = await services.locator.path('grep')
  // Opened and checked (DESIGN §17); ripgrep searches what was opened, and the descriptor is closed once it ends.
  const opened = await openRoot(services, 'grep', root, exec)
  const { directory } = opened
  // ripgrep matches an include glob that contains "/" relative to its working directory: the root, or its directory.
  const base = directory ? root.absolute : dirname(root.absolute)
  let include: string | undefined
  try {
    include = args.include === undefined ? undefined : usableInclude(args.include, base)
  } catch (error) {
    await opened.close()
    throw error
  }

  // What is held is the formatted matches (previews cut to grepMaxLineBytes), never the raw JSON: a broad search
  // passes any amount of raw output through, and stops only when what it keeps passes the bound.
  const bound = config.rawOutputMaxBytes
  const collector = new GrepCollector(opened.searched, config.grepMaxLineBytes)
  const splitter = new RecordSplitter(0x0a, collector.record)
  // Within the budget the call really has: a timeout policy may give a shorter one than the tool's own.
  const deadlineMs = searchDeadline(exec.budgetMs ?? config.timeoutMs)
  const run = await runRipgrep(services.subprocess, {
    tool: 'grep',
    binary,
    args: grepArgv(args.pattern, opened.searched.absolute, include, opened.exclude),
    cwd: opened.cwd,
    signal: exec.signal,
    graceMs: config.graceMs,
    stderrMaxBytes: config.stderrMaxBytes,
    deadlineMs,
    memoryLimitBytes: config.rgMaxMemoryBytes > 0 ? config.rgMaxMemoryBytes : undefined,
    onOutput: (chunk) => {
      splitter.push(chunk)
      if (collector.heldBytes > bound) throw new SearchError(grepOverflowMessage(bound, collector.total), { code: SearchErrorCode.SEARCH_RAW_OUTPUT_OVERFLOW })
      if (splitter.pendingLength > bound) throw new SearchError(recordOverflowMessage('grep', bound), { code: SearchErrorCode.SEARCH_RAW_OUTPUT_OVERFLOW })
    },
  }).finally(() => opened.close())
  if (!run.stoppedAtDeadline) endRecords('grep', splitter)
  const outcome = judgeExit('grep', { ...run, stderr: opened.stderr(run.stderr) }, collector.total, { pattern: args.pattern, ...(directory ? { walked: root.absolute } : {}) })

  const value: GrepValue = {
    query: { pattern: args.pattern, path: root.display, ...(args.include === undefined ? {} : { include: args.include }) },
    files: collector.files(),
    total: collector.total,
    ...(outcome.warning === undefined ? {} : { warning: outcome.warning }),
    ...(outcome.stopped ? { stoppedAfterMs: deadlineMs } : {}),
  }
  const caps = { maxMatches: config.grepMaxMatches, maxBytes: config.maxResultBytes }
  return deliver(services, exec, value, { fileName: 'grep-results.txt', whole: (v) => wholeGrep(v, caps), page: (v) => pageGrep(v, caps), saved: savedGrep })
}

function checkArgs(args: GrepArgs): void {
  if (args.pattern.includes('\n')) {
    throw new SearchError('invalid grep pattern: it contains a line break, but grep matches one line at a time; search for a single line of the text', { code: SearchErrorCode.SEARCH_INVALID_PATTERN })
  }
  if (args.pattern.includes('\0')) {
    throw new SearchError('invalid grep pattern: it contains a NUL byte; write \\x00 to match one', { code: SearchErrorCode.SEARCH_INVALID_PATTERN })
  }
  const pattern = argRoom('--regexp=', args.pattern)
  if (pattern.bytes > pattern.room) {
    throw new SearchError(`invalid grep pattern: it is ${pattern.bytes} bytes long, but ripgrep takes at most ${pattern.room} bytes of pattern (one program argument); search for a shorter, distinctive part of it`, { code: SearchErrorCode.SEARCH_INVALID_PATTERN })
  }
  if (args.path?.includes('\0')) throw invalidArgs(nulInPathMessage('grep'))
  if (args.include !== undefined) {
    if (args.include.includes('\0')) throw invalidArgs('include must not contain a NUL byte')
    const include = argRoom('--glob=', args.include)
    if (include.bytes > include.room) {
      throw invalidArgs(`include is ${include.bytes} bytes long, but ripgrep takes at most ${include.room} bytes of glob (one program argument): use a shorter glob`)
    }
    const problem = includeProblem(args.include)
    if (problem) {
      throw invalidArgs(`include must be ONE positive glob, not ${problem} ("${quoteArg(args.include)}"): use braces for alternatives, e.g. "*.{ts,tsx}"; to leave files out, choose a narrower path or pattern`)
    }
  }
}

function usableInclude(include: string, base: string): string {
  const normal = normalizeInclude(include, base)
  if ('problem' in normal) throw invalidArgs(`include "${quoteArg(include)}" is ${normal.problem}`)
  return normal.include
}
