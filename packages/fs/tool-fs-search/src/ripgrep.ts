import { createRequire } from 'node:module'
import type { Readable } from 'node:stream'
import { pathToFileURL } from 'node:url'
import type { ExitStatus, SubprocessService } from '@deepseek-ai/dsh-subprocess'
import { SubprocessErrorCode } from '@deepseek-ai/dsh-subprocess'
import { SearchError, SearchErrorCode } from './errors.ts'
import { MalformedOutput, type RecordSplitter } from './records.ts'
import { type ToolName, abortedMessage, exitMessage, invalidPatternMessage, killedMessage, launchFailedMessage, malformedMessage, overflowMessage } from './common-text.ts'



/** Loads `@vscode/ripgrep` (whose module throws at import time when its platform package is missing). */
export type RipgrepLoader = (attempt: number) => Promise<{ rgPath?: unknown }>

const importRipgrep: RipgrepLoader = async (attempt) => {
  if (attempt === 0) return import('@vscode/ripgrep')
  // A module whose evaluation threw stays failed in the ESM cache: a fresh URL evaluates it once more, so a
  // platform package installed since the last call is found.
  const url = pathToFileURL(createRequire(import.meta.url).resolve('@vscode/ripgrep'))
  url.searchParams.set('attempt', String(attempt))
  return import(url.href) as Promise<{ rgPath?: unknown }>
}

/**
 * The ripgrep binary: the config's `rgPath`, else the packaged one, resolved on the first call (never at load,
 * so a broken optional platform package cannot fail the plugin). Success is cached; a failure is retried on the
 * next call.
 */
export class RipgrepLocator {
  private found: string | undefined
  private attempts = 0

  constructor(private readonly override: string | undefined, private readonly load: RipgrepLoader = importRipgrep) {}

  async path(tool: ToolName): Promise<string> {
    if (this.override !== undefined) return this.override
    if (this.found !== undefined) return this.found
    try {
      const module = await this.load(this.attempts++)
      if (typeof module.rgPath !== 'string' || module.rgPath === '') throw new Error('it exports no rgPath')
      this.found = module.rgPath
      return this.found
    } catch (error) {
      throw new SearchError(launchFailedMessage(tool, '@vscode/ripgrep', (error as Error)?.message ?? String(error)), { code: SearchErrorCode.SEARCH_FAILED, cause: error })
    }
  }
}

export interface RipgrepRequest {
  readonly tool: ToolName
  readonly binary: string
  readonly args: readonly string[]
  readonly cwd: string
  readonly signal: AbortSignal
  readonly graceMs: number
  readonly stderrMaxBytes: number
  readonly rawOutputMaxBytes: number
  /** Each stdout chunk, in order; may throw MalformedOutput. */
  readonly onOutput: (chunk: Buffer) => void
}

export interface RipgrepRun {
  readonly exit: ExitStatus
  /** The collected tail of stderr. */
  readonly stderr: string
}

/**
 * Runs ripgrep once through `ctx.subprocess` (no shell, stdin /dev/null, stdout streamed, stderr collected)
 * and always waits for it to end. Throws SEARCH_ABORTED when the signal aborted, SEARCH_RAW_OUTPUT_OVERFLOW as
 * soon as the raw output passed the cap (ripgrep is stopped right then), SEARCH_FAILED when it could not start
 * or printed something unreadable. The exit status is the caller's to judge.
 */
