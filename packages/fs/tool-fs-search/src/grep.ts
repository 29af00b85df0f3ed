import { dirname } from 'node:path'
import type { ToolExecution, ToolOutput } from '@deepseek-ai/dsh-tools'
import { invalidArgs } from '@deepseek-ai/dsh-tools'
import { grepArgv, includeProblem } from './argv.ts'
import { nulInPathMessage } from './common-text.ts'
import { SearchError, SearchErrorCode } from './errors.ts'
import { type GrepArgs, type GrepValue, renderGrep } from './grep-text.ts'
import { resolveRoot } from './paths.ts'
import { GrepCollector, RecordSplitter } from './records.ts'
import { endRecords, judgeExit, runRipgrep } from './ripgrep.ts'
import { confineRoot, isDirectory, keepComplete, type SearchDeps, sessionCwd } from './search.ts'

/** `grep`: every line matching `pattern` below `path`, grouped by file in path order, lines ascending. */
export async function grep(deps: SearchDeps, args: GrepArgs, exec: ToolExecution): Promise<ToolOutput<GrepValue>> {
  const { config } = deps
  checkArgs(args)
  const root = resolveRoot(sessionCwd(exec), args.path)
  await confineRoot(deps, 'grep', root, exec)
  const directory = await isDirectory('grep', root)

  const collector = new GrepCollector(root, config.grepMaxLineBytes)
  const splitter = new RecordSplitter(0x0a, collector.record)
  const run = await runRipgrep(deps.ctx.subprocess, {
    tool: 'grep',
    binary: await deps.locator.path('grep'),
    args: grepArgv(args.pattern, root.absolute, args.include),
    // ripgrep matches an include glob that contains "/" relative to its working directory: the root.
    cwd: directory ? root.absolute : dirname(root.absolute),
    signal: exec.signal,
    graceMs: config.graceMs,
    stderrMaxBytes: config.stderrMaxBytes,
    rawOutputMaxBytes: config.rawOutputMaxBytes,
    onOutput: (chunk) => splitter.push(chunk),
  })
  endRecords('grep', splitter)
  const { warning } = judgeExit('grep', run, collector.total)

  const files = collector.files()
  const value: GrepValue = warning === undefined ? { files, total: collector.total } : { files, total: collector.total, warning }
  const caps = { maxMatches: config.grepMaxMatches }
  if (value.total <= caps.maxMatches) return { text: renderGrep(value, caps), value }
  const spill = await keepComplete(deps, exec, 'grep-results.txt', () => renderGrep(value, { maxMatches: Infinity }))
  const capped = { ...value, spill }
  return { text: renderGrep(capped, caps), value: capped }
}

function checkArgs(args: GrepArgs): void {
  if (args.pattern.includes('\n')) {
    throw new SearchError('invalid grep pattern: it contains a line break, but grep matches one line at a time; search for a single line of the text', { code: SearchErrorCode.SEARCH_INVALID_PATTERN })
  }
  if (args.pattern.includes('\0')) {
    throw new SearchError('invalid grep pattern: it contains a NUL byte; write \\x00 to match one', { code: SearchErrorCode.SEARCH_INVALID_PATTERN })
  }
  if (args.path?.includes('\0')) throw invalidArgs(nulInPathMessage('grep'))
  if (args.include !== undefined) {
    if (args.include.includes('\0')) throw invalidArgs('include must not contain a NUL byte')
    const problem = includeProblem(args.include)
    if (problem) {
      throw invalidArgs(`include must be ONE positive glob, not ${problem} (${JSON.stringify(args.include)}): use braces for alternatives, e.g. "*.{ts,tsx}"; to leave files out, choose a narrower path or pattern`)
    }
  }
}
