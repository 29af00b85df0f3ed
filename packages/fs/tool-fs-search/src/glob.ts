import { availableParallelism } from 'node:os'
import type { ToolExecution, ToolOutput } from '@deepseek-ai/dsh-tools'
import { invalidArgs } from '@deepseek-ai/dsh-tools'
import { argRoom, commaList, globArgv, globThreads, normalizeGlob } from './argv.ts'
import { errorPath, nulInPathMessage, quoteArg, recordOverflowMessage, savedOverflowMessage } from './common-text.ts'
import { SearchError, SearchErrorCode } from './errors.ts'
import { type GlobArgs, pageGlob, savedGlobRow, wholeGlob } from './glob-text.ts'
import { PathListing } from './listing.ts'
import { enclosingVcsDir, resolveRoot, type SearchRoot } from './paths.ts'
import { endRecords, judgeExit, runRipgrep, searchDeadline } from './ripgrep.ts'
import { cannotSave, deliver, openRoot, type OpenedRoot, runIn, type SearchServices, sessionCwd } from './search.ts'
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
  const binary = await services.locator.path('glob', exec)
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
  const braces = commaList(args.pattern)
  if (braces !== undefined) {
    throw invalidArgs(
      `glob pattern must be ONE glob, not a comma-separated list ("${quoteArg(args.pattern)}"): use braces for alternatives, e.g. "${quoteArg(braces)}"`,
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

  // Each file is stat'ed as soon as ripgrep lists it, while ripgrep walks on (see listing.ts).
  const listing = new PathListing(opened, root, { rootItself: false })
  // Within the budget the call really has: a timeout policy may give a shorter one than the tool's own.
  const deadlineMs = searchDeadline(exec.budgetMs ?? config.timeoutMs)
  const started = Date.now()
  const run = await runRipgrep(services.subprocess, {
    tool: 'glob',
    binary,
    args: globArgv(normal.pattern, opened.searched.absolute, WALKERS, opened.exclude, {
      respectGitignore: args.respect_gitignore === true,
    }),
    // In the opened root: ripgrep matches globs that contain "/" relative to it, as the model expects.
    ...runIn(opened, exec, config, deadlineMs),
    onOutput: (chunk) => {
      listing.push(chunk)
      if (listing.pendingLength > config.rawOutputMaxBytes)
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
  if (!run.stoppedAtDeadline) endRecords('glob', listing.splitter)
  const outcome = judgeExit('glob', { ...run, stderr: opened.stderr(run.stderr) }, listing.length, {
    pattern: args.pattern,
    walked: root.absolute,
  })
  const order = listing.newestFirst()
  const shown = (index: number): string => listing.shown(index)
  // A capped list that .gitignore was not asked to trim: how much of it lies in ignored paths (node_modules).
  const ignored =
    order.length > config.globMaxResults && args.respect_gitignore !== true && !outcome.stopped
      ? await ignoredFiles(
          services,
          exec,
          normal.pattern,
          opened,
          binary,
          order.length,
          deadlineMs - (Date.now() - started),
        )
      : undefined
  return finish(
    services,
    exec,
    {
      paths: Array.from(order.subarray(0, config.globMaxResults), shown),
      total: order.length,
      ...(ignored !== undefined && ignored * 2 > order.length ? { ignored } : {}),
      ...(outcome.warning === undefined ? {} : { warning: outcome.warning }),
      ...(outcome.stopped ? { stoppedAfterMs: deadlineMs } : {}),
    },
    { order, shown },
  )
}

/**
 * How many of the `total` files listed lie where ignore files ignore them: the total less what the same listing
 * finds with them respected (a second walk that only counts). Undefined when that walk fails or runs out of time.
 */
async function ignoredFiles(
  services: SearchServices,
  exec: ToolExecution,
  pattern: string,
  opened: OpenedRoot,
  binary: string,
  total: number,
  deadlineMs: number,
): Promise<number | undefined> {
  const { config } = services
  if (deadlineMs < 1) return undefined
  let kept = 0
  try {
    const run = await runRipgrep(services.subprocess, {
      tool: 'glob',
      binary,
      args: globArgv(pattern, opened.searched.absolute, WALKERS, opened.exclude, { respectGitignore: true }),
      ...runIn(opened, exec, config, deadlineMs),
      onOutput: (chunk) => {
        for (let at = chunk.indexOf(0); at !== -1; at = chunk.indexOf(0, at + 1)) kept++
      },
    })
    if (run.stoppedAtDeadline || (run.exit.exitCode !== 0 && run.exit.exitCode !== 1)) return undefined
  } catch (error) {
    if ((error as SearchError)?.code === SearchErrorCode.SEARCH_ABORTED) throw error
    return undefined
  }
  return Math.max(0, total - kept)
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