export async function runRipgrep(subprocess: SubprocessService, request: RipgrepRequest): Promise<RipgrepRun> {
  const { tool, binary, signal } = request
  if (signal.aborted) throw aborted(tool)
  let handle
  try {
    handle = await subprocess.spawn({
      argv: [binary, ...request.args],
      cwd: request.cwd,
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: { maxBytes: request.stderrMaxBytes },
      graceMs: request.graceMs,
      signal,
    })
  } catch (error) {
    if (signal.aborted || (error as { code?: unknown })?.code === SubprocessErrorCode.SUBPROCESS_ABORTED) throw aborted(tool, error)
    throw new SearchError(launchFailedMessage(tool, binary, (error as Error)?.message ?? String(error)), { code: SearchErrorCode.SEARCH_FAILED, cause: error })
  }
  const { overflowed, failure } = handle.stdout
    ? await consume(handle.stdout, request.rawOutputMaxBytes, request.onOutput)
    : { overflowed: false, failure: new Error('the subprocess provider gave no stdout pipe') }
  if (overflowed || failure !== undefined) {
    handle.terminate()
    handle.stdout?.destroy()
  }
  const exit = await handle.done
  if (signal.aborted) throw aborted(tool)
  if (overflowed) throw new SearchError(overflowMessage(tool, request.rawOutputMaxBytes), { code: SearchErrorCode.SEARCH_RAW_OUTPUT_OVERFLOW })
  if (failure instanceof MalformedOutput) throw new SearchError(malformedMessage(tool, failure.message), { code: SearchErrorCode.SEARCH_FAILED, cause: failure })
  if (failure !== undefined) throw new SearchError(malformedMessage(tool, (failure as Error)?.message ?? String(failure)), { code: SearchErrorCode.SEARCH_FAILED, cause: failure })
  return { exit, stderr: handle.collected.stderr?.readFrom(0).text ?? '' }
}

/**
 * Hands every chunk of `stdout` to `onOutput` until the stream ends, the raw bytes pass `maxBytes` (the chunk that
 * crosses is not handed over) or `onOutput` throws. Plain 'data' events: a promise per chunk (async iteration)
 * costs measurably when ripgrep writes thousands of small chunks.
 */
function consume(stdout: Readable, maxBytes: number, onOutput: (chunk: Buffer) => void): Promise<{ overflowed: boolean; failure?: unknown }> {
  return new Promise((resolve) => {
    let bytes = 0
    const finish = (result: { overflowed: boolean; failure?: unknown }): void => {
      stdout.off('data', onData)
      stdout.off('end', onEnd)
      stdout.off('close', onEnd)
      stdout.off('error', onError)
      resolve(result)
    }
    const onData = (chunk: Buffer): void => {
      bytes += chunk.length
      if (bytes > maxBytes) return finish({ overflowed: true })
      try {
        onOutput(chunk)
      } catch (error) {
        finish({ overflowed: false, failure: error })
      }
    }
    const onEnd = (): void => finish({ overflowed: false })
    const onError = (error: unknown): void => finish({ overflowed: false, failure: error })
    stdout.on('data', onData)
    stdout.once('end', onEnd)
    stdout.once('close', onEnd)
    stdout.once('error', onError)
  })
}

// How ripgrep words a pattern it cannot use: a regex it cannot parse or compile, or a glob it cannot parse.
const PATTERN_ERROR = /^rg: (?:.*\bregex\b|error parsing glob)/m

/**
 * Judges ripgrep's exit once its output was read: 0 and 1 (nothing found) succeed; 2 with results is a partial
 * success whose stderr becomes a note; everything else throws.
 */
export function judgeExit(tool: ToolName, run: RipgrepRun, found: number): { warning?: string } {
  const { exitCode, signal } = run.exit
  if (signal !== null) throw new SearchError(killedMessage(tool, signal), { code: SearchErrorCode.SEARCH_FAILED })
  if (exitCode === 0 || exitCode === 1) return {}
  if (exitCode === 2 && found > 0) return { warning: run.stderr }
  if (exitCode === 2 && PATTERN_ERROR.test(run.stderr)) {
    throw new SearchError(invalidPatternMessage(tool, run.stderr), { code: SearchErrorCode.SEARCH_INVALID_PATTERN })
  }
  throw new SearchError(exitMessage(tool, exitCode, run.stderr), { code: SearchErrorCode.SEARCH_FAILED })
}

function aborted(tool: ToolName, cause?: unknown): SearchError {
  return new SearchError(abortedMessage(tool), cause === undefined ? { code: SearchErrorCode.SEARCH_ABORTED } : { code: SearchErrorCode.SEARCH_ABORTED, cause })
}

/** Ends the record stream: a last record without its separator is parsed too, and may be malformed. */
export function endRecords(tool: ToolName, splitter: RecordSplitter): void {
  try {
    splitter.end()
  } catch (error) {
    throw new SearchError(malformedMessage(tool, (error as Error)?.message ?? String(error)), { code: SearchErrorCode.SEARCH_FAILED, cause: error })
  }
}
