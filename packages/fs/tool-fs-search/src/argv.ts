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
export function globArgv(pattern: string, root: string, threads: number, exclude: readonly string[] = []): string[] {
  return [
    '--no-config',
    '--files',
    '--null',
    `--threads=${threads}`,
    `--glob=${pattern}`,
    '--no-ignore',
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

/**
 * Matching lines as JSON records; ripgrep's default visibility (ignore files, hidden, binary), with
 * `--no-require-git` so that `.gitignore` applies the same way outside a git repository as inside one.
 */
export function grepArgv(
  pattern: string,
  root: string,
  include: string | undefined,
  options: { readonly noIgnoreDot?: boolean; readonly exclude?: readonly string[] } = {},
): string[] {
  return [
    '--no-config',
    '--json',
    '--no-require-git',
    ...(options.noIgnoreDot === true ? ['--no-ignore-dot'] : []),
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
 * same visibility and exclusions, `--fixed-strings`, nothing printed.
 */
export function literalArgv(
  pattern: string,
  root: string,
  include: string | undefined,
  exclude: readonly string[] = [],
): string[] {
  return [
    '--no-config',
    '--quiet',
    '--fixed-strings',
    '--no-require-git',
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
 * Why `include` is not ONE positive glob, or undefined when it is: a `!` negation or a comma outside braces
 * (`*.ts,*.tsx`) is a mistake the model should hear about rather than a glob that silently matches nothing.
 */
export function includeProblem(include: string): string | undefined {
  if (include.startsWith('!')) return 'a negation'
  let depth = 0
  let inClass = false
  for (let i = 0; i < include.length; i++) {
    const char = include[i]
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
    else if (char === ',' && depth === 0) return 'a comma-separated list'
  }
  return undefined
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
