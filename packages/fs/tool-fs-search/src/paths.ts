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
  return absolute
    .split('/')
    .find((part): part is (typeof VCS_DIRS)[number] => (VCS_DIRS as readonly string[]).includes(part))
}

/**
 * The part of a path printed by ripgrep below the root ('' for the root itself), or undefined when the path is
 * not under the root at all (which only a broken or foreign binary would print).
 */
export function relativeBytes(root: SearchRoot, printed: Buffer): Buffer | undefined {
  const prefix = root.bytes
  if (printed.length < prefix.length || printed.compare(prefix, 0, prefix.length, 0, prefix.length) !== 0)
    return undefined
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

/** A path's bytes as a string, one latin1 character per byte: compared with comparePaths, any name sorts exactly. */
export function pathKey(bytes: Buffer): string {
  return bytes.toString('latin1')
}

/**
 * "Path order" of two byte strings (see pathKey): component by component, each component bytewise — the order of
 * `rg --sort=path`. Equivalently: bytewise, with `/` below every other byte. (PathTable sorts many paths the same way.)
 */
export function comparePaths(a: string, b: string, from = 0): number {
  const n = Math.min(a.length, b.length)
  let i = from
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++
  if (i === n) return a.length - b.length
  const x = a.charCodeAt(i)
  const y = b.charCodeAt(i)
  return (x === 0x2f ? -1 : x) - (y === 0x2f ? -1 : y)
}

/** Like relativeBytes, for a path and root as latin1 strings (see pathKey). */
export function relativeKey(rootKey: string, printed: string): string | undefined {
  if (!printed.startsWith(rootKey)) return undefined
  if (printed.length === rootKey.length) return ''
  if (printed.charCodeAt(rootKey.length) === 0x2f) return printed.slice(rootKey.length + 1)
  return rootKey.endsWith('/') ? printed.slice(rootKey.length) : undefined
}

const NON_ASCII = /[^\x00-\x7f]/

/** The shown (lossy UTF-8) form of a latin1 key. */
export function decodeKey(key: string): string {
  return NON_ASCII.test(key) ? Buffer.from(key, 'latin1').toString('utf8') : key
}
