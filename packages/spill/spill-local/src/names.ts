import { createRequire } from 'node:module'

// node:crypto is loaded only for a session id that needs a hash: loading it costs a cold `dsh call` about 8 ms.
const crypto = () => createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto')

/*
 * Names under the spill root. Pure functions: whatever a session id, call id or suggested name holds, the result is
 * one path component of safe characters that cannot name a parent, a hidden file or another directory.
 */

const UNSAFE = /[^A-Za-z0-9._-]+/g
const EDGE = /^[._-]+|[._-]+$/g
/** A session id that is already a plain lower-case name is used as is (readable locators). */
const PLAIN_SESSION = /^[a-z0-9_-][a-z0-9._-]{0,63}$/
const MAX_NAME = 120
const MAX_EXTENSION = 16

/** Only `[A-Za-z0-9._-]`, runs of anything else become `_`, no leading or trailing `.`/`_`/`-`, at most `max`. */
function segment(text: string, max: number): string {
  return text.replace(UNSAFE, '_').replace(EDGE, '').slice(0, max).replace(EDGE, '')
}

/**
 * The directory of a session. Plain ids (lower-case letters, digits, `._-`, not starting with a dot) are used as
 * they are; any other id becomes `@<readable part>-<hash>`. Plain ids never contain `@`, and different unplain ids
 * differ in their hash, so two sessions never share a directory (also on case-insensitive file systems).
 */
export function sessionDirName(sessionId: string): string {
  if (PLAIN_SESSION.test(sessionId)) return sessionId
  const readable = segment(sessionId.toLowerCase(), 32) || 'session'
  const hash = crypto().createHash('sha256').update(sessionId, 'utf8').digest('hex').slice(0, 16)
  return `@${readable}-${hash}`
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
