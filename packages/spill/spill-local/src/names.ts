/*
 * Names under the spill root. Pure functions: whatever a session id, call id or suggested name holds, the result is
 * one path component of safe characters that cannot name a parent, a hidden file or another directory. A session's
 * directory is its random `dirName`.
 */

const UNSAFE = /[^A-Za-z0-9._-]+/g
const EDGE = /^[._-]+|[._-]+$/g
const MAX_NAME = 120
const MAX_EXTENSION = 16

/** Only `[A-Za-z0-9._-]`, runs of anything else become `_`, no leading or trailing `.`/`_`/`-`, at most `max`. */
function segment(text: string, max: number): string {
  return text.replace(UNSAFE, '_').replace(EDGE, '').slice(0, max).replace(EDGE, '')
}

/**
 * The file name for one save: `<call id>-<suggested name>`, both made safe, the suggested extension kept when it
 * is short, `output.txt` when nothing usable is left of the suggestion.
 */
export function spillFileName(callId: string, suggestedName: string): string {
  const call = segment(callId, 40)
  const name = safeName(suggestedName)
  return call ? `${call}-${name}` : name
}

function safeName(suggestedName: string): string {
  const name = segment(suggestedName, Number.MAX_SAFE_INTEGER)
  if (!name) return 'output.txt'
  if (name.length <= MAX_NAME) return name
  const dot = name.lastIndexOf('.')
  const extension = dot > 0 && name.length - dot <= MAX_EXTENSION ? name.slice(dot) : ''
  return segment(name.slice(0, MAX_NAME - extension.length), MAX_NAME) + extension
}

/** The n-th candidate for a name (n ≥ 2): `name-n.ext`, so a later save never overwrites an earlier one. */
export function numbered(fileName: string, n: number): string {
  const dot = fileName.lastIndexOf('.')
  return dot > 0 ? `${fileName.slice(0, dot)}-${n}${fileName.slice(dot)}` : `${fileName}-${n}`
}
