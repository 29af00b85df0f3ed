import { MAX_ARG_BYTES } from '@deepseek-ai/dsh-subprocess'
import { VCS_DIRS } from './paths.ts'

/*
 * The argv handed to ripgrep, without the binary. `--no-config` comes first so that a host RIPGREP_CONFIG_PATH
 * can never add flags (such as `--pre`); every model value is one element glued to its flag, and the root comes
 * after `--`, so no value can ever be read as a flag.
 */

/**
 * Every file under `root` whose path matches `pattern`, hidden and ignored ones included, version-control
 * directories excluded, NUL-separated so that any name survives. No `--sort`: ripgrep walks on `threads` threads
 * and the tool orders by modification time itself (docs/decisions/2026-11-30-glob-ordering.md).
 */
export function globArgv(
  pattern: string,
  root: string,
  threads: number,
  exclude: readonly string[] = [],
  options: { readonly respectGitignore?: boolean } = {},
): string[] {
  return [
    '--no-config',
    '--files',
    '--null',
    `--threads=${threads}`,
    `--glob=${pattern}`,
    // respect_gitignore: ripgrep's default visibility of ignore files, the same outside a git repository as inside.
    ...(options.respectGitignore === true ? ['--no-require-git'] : ['--no-ignore']),
    '--hidden',
    // After the model's glob, so that they win over it; the trailing slash matches directories only. `exclude`:
    // the workspace's hidden paths below the root (`--glob=!/<rel>`), last so that nothing wins over them.
    ...VCS_DIRS.map((dir) => `--glob=!${dir}/`),
    ...exclude,
    '--',
    root,
  ]
}

/**
 * How many threads glob's ripgrep walks on, given the CPUs: all but one, which the tool needs to stat each listed
 * file as it arrives (at most 12, ripgrep's own cap). On two CPUs that is one walker, which lists a small tree 3 ms
 * sooner (ripgrep's parallel walk costs that much to start and stop) and a large one as fast, since the second
 * walker only competed with the stats (docs/decisions/2026-12-01-glob-walker-threads.md).
 */
export function globThreads(cpus: number): number {
  return Math.min(12, Math.max(1, cpus - 1))
}

/** What a grep call asks of ripgrep besides its pattern, root and include (each only when given). */
export interface GrepFlags {
  /** Skip .ignore and .rgignore files (the retry after an unusable one). */
  readonly noIgnoreDot?: boolean
  /** `--glob=!/<rel>` for the workspace's hidden paths below the root: after the model's include, so they win. */
  readonly exclude?: readonly string[]
  /** output_mode: the JSON records of matching lines (content), NUL-ended paths, or `<path>NUL<count>` lines. */
  readonly mode?: 'content' | 'files_with_matches' | 'count'
  readonly caseInsensitive?: boolean
  readonly multiline?: boolean
  /** A ripgrep file type (`ts`, `py`). */
  readonly type?: string
  /** Lines of context before and after each match (content). */
  readonly before?: number
  readonly after?: number
  /** Files in path order, one thread (`--sort=path`): a page from an offset reads the matches in their final order. */
  readonly sorted?: boolean
}

const OUTPUT: Record<NonNullable<GrepFlags['mode']>, readonly string[]> = {
  content: ['--json'],
  files_with_matches: ['--files-with-matches', '--null'],
  count: ['--count', '--with-filename', '--null'],
}

/** The flags of the model's own options, in one order. */
function optionFlags(flags: GrepFlags): string[] {
  return [
    ...(flags.caseInsensitive === true ? ['--ignore-case'] : []),
    ...(flags.multiline === true ? ['--multiline', '--multiline-dotall'] : []),
    ...(flags.type === undefined ? [] : [`--type=${flags.type}`]),
    ...(flags.before ? [`--before-context=${flags.before}`] : []),
    ...(flags.after ? [`--after-context=${flags.after}`] : []),
    ...(flags.sorted === true ? ['--sort=path'] : []),
  ]
}

/**
 * Matching lines as JSON records (or, in the other output modes, the matching files or their counts); ripgrep's
 * default visibility (ignore files, hidden, binary), with `--no-require-git` so that `.gitignore` applies the same
 * way outside a git repository as inside one.
 */
export function grepArgv(
  pattern: string,
  root: string,
  include: string | undefined,
  options: GrepFlags = {},
): string[] {
  return [
    '--no-config',
    ...OUTPUT[options.mode ?? 'content'],
    '--no-require-git',
    ...(options.noIgnoreDot === true ? ['--no-ignore-dot'] : []),
    ...optionFlags(options),
    // `exclude`: the workspace's hidden paths below the root (`--glob=!/<rel>`), after the model's include so they win.
    `--regexp=${pattern}`,
    ...(include === undefined ? [] : [`--glob=${include}`]),
    ...(options.exclude ?? []),
    '--',
    root,
  ]
}

/**
 * Whether `pattern`'s text occurs literally where grep searched (exit 0 at the first occurrence, 1 for none): the
 * same visibility, case, type and exclusions, `--fixed-strings`, nothing printed.
 */
