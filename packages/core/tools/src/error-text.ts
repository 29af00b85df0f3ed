/*
 * The pieces of the error texts the tool service writes itself (unknown tool, invalid arguments, a bad definition):
 * a caller's name quoted within a bound, a list of problems within a bound.
 */

/** The most characters of any caller-supplied string (a tool name, a property path) one error text quotes. */
export const QUOTE_MAX_CHARS = 200
/** The most problems one INVALID_ARGS text lists; the rest are counted. */
export const PROBLEMS_MAX = 10

/**
 * `value` in double quotes, as an error text shows a name: whole when short; else its first QUOTE_MAX_CHARS
 * characters (never half a surrogate pair), an ellipsis, and the full length after the closing quote — so a
 * 300 KB property name costs the model one line, not its context window.
 */
export function quote(value: string): string {
  if (value.length <= QUOTE_MAX_CHARS) return `"${value}"`
  return `"${cut(value, QUOTE_MAX_CHARS)}…" (${value.length} characters)`
}

/** At most `max` characters of `text`, never ending inside a surrogate pair. */
export function cut(text: string, max: number): string {
  if (text.length <= max) return text
  const last = text.charCodeAt(max - 1)
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max)
}

/** Problems joined for one error text: the first PROBLEMS_MAX, then how many more there were. */
export function listProblems(problems: readonly string[]): string {
  if (problems.length <= PROBLEMS_MAX) return problems.join('; ')
  const more = problems.length - PROBLEMS_MAX
  return `${problems.slice(0, PROBLEMS_MAX).join('; ')}; and ${more} more problem${more === 1 ? '' : 's'}`
}
