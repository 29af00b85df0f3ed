import { isAbsolute, relative, resolve, sep } from 'node:path'

/** Version-control directories that glob never lists (the directory and everything in it). */
export const VCS_DIRS = ['.git', '.svn', '.hg', '.bzr', '.jj', '.sl'] as const

/** Where a search starts, in the three forms the tools need. */
export interface SearchRoot {
  /** Absolute, normalised; the one path handed to ripgrep, so every path it prints starts with it. */
  readonly absolute: string
  readonly bytes: Buffer
  /** How the root itself is shown: '' for the cwd, relative inside the cwd, absolute outside it. */
  readonly display: string
}

export function resolveRoot(cwd: string, path: string | undefined): SearchRoot {
  const absolute = resolve(cwd, path ?? '.')
  return { absolute, bytes: Buffer.from(absolute, 'utf8'), display: displayPath(cwd, absolute) }
}

/** Relative to `cwd` without `./`; absolute when outside it. */
export function displayPath(cwd: string, absolute: string): string {
  const rel = relative(cwd, absolute)
  if (rel === '') return ''
  if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return absolute
  return rel
}

/** The first version-control directory among the root's own components, if the root is inside one. */
export function enclosingVcsDir(absolute: string): string | undefined {
  return absolute.split('/').find((part): part is (typeof VCS_DIRS)[number] => (VCS_DIRS as readonly string[]).includes(part))
}

/**
 * The part of a path printed by ripgrep below the root ('' for the root itself), or undefined when the path is
 * not under the root at all (which only a broken or foreign binary would print).
 */
export function relativeBytes(root: SearchRoot, printed: Buffer): Buffer | undefined {
  const prefix = root.bytes
  if (printed.length < prefix.length || printed.compare(prefix, 0, prefix.length, 0, prefix.length) !== 0) return undefined
  if (printed.length === prefix.length) return printed.subarray(printed.length)
  if (printed[prefix.length] === 0x2f) return printed.subarray(prefix.length + 1)
  // Only the filesystem root ends with a separator itself.
  return prefix[prefix.length - 1] === 0x2f ? printed.subarray(prefix.length) : undefined
}

/** The shown form of a path below the root: the root's display joined with the relative part. */
export function joinDisplay(rootDisplay: string, rel: string): string {
  if (rel === '') return rootDisplay
  if (rootDisplay === '') return rel
  return rootDisplay.endsWith('/') ? rootDisplay + rel : `${rootDisplay}/${rel}`
}

/**
 * A string whose plain `<` order is "path order": component by component, each component bytewise — the order
 * of `rg --sort=path`. Each byte becomes one latin1 code unit and `/` becomes NUL, which no name can hold.
 */
export function pathKey(bytes: Buffer): string {
  return bytes.toString('latin1').replaceAll('/', '\0')
}

export function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/** UTF-8 with every invalid sequence shown as U+FFFD: a name that is not UTF-8 is shown, never a failure. */
export function decodeLossy(bytes: Buffer): string {
  return bytes.toString('utf8')
}

// C0 controls, DEL, C1 controls (U+009B is a one-character CSI on some terminals) and the Unicode line separators.
const CONTROL = /[\x00-\x1f\x7f-\x9f\u2028\u2029]/g
const CONTROL_BUT_TAB = /[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]/g

function escapeOne(char: string): string {
  switch (char) {
    case '\n': return '\\n'
    case '\r': return '\\r'
    case '\t': return '\\t'
  }
  const code = char.charCodeAt(0)
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`
}

/** One line, no terminal escapes: control characters become `\n`, `\r`, `\t`, `\x1b`, `\u2028`. */
export function escapeControl(text: string, options: { keepTab: boolean }): string {
  return text.replace(options.keepTab ? CONTROL_BUT_TAB : CONTROL, escapeOne)
}

/** `text` cut to at most `maxBytes` UTF-8 bytes, never inside a character. */
export function truncateUtf8(text: string, maxBytes: number): { text: string; truncated: boolean } {
  // A UTF-16 code unit is at most 3 UTF-8 bytes: most lines are decided without encoding anything.
  if (text.length * 3 <= maxBytes || Buffer.byteLength(text, 'utf8') <= maxBytes) return { text, truncated: false }
  const bytes = Buffer.from(text, 'utf8')
  let cut = maxBytes
  while (cut > 0 && ((bytes[cut] ?? 0) & 0xc0) === 0x80) cut--
  return { text: bytes.subarray(0, cut).toString('utf8'), truncated: true }
}
