import { VCS_DIRS } from './paths.ts'

/*
 * The argv handed to ripgrep, without the binary. `--no-config` comes first so that a host RIPGREP_CONFIG_PATH
 * can never add flags (such as `--pre`); every model value is one element glued to its flag, and the root comes
 * after `--`, so no value can ever be read as a flag.
 */

/**
 * Every file under `root` whose path matches `pattern`, hidden and ignored ones included, version-control
 * directories excluded, NUL-separated so that any name survives. No `--sort`: ripgrep walks in parallel and the
 * tool orders by modification time itself (docs/decisions/2026-11-30-glob-ordering.md).
 */
export function globArgv(pattern: string, root: string): string[] {
  return [
    '--no-config', '--files', '--null', `--glob=${pattern}`, '--no-ignore', '--hidden',
    // After the model's glob, so that they win over it; the trailing slash matches directories only.
    ...VCS_DIRS.map((dir) => `--glob=!${dir}/`),
    '--', root,
  ]
}

/** Matching lines as JSON records; ripgrep's default visibility (ignore files, hidden, binary). */
export function grepArgv(pattern: string, root: string, include: string | undefined): string[] {
  return ['--no-config', '--json', `--regexp=${pattern}`, ...(include === undefined ? [] : [`--glob=${include}`]), '--', root]
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
    if (char === '\\') { i++; continue }
    if (inClass) { if (char === ']') inClass = false; continue }
    if (char === '[') inClass = true
    else if (char === '{') depth++
    else if (char === '}' && depth > 0) depth--
    else if (char === ',' && depth === 0) return 'a comma-separated list'
  }
  return undefined
}
