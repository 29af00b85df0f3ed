import { lstatSync, readdirSync, realpathSync, statSync } from 'node:fs'
import { basename, dirname, join, resolve, sep } from 'node:path'
import { CREDENTIAL_STORES, expandForHomes, homeDirs, within } from '@deepseek-ai/dsh-tools'

export type Access = 'read' | 'write'

/** The one policy every tool obeys (docs/security.md#boundary): real paths, computed per session cwd. */
export interface PathPolicy {
  /** The session cwd first, then the configured roots (real paths). */
  readonly writable: readonly string[]
  /** Configured read-only roots and those added at run time (spill directories), real paths. */
  readonly readOnly: readonly string[]
  /**
   * Real paths of the existing hidden entries (credential stores, `denyRead`, the HTTP token file, dsh's config
   * file): never readable nor writable by a tool, masked in the sandbox.
   */
  readonly hidden: readonly string[]
  /** Every hidden entry as a rule, existing or not, so an entry created after the policy was computed is hidden too. */
  readonly rules: readonly HiddenRule[]
  /** `dev:ino:birthtime` (see `identity`) of every hidden entry seen since the service started → the path it was seen at (renames keep it). */
  readonly identities: ReadonlyMap<string, string>
}

/** One hidden entry: `parent` (absolute, lexical or real) and the last component, literal or a `*`/`?` pattern. */
export interface HiddenRule {
  readonly parent: string
  readonly name: string | RegExp
  /** The last component as configured: `*` and `?` are wildcards when `name` is a RegExp. */
  readonly raw: string
  /** As configured (`~/.ssh`), for texts. */
  readonly shown: string
  /** Paths below a matching entry that stay visible (a session's own files in a directory all sessions share). */
  readonly except?: ReadonlySet<string>
}

/** The real path of `path` (one syscall), or undefined when it does not exist or cannot be resolved. */
export function realOrUndefined(path: string): string | undefined {
  try {
    return realpathSync.native(path)
  } catch {
    return undefined
  }
}

export function realRoot(path: string): string {
  return realOrUndefined(resolve(path)) ?? resolve(path)
}

const GLOB = /[*?]/

function nameMatcher(name: string): string | RegExp {
  if (!GLOB.test(name)) return name
  const source = name
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '[^/]*')
    .replace(/\?/g, '[^/]')
  return new RegExp(`^${source}$`)
}

/**
 * The rules of the hidden entries (each by its lexical parent and, when that differs, its real parent), their
 * existing real paths, and the identities found (added to `identities`).
 */
export function hiddenEntries(
  entries: readonly string[],
  base: string,
  identities: Map<string, string>,
): { rules: HiddenRule[]; hidden: string[] } {
  const rules: HiddenRule[] = []
  const hidden = new Set<string>()
  // `~` is $HOME and the real home from the password database alike: a HOME pointed elsewhere un-hides nothing.
  for (const [entry, absolute] of entries.flatMap((one) =>
    expandForHomes([one], base).map((path) => [one, path] as const),
  )) {
    const parent = dirname(absolute)
    const name = nameMatcher(basename(absolute))
    const realParent = realOrUndefined(parent)
    for (const dir of new Set([parent, ...(realParent === undefined ? [] : [realParent])]))
      rules.push({ parent: dir, name, raw: basename(absolute), shown: entry })
    if (realParent === undefined) continue
    const names = typeof name === 'string' ? [name] : listMatching(realParent, name)
    for (const one of names) {
      const path = join(realParent, one)
      const stats = statSync(path, { throwIfNoEntry: false, bigint: false })
      if (!stats) continue
      identities.set(identity(stats), path)
      const real = realOrUndefined(path)
      if (real === undefined) continue
      hidden.add(real)
      // A hidden entry that is a link to elsewhere hides its target too.
      if (real !== path) rules.push({ parent: dirname(real), name: basename(real), raw: basename(real), shown: entry })
    }
  }
  return { rules, hidden: [...hidden] }
}

function listMatching(dir: string, pattern: RegExp): string[] {
  try {
    return readdirSync(dir).filter((name) => pattern.test(name))
  } catch {
    return []
  }
}

/**
 * What stays the same through a rename and tells a reused inode apart: device, inode and birth time (statx; 0 where
 * the filesystem keeps none, and then device and inode alone). Without the birth time, a file created where a
 * deleted hidden entry's inode is reused would be taken for it.
 */
