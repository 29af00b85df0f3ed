import type { Dirent, Stats } from 'node:fs'
import { lstat, readdir, readlink, stat } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileKind } from '@deepseek-ai/dsh-text'
import { errorPath } from './common-text.ts'
import { displayPath, VCS_DIRS } from './paths.ts'

/*
 * When ripgrep runs out of memory during a grep, the usual cause is an ignore file it cannot use: one that is not a
 * regular file (a link to /dev/zero is read without end) or one too large to compile (a megabyte of `**` rules).
 * ripgrep reads them whatever they are — in the directories above the search path too, even with
 * --no-ignore-parent — and has no flag to skip one file, only whole kinds: --no-ignore-dot skips every .ignore and
 * .rgignore, which is safe (they are rare, and skipping one only widens the search); --no-ignore-vcs would skip every
 * .gitignore and flood the search with dependency and build trees, so a .gitignore is named in an error instead. The
 * tool looks for culprits only after such a failure: a search that succeeds pays nothing
 * (docs/decisions/2026-12-02-search-at-scale.md).
 */

/** The ignore files ripgrep reads in every directory it walks, and in every directory above the search path. */
const IGNORE_NAMES = ['.gitignore', '.ignore', '.rgignore'] as const
/** An ignore file larger than this is taken for the culprit (real ones are a few kilobytes). */
export const HUGE_IGNORE_BYTES = 256 * 1024
/** Directories below the search path looked at, at most: the look is a diagnosis, not a second search. */
const MAX_DIRECTORIES = 20_000

export interface HostileIgnoreFile {
  /** Absolute. */
  readonly path: string
  /** Why ripgrep cannot use it, in the model's terms: `not a regular file (…)` or `… bytes, too large to compile`. */
  readonly why: string
  readonly tooLarge: boolean
  /** A .ignore or .rgignore: ripgrep can be told to skip them all (--no-ignore-dot). */
  readonly skippable: boolean
}

/**
 * The ignore files ripgrep cannot use for a grep of the directory `root`, those it cannot skip first: in the root and
 * below it (breadth first, version-control directories left out, at most MAX_DIRECTORIES), and in the directories
 * above it.
 */
export async function hostileIgnoreFiles(root: string): Promise<HostileIgnoreFile[]> {
  const found: HostileIgnoreFile[] = []
  const queue = [root]
  for (let i = 0; i < queue.length && i < MAX_DIRECTORIES; i++) {
    const dir = queue[i] as string
    let entries: Dirent[]
    try {
      entries = await readdir(dir, { withFileTypes: true })
    } catch {
      continue
    }
    for (const entry of entries) {
      if (entry.isDirectory() && !(VCS_DIRS as readonly string[]).includes(entry.name))
        queue.push(join(dir, entry.name))
      else if ((IGNORE_NAMES as readonly string[]).includes(entry.name))
        await judge(join(dir, entry.name), entry.name, found)
    }
  }
  for (let dir = dirname(root); ; dir = dirname(dir)) {
    for (const name of IGNORE_NAMES) await judge(join(dir, name), name, found)
    if (dirname(dir) === dir) break
  }
  return found.sort((a, b) => Number(a.skippable) - Number(b.skippable))
}

async function judge(path: string, name: string, found: HostileIgnoreFile[]): Promise<void> {
  const skippable = name !== '.gitignore'
  let own: Stats
  let target: Stats
  try {
    own = await lstat(path)
    target = own.isSymbolicLink() ? await stat(path) : own
  } catch {
    return
  }
  if (!target.isFile()) {
    const link = own.isSymbolicLink() ? `a symbolic link to ${await readlink(path).catch(() => '?')}, ` : ''
    found.push({ path, why: `not a regular file: ${link}${fileKind(target)}`, tooLarge: false, skippable })
  } else if (target.size > HUGE_IGNORE_BYTES) {
    found.push({ path, why: `${target.size} bytes, too large to compile`, tooLarge: true, skippable })
  }
}

/** The error for an ignore file ripgrep cannot use, which it cannot be told to skip: what it is, and what to do. */
export function ignoreFileMessage(file: HostileIgnoreFile, cwd: string): string {
  const shown = errorPath(displayPath(cwd, file.path))
  const fix = file.tooLarge ? 'Shorten it or remove it' : 'Remove it or replace it with a regular file'
  return `grep search failed: ripgrep ran out of memory reading the ignore file ${shown} (${file.why}); ripgrep reads every .gitignore in the directories it searches and above them, and cannot be told to skip one. ${fix}, or search a path that neither contains it nor lies below its directory.`
}
