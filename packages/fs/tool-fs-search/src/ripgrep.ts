import { closeSync, existsSync, openSync, readSync, realpathSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import { pathToFileURL } from 'node:url'
import type { ConfinedProcess, Confinement } from '@deepseek-ai/dsh-confinement'
import type { ExitStatus, SubprocessService } from '@deepseek-ai/dsh-subprocess'
import { STATUS_BYTES, SubprocessErrorCode, vmRss } from '@deepseek-ai/dsh-subprocess'
import { HarnessError, type ToolExecution, type ToolSession } from '@deepseek-ai/dsh-tools'
import { SearchError, SearchErrorCode } from './errors.ts'
import { MalformedOutput, type RecordSplitter } from './records.ts'
import { completeLength, cutPrefixLength, decodeLossy } from '@deepseek-ai/dsh-text'
import {
  abortedMessage,
  abortedOutOfMemoryMessage,
  exitMessage,
  invalidPatternMessage,
  killedMessage,
  launchFailedMessage,
  malformedMessage,
  outOfMemoryMessage,
} from './common-text.ts'
import type { ToolName } from './values.ts'

/** Loads `@vscode/ripgrep` (whose module throws at import time when its platform package is missing). */
export type RipgrepLoader = (attempt: number) => Promise<{ rgPath?: unknown }>

const importRipgrep: RipgrepLoader = async (attempt) => {
  const packaged = packagedRipgrep(import.meta.url)
  if (packaged !== undefined) return { rgPath: packaged }
  if (attempt === 0) return import('@vscode/ripgrep')
  // A module whose evaluation threw stays failed in the ESM cache: a fresh URL evaluates it once more, so a
  // platform package installed since the last call is found.
  const url = pathToFileURL(createRequire(import.meta.url).resolve('@vscode/ripgrep'))
  url.searchParams.set('attempt', String(attempt))
  return import(url.href) as Promise<{ rgPath?: unknown }>
}

/**
 * The binary @vscode/ripgrep would export to a module at `from`, found as it finds it (`bin/rg` of its platform
 * package `@vscode/ripgrep-<platform>-<npm_config_arch or arch>`, looked up from its own folder) without loading
 * it: in the CommonJS bundle, importing that ES module starts Node's ES module loader, about a tenth of a cold
 * `dsh call`. The folders are walked by hand, in Node's order (`require.resolve.paths`): `require.resolve` of the
 * package reads its `exports` through Node's ES resolver, another 3 ms of a cold start. Undefined when that fails;
 * the package itself is imported then, and its own error reported.
 */
export function packagedRipgrep(from: string): string | undefined {
  const arch = process.env.npm_config_arch || process.arch
  const platformPackage = `@vscode/ripgrep-${process.platform}-${arch}`
  const binary = process.platform === 'win32' ? 'rg.exe' : 'rg'
  try {
    for (const modules of createRequire(from).resolve.paths('@vscode/ripgrep') ?? []) {
      const folder = join(modules, '@vscode', 'ripgrep')
      if (!existsSync(join(folder, 'package.json'))) continue
      // Node resolves from a module's real path, so the package's own lookup starts at its real folder.
      const own = createRequire(join(realpathSync.native(folder), 'lib', 'index.js'))
      for (const candidates of own.resolve.paths(platformPackage) ?? []) {
        const path = join(candidates, platformPackage, 'bin', binary)
        if (existsSync(path)) return realpathSync.native(path)
      }
      return undefined
    }
  } catch {
    // An unreadable folder on the way: the package's own import decides.
  }
  return undefined
}

/**
 * The ripgrep binary: the config's `rgPath`, else the packaged one, resolved on the first call (never at load,
 * so a broken optional platform package cannot fail the plugin). Success is cached; a failure is retried on the
 * next call.
 */
export class RipgrepLocator {
  private found: string | undefined
  private attempts = 0

  constructor(
    private readonly override: string | undefined,
    private readonly load: RipgrepLoader = importRipgrep,
  ) {}

  /** `exec`, the calling session, is for a locator that judges the binary per session (trusted-rg.ts). */
  async path(tool: ToolName, _exec?: ToolExecution): Promise<string> {
    if (this.override !== undefined) return this.override
    if (this.found !== undefined) return this.found
    try {
      const module = await this.load(this.attempts++)
      if (typeof module.rgPath !== 'string' || module.rgPath === '') throw new Error('it exports no rgPath')
      this.found = module.rgPath
      return this.found
    } catch (error) {
      throw new SearchError(launchFailedMessage(tool, '@vscode/ripgrep', (error as Error)?.message ?? String(error)), {
        code: SearchErrorCode.SEARCH_FAILED,
        cause: error,
      })
    }
  }
}

/** The session sandbox a search runs in (docs/security.md#boundary): the service, and whose session it is. */
export interface Confine {
  readonly service: Confinement
  readonly session: ToolSession | undefined
}

export interface RipgrepRequest {
  readonly tool: ToolName
  readonly binary: string
  readonly args: readonly string[]
  readonly cwd: string
  /** Run inside this sandbox (`cwd` as ripgrep sees it there); undefined: on the host. */
  readonly confine?: Confine | undefined
  readonly signal: AbortSignal
  readonly graceMs: number
  readonly stderrMaxBytes: number
  /** After this many ms ripgrep is stopped and the run reports `stoppedAtDeadline`: what was read so far stands. */
  readonly deadlineMs: number
  /** Most resident bytes ripgrep may use (see ResidentMemory); undefined watches nothing. */
  readonly memoryLimitBytes?: number | undefined
  /** Each stdout chunk, in order; may throw MalformedOutput, or a SearchError that stops the search. */
  readonly onOutput: (chunk: Buffer) => void
}

export interface RipgrepRun {
  readonly exit: ExitStatus
  /** The head and the tail of stderr (the middle of a long one is left out). */
  readonly stderr: string
  /** Stopped at `deadlineMs`, before it ended by itself. */
  readonly stoppedAtDeadline: boolean
}

/**
 * ripgrep ran out of memory: stopped past `rgMaxMemoryBytes`, or it aborted when an allocation failed. A hostile
 * ignore file is the usual cause, which the tool then looks for (ignore-trap.ts).
 */
export class RipgrepOutOfMemory extends SearchError {
  constructor(message: string) {
    super(message, { code: SearchErrorCode.SEARCH_FAILED })
  }
}

// How a Rust program words a failed allocation before it aborts.
const ALLOCATION_FAILED = /memory allocation of (\d+) bytes failed/

/** How often ripgrep's resident memory is read while it runs. */
export const MEMORY_CHECK_MS = 20

/**
 * Runs ripgrep once through `ctx.subprocess` (no shell, stdin /dev/null, stdout and stderr streamed) and always
 * waits for it to end. Throws SEARCH_ABORTED when the signal aborted, the SearchError that `onOutput` threw (ripgrep
 * is stopped right then), SEARCH_FAILED when it could not start or printed something unreadable. The exit status
 * is the caller's to judge.
 */
export async function runRipgrep(subprocess: SubprocessService, request: RipgrepRequest): Promise<RipgrepRun> {
  const { tool, binary, signal, memoryLimitBytes } = request
  if (signal.aborted) throw aborted(tool)
  let running: ConfinedProcess
  try {
    // Confined, the sandbox starts it; one that cannot be set up rejects with its own coded error.
    running = request.confine
      ? await request.confine.service.start({
          argv: [binary, ...request.args],
          cwd: request.cwd,
          session: request.confine.session,
          access: 'read',
          graceMs: request.graceMs,
          signal,
        })
      : await onHost(subprocess, request)
  } catch (error) {
    if (signal.aborted || (error as { code?: unknown })?.code === SubprocessErrorCode.SUBPROCESS_ABORTED)
      throw aborted(tool, error)
    if (error instanceof HarnessError && !Object.hasOwn(SubprocessErrorCode, error.code)) throw error
    throw new SearchError(launchFailedMessage(tool, binary, (error as Error)?.message ?? String(error)), {
      code: SearchErrorCode.SEARCH_FAILED,
      cause: error,
    })
  }
  const stderr = keepHeadAndTail(running.stderr, request.stderrMaxBytes)
  let stoppedAtDeadline = false
  let overMemory = false
  const deadline = setTimeout(() => {
    stoppedAtDeadline = true
    running.terminate()
  }, request.deadlineMs)
  const watch =
    memoryLimitBytes === undefined
      ? undefined
      : setInterval(() => {
          if (!overMemory && running.residentBytes() > memoryLimitBytes) {
            overMemory = true
            running.terminate()
          }
        }, MEMORY_CHECK_MS)
  let result: { overflowed: boolean; failure?: unknown }
  try {
    result = await consume(running.stdout, request.onOutput)
  } finally {
    clearTimeout(deadline)
    clearInterval(watch)
  }
  const { failure } = result
  if (failure !== undefined) {
    running.terminate()
    running.stdout.destroy()
  }
  const exit = await running.done
  const stderrText = await stderr
  if (signal.aborted) throw aborted(tool)
  const launchFailed = running.failure(stderrText)
  if (launchFailed !== undefined)
    throw new SearchError(launchFailedMessage(tool, binary, launchFailed), { code: SearchErrorCode.SEARCH_FAILED })
  if (overMemory) throw new RipgrepOutOfMemory(outOfMemoryMessage(tool, memoryLimitBytes as number))
  if (failure instanceof SearchError) throw failure
  if (failure instanceof MalformedOutput)
    throw new SearchError(malformedMessage(tool, failure.message), {
      code: SearchErrorCode.SEARCH_FAILED,
      cause: failure,
    })
  if (failure !== undefined)
    throw new SearchError(malformedMessage(tool, (failure as Error)?.message ?? String(failure)), {
      code: SearchErrorCode.SEARCH_FAILED,
      cause: failure,
    })
  return {
    exit,
    stderr: stderrText,
    stoppedAtDeadline: stoppedAtDeadline && exit.exitCode !== 0 && exit.exitCode !== 1,
  }
}

/** ripgrep on the host, through `ctx.subprocess` (no shell, stdin /dev/null), in the shape a confined run has. */
async function onHost(subprocess: SubprocessService, request: RipgrepRequest): Promise<ConfinedProcess> {
  const handle = await subprocess.spawn({
    argv: [request.binary, ...request.args],
    cwd: request.cwd,
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
    graceMs: request.graceMs,
    signal: request.signal,
  })
  const { stdout, stderr } = handle
  if (!stdout || !stderr) {
    handle.terminate()
    throw new Error('the subprocess provider gave no output pipes')
  }
  const memory = new ResidentMemory(handle.pid)
  const done = handle.done.finally(() => memory.close())
  return {
    stdout,
    stderr,
    done,
    terminate: () => handle.terminate(),
    residentBytes: () => memory.bytes(),
    failure: () => undefined,
  }
}

/**
 * The resident memory of a process, from /proc/<pid>/status (0 where there is none, or once it is gone). Read every
 * MEMORY_CHECK_MS instead of an address-space rlimit: Node cannot set one on a child without an extra exec
 * (`prlimit` cost 2.8 ms a call here), and virtual size counts mappings that are not memory
 * (docs/decisions/2026-12-01-ripgrep-memory-and-time-bounds.md). The file is opened once, at the first reading, and
 * read again in place into one small buffer: a `readFileSync` per reading (open, a 64 KiB buffer, close) cost about
 * six times as much CPU (docs/decisions/2026-12-01-search-cpu.md). An open descriptor also keeps naming the same
 * process: once it is gone, reading fails and counts as 0, whoever gets its pid.
 */
class ResidentMemory {
  private fd: number | undefined
  private failed = false
  private readonly buffer = Buffer.allocUnsafe(STATUS_BYTES)

  constructor(private readonly pid: number) {}

  bytes(): number {
    if (this.failed) return 0
    try {
      this.fd ??= openSync(`/proc/${this.pid}/status`, 'r')
      return vmRss(this.buffer, readSync(this.fd, this.buffer, 0, STATUS_BYTES, 0))
    } catch {
      this.failed = true
      this.close()
      return 0
    }
  }

  close(): void {
    if (this.fd === undefined) return
    try {
      closeSync(this.fd)
    } catch {
      // Nothing to do: the descriptor is gone either way.
    }
    this.fd = undefined
  }
}

/**
 * Reads a stderr stream to its end, keeping its first and its last `maxBytes / 2` bytes: ripgrep names the kind of
 * error first (`regex parse error`) and the reason last, with a pattern of any size between them.
 */
function keepHeadAndTail(stream: Readable, maxBytes: number): Promise<string> {
  const half = Math.max(1, Math.floor(maxBytes / 2))
  const head: Buffer[] = []
  let headBytes = 0
  let tail: Buffer[] = []
  let tailBytes = 0
  let total = 0
  stream.on('data', (chunk: Buffer) => {
    total += chunk.length
    if (headBytes < half) {
      const part = chunk.subarray(0, half - headBytes)
      head.push(part)
      headBytes += part.length
      chunk = chunk.subarray(part.length)
    }
    if (chunk.length === 0) return
    tail.push(chunk)
    tailBytes += chunk.length
    while (tailBytes - (tail[0] as Buffer).length >= half) tailBytes -= (tail.shift() as Buffer).length
  })
  return new Promise((resolve) => {
    const finish = (): void => {
      const headText = Buffer.concat(head)
      let tailBuffer = Buffer.concat(tail)
      if (tailBuffer.length > half) tailBuffer = tailBuffer.subarray(tailBuffer.length - half)
      const left = total - headText.length - tailBuffer.length
      const start = cutPrefixLength(tailBuffer)
      resolve(
        decodeLossy(headText, 0, completeLength(headText)) +
          (left > 0 ? `\n[… ${left} bytes of stderr left out …]\n` : '') +
          decodeLossy(tailBuffer, left > 0 ? start : 0),
      )
      tail = []
    }
    stream.once('end', finish)
    stream.once('close', finish)
    stream.once('error', finish)
  })
}

/**
 * Hands every chunk of `stdout` to `onOutput` until the stream ends or `onOutput` throws. Plain 'data' events: a
 * promise per chunk (async iteration) costs measurably when ripgrep writes thousands of small chunks.
 */
function consume(
  stdout: Readable,
  onOutput: (chunk: Buffer) => void,
): Promise<{ overflowed: boolean; failure?: unknown }> {
  return new Promise((resolve) => {
    const finish = (result: { overflowed: boolean; failure?: unknown }): void => {
      stdout.off('data', onData)
      stdout.off('end', onEnd)
      stdout.off('close', onEnd)
      stdout.off('error', onError)
      resolve(result)
    }
    const onData = (chunk: Buffer): void => {
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
const PATTERN_ERROR = /^rg: (?:.*\bregex\b|error parsing glob|error building NFA)/m

// One path ripgrep could not read while it walked: `rg: /w/closed: Permission denied (os error 13)`, or worded as
// `rg: /w/closed: IO error for operation on /w/closed: …`. The path is group 1.
const UNREADABLE_PATH = /^rg: (.+?): .*\(os error \d+\)$/
// The line keepHeadAndTail puts where it left the middle of a long stderr out.
const LEFT_OUT = /^\[… \d+ bytes of stderr left out …\]$/

/**
 * Whether ripgrep's stderr holds only paths it could not read below `root` (a walk that went on past them), none of
 * them the root itself. The lines a long stderr was cut inside, around its left-out marker, are not judged.
 */
export function onlyUnreadableBelow(stderr: string, root: string): boolean {
  const lines = stderr.split('\n').filter((line) => line !== '')
  const cut = lines.findIndex((line) => LEFT_OUT.test(line))
  const judged = cut === -1 ? lines : [...lines.slice(0, Math.max(0, cut - 1)), ...lines.slice(cut + 2)]
  return (
    judged.length > 0 &&
    judged.every((line) => {
      const path = UNREADABLE_PATH.exec(line)?.[1]
      return path !== undefined && path !== root && path.startsWith(root.endsWith('/') ? root : `${root}/`)
    })
  )
}

/** How a run ended, as far as the tool is concerned. */
export interface Outcome {
  /** ripgrep's stderr when it exited 2 but searched on (some paths below the root could not be read). */
  readonly warning?: string
  /** ripgrep was stopped at the time budget: the results are those found until then. */
  readonly stopped?: true
}

/**
 * Judges ripgrep's exit once its output was read: 0 and 1 (nothing found) succeed; a stop at the deadline keeps
 * what was found; 2 with results is a partial success whose stderr becomes a note, and so is 2 without results when
 * all it says is that some paths below a directory root could not be read (the rest was searched); everything else
 * throws. `pattern` is the model's own, quoted in an invalid-pattern error instead of ripgrep's rewritten form;
 * `walked` is the absolute root when it is a directory.
 */
export function judgeExit(
  tool: ToolName,
  run: RipgrepRun,
  found: number,
  context: { pattern: string; walked?: string },
): Outcome {
  const { exitCode, signal } = run.exit
  if (run.stoppedAtDeadline) return { stopped: true }
  if (signal === 'SIGABRT') {
    const allocation = ALLOCATION_FAILED.exec(run.stderr)
    if (allocation) throw new RipgrepOutOfMemory(abortedOutOfMemoryMessage(tool, Number(allocation[1])))
  }
  if (signal !== null) throw new SearchError(killedMessage(tool, signal), { code: SearchErrorCode.SEARCH_FAILED })
  if (exitCode === 0 || exitCode === 1) return {}
  if (exitCode === 2 && found > 0) return { warning: run.stderr }
  if (exitCode === 2 && context.walked !== undefined && onlyUnreadableBelow(run.stderr, context.walked))
    return { warning: run.stderr }
  if (exitCode === 2 && PATTERN_ERROR.test(run.stderr)) {
    throw new SearchError(invalidPatternMessage(tool, context.pattern, run.stderr), {
      code: SearchErrorCode.SEARCH_INVALID_PATTERN,
    })
  }
  throw new SearchError(exitMessage(tool, exitCode, run.stderr), { code: SearchErrorCode.SEARCH_FAILED })
}

function aborted(tool: ToolName, cause?: unknown): SearchError {
  return new SearchError(
    abortedMessage(tool),
    cause === undefined ? { code: SearchErrorCode.SEARCH_ABORTED } : { code: SearchErrorCode.SEARCH_ABORTED, cause },
  )
}

/** Ends the record stream: a last record without its separator is parsed too, and may be malformed. */
export function endRecords(tool: ToolName, splitter: RecordSplitter): void {
  try {
    splitter.end()
  } catch (error) {
    throw new SearchError(malformedMessage(tool, (error as Error)?.message ?? String(error)), {
      code: SearchErrorCode.SEARCH_FAILED,
      cause: error,
    })
  }
}

/** ripgrep's time budget inside the call's: the tool stops it early enough to return what it found. */
export function searchDeadline(timeoutMs: number): number {
  return Math.max(1, timeoutMs - Math.min(Math.max(Math.floor(timeoutMs / 10), 1000), Math.floor(timeoutMs / 2)))
}