export function identity(stats: { dev: number; ino: number; birthtimeMs: number }): string {
  return `${stats.dev}:${stats.ino}:${stats.birthtimeMs}`
}

/** The rule that hides `path` (itself or an ancestor), if any: a lexical test, so it holds for paths not there yet. */
export function hiddenBy(path: string, rules: readonly HiddenRule[]): HiddenRule | undefined {
  for (const rule of rules) {
    if (!within(path, rule.parent) || path === rule.parent || rule.except?.has(path)) continue
    const start = rule.parent.length + (rule.parent.endsWith(sep) ? 0 : 1)
    const end = path.indexOf(sep, start)
    const first = path.slice(start, end === -1 ? undefined : end)
    if (typeof rule.name === 'string' ? first === rule.name : rule.name.test(first)) return rule
  }
  return undefined
}

/**
 * Why `root` is too broad to be a writable root (docs/security.md#boundary), or undefined: the filesystem root, the home directory,
 * or a directory that holds a default credential store (so every ancestor of the home directory, and `~/.config`).
 */
export function broadness(root: string): string | undefined {
  if (root === sep) return 'it is the filesystem root'
  const homes = new Set(homeDirs().flatMap((home) => [home, realOrUndefined(home) ?? home]))
  if (homes.has(root)) return 'it is the home directory'
  for (const h of homes) {
    if (within(h, root)) return `it holds the home directory ${h}`
    for (const entry of CREDENTIAL_STORES) {
      const hidden = join(h, entry.slice(2))
      if (within(dirname(hidden), root)) return `it holds the credential store ${entry}`
    }
  }
  return undefined
}

/** A hidden identity that left the path it was seen at: where it is now (undefined: not in any root), and when looked. */
export interface Moved {
  readonly path: string | undefined
  readonly seenAt: string
  readonly at: number
}

/** How often the roots are walked again for a moved hidden directory that was not found in them. */
const RELOOK_MS = 5000
/** Most directories one walk looks at: the walk is synchronous, and a huge tree must not stall the process. */
const WALK_LIMIT = 200_000

/**
 * Where the hidden entries that are not at their path any more are now, inside `roots`: a directory renamed by a
 * command or by the host (`mv ~/.config ~/.config.x`) keeps its identity (device, inode, birth time), so the roots are walked for it
 * (rarely: once when it goes missing, then at most every RELOOK_MS while it is not found; a found one is checked by
 * one stat). A deleted one is never found again. Returns the ones found, with the path they were seen at.
 */
export function relocated(
  identities: ReadonlyMap<string, string>,
  moved: Map<string, Moved>,
  roots: readonly string[],
  now: number,
): { path: string; seenAt: string }[] {
  const missing = new Map<string, string>()
  for (const [id, seenAt] of identities) {
    const here = statSync(seenAt, { throwIfNoEntry: false })
    if (here && identity(here) === id) {
      moved.delete(id)
      continue
    }
    const known = moved.get(id)
    if (known?.path !== undefined) {
      const there = lstatSync(known.path, { throwIfNoEntry: false })
      if (there && identity(there) === id) continue
    } else if (known && now - known.at < RELOOK_MS) continue
    missing.set(id, seenAt)
  }
  if (missing.size > 0) {
    const found = walkFor(new Set(missing.keys()), roots)
    for (const [id, seenAt] of missing) moved.set(id, { path: found.get(id), seenAt, at: now })
  }
  const out: { path: string; seenAt: string }[] = []
  for (const entry of moved.values()) if (entry.path !== undefined) out.push({ path: entry.path, seenAt: entry.seenAt })
  return out
}

/** Breadth-first over the directories of `roots` (links not followed), looking for the identities in `wanted`. */
function walkFor(wanted: Set<string>, roots: readonly string[]): Map<string, string> {
  const found = new Map<string, string>()
  const queue = [...roots]
  for (let next = 0; next < queue.length && next < WALK_LIMIT && found.size < wanted.size; next++) {
    const dir = queue[next]!
    let entries
    try {
      entries = readdirSync(dir, { withFileTypes: true })
    } catch {
      continue
    }
    for (const entry of entries) {
      const path = join(dir, entry.name)
      if (!entry.isDirectory() && !entry.isFile()) continue
      const stats = lstatSync(path, { throwIfNoEntry: false })
      if (!stats) continue
      const id = identity(stats)
      if (wanted.has(id)) found.set(id, path)
      else if (entry.isDirectory()) queue.push(path)
    }
  }
  return found
}