export function literalArgv(
  pattern: string,
  root: string,
  include: string | undefined,
  exclude: readonly string[] = [],
  flags: Pick<GrepFlags, 'caseInsensitive' | 'type'> = {},
): string[] {
  return [
    '--no-config',
    '--quiet',
    '--fixed-strings',
    '--no-require-git',
    ...optionFlags(flags),
    `--regexp=${pattern}`,
    ...(include === undefined ? [] : [`--glob=${include}`]),
    ...exclude,
    '--',
    root,
  ]
}

/**
 * The glob pattern as ripgrep should see it, or why it cannot be used: a leading `./` is dropped (ripgrep matches
 * paths without it), an absolute pattern inside the search root is made relative to the root, and a `!`
 * negation (which would silently invert the search) is refused, as in grep's include.
 */
export function normalizeGlob(
  pattern: string,
  root: string,
): { readonly pattern: string } | { readonly problem: string } {
  if (pattern.startsWith('!'))
    return {
      problem:
        'a negation ("!…"): glob lists the files that match; to leave files out, choose a narrower path or pattern',
    }
  const relative = relativeGlob(pattern, root)
  if (relative === OUTSIDE)
    return {
      problem: `an absolute path outside the search path ${root}: pass its directory as path and a pattern relative to it`,
    }
  if (relative === EMPTY)
    return {
      problem: 'no pattern left once "./" or the search path is taken off: add the file pattern, e.g. "**/*.ts"',
    }
  return { pattern: relative }
}

/**
 * grep's include as ripgrep should see it, the same way: ripgrep matches it against paths relative to `base` (the
 * directory searched, or the one holding the file searched), so a leading `./` or an absolute glob would match
 * nothing, silently.
 */
export function normalizeInclude(
  include: string,
  base: string,
): { readonly include: string } | { readonly problem: string } {
  const relative = relativeGlob(include, base)
  if (relative === OUTSIDE)
    return {
      problem: `an absolute path outside the search path ${base}: pass its directory as path and a glob relative to it as include`,
    }
  if (relative === EMPTY)
    return { problem: 'no glob left once "./" or the search path is taken off: add the file pattern, e.g. "*.ts"' }
  return { include: relative }
}

const OUTSIDE = Symbol('outside the root')
const EMPTY = Symbol('nothing left')

/** `glob` without its leading `./`s, or without `root/` when it is absolute. */
function relativeGlob(glob: string, root: string): string | typeof OUTSIDE | typeof EMPTY {
  let out = glob
  if (out.startsWith('/')) {
    const prefix = root.endsWith('/') ? root : `${root}/`
    if (!out.startsWith(prefix)) return OUTSIDE
    out = out.slice(prefix.length)
  }
  while (out.startsWith('./')) out = out.slice(2).replace(/^\/+/, '')
  return out === '' || out === '.' ? EMPTY : out
}

/**
 * Whether a glob pattern reads as a comma-separated list of patterns (`src/*.spec.ts, src/*.bench.ts`), which would
 * silently match nothing: a comma outside braces next to a space, or between parts that hold glob syntax. A name
 * with a comma in it (`a,b.txt`) is a pattern still. Returns the braces form to suggest, or undefined.
 */
export function commaList(pattern: string): string | undefined {
  if (includeProblem(pattern) !== 'a comma-separated list') return undefined
  const parts = topLevelParts(pattern).map((part) => part.trim())
  if (parts.some((part) => part === '')) return undefined
  if (!/,\s|\s,/.test(pattern) && !parts.some((part) => /[*?[{]/.test(part))) return undefined
  return `{${parts.join(',')}}`
}

/** `pattern` split at its commas outside braces and classes. */
function topLevelParts(pattern: string): string[] {
  const parts: string[] = []
  let depth = 0
  let inClass = false
  let from = 0
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i]
    if (char === '\\') {
      i++
      continue
    }
    if (inClass) {
      if (char === ']') inClass = false
      continue
    }
    if (char === '[') inClass = true
    else if (char === '{') depth++
    else if (char === '}' && depth > 0) depth--
    else if (char === ',' && depth === 0) {
      parts.push(pattern.slice(from, i))
      from = i + 1
    }
  }
  parts.push(pattern.slice(from))
  return parts
}

/**
 * Why `include` is not ONE positive glob, or undefined when it is: a `!` negation or a comma outside braces
 * (`*.ts,*.tsx`) is a mistake the model should hear about rather than a glob that silently matches nothing.
 */
export function includeProblem(include: string): string | undefined {
  if (include.startsWith('!')) return 'a negation'
  return topLevelParts(include).length > 1 ? 'a comma-separated list' : undefined
}

/**
 * How many bytes of `value` ripgrep can take glued to `flag` (one argv element, MAX_ARG_BYTES), and how long it is
 * (UTF-8): a longer value would fail the spawn with E2BIG, so the tool refuses it first, saying so.
 */
export function argRoom(
  flag: '--regexp=' | '--glob=',
  value: string,
): { readonly bytes: number; readonly room: number } {
  return { bytes: Buffer.byteLength(value, 'utf8'), room: MAX_ARG_BYTES - flag.length }
}
