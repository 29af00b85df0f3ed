/**
 * The names a sandboxed command inherits from the host (docs/security.md#boundary): an allowlist, not a scrub, so a credential
 * under a name no pattern foresaw stays out. `LC_*` are the locale's. Widened only by config (`passEnv`).
 */
export const ALLOWED_ENV: readonly string[] = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'LANG',
  'TZ',
  'TERM',
  'TMPDIR',
]

/** Whether `name` is passed: on the allowlist, an `LC_*` name, or named by `passEnv` (`NAME`, or `PREFIX*`). */
export function passed(name: string, passEnv: readonly string[]): boolean {
  if (ALLOWED_ENV.includes(name) || name.startsWith('LC_')) return true
  return passEnv.some((entry) => (entry.endsWith('*') ? name.startsWith(entry.slice(0, -1)) : name === entry))
}

/**
 * A sandboxed command's environment: the allowed names of `source` (the host's), then `overrides` (the executor's
 * own entries and the caller's; an entry wins, `undefined` removes a name).
 */
export function sandboxEnv(
  overrides: Readonly<Record<string, string | undefined>>,
  passEnv: readonly string[],
  source: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const env: Record<string, string> = {}
  for (const name of Object.keys(source)) {
    if (Object.hasOwn(overrides, name) || !passed(name, passEnv)) continue
    const value = source[name]
    if (value !== undefined) env[name] = value
  }
  for (const name of Object.keys(overrides)) {
    const value = overrides[name]
    if (value !== undefined) env[name] = value
  }
  return env
}
