import type { Dirent, Stats } from 'node:fs'
import { lstat, readdir, readlink, stat } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileKind } from '@deepseek-ai/dsh-text'
import { displayPath, VCS_DIRS } from './paths.ts'

/*
 * When ripgrep runs out of memory during a grep, the usual cause is an ignore file it cannot use: one that is not a
 * regular file (a link to /dev/zero is read without end) or one too large to compile (a megabyte of `**` rules).
 * ripgrep reads them whatever they are — in the directories above the search path too, even with
 * --no-ignore-parent — and has no flag to skip one file, only whole kinds. So the search runs again around them
 * (retryPlan) and the answer names each file whose rules were left out. The tool looks for culprits only after such
 * a failure: a search that succeeds pays nothing (docs/decisions/2026-12-02-search-at-scale.md).
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
  /** What it is, for a sentence: `a symbolic link to /dev/zero (a character device)`, `… bytes, too large to compile`. */
  readonly what: string
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
    const kind = fileKind(target)
    const to = own.isSymbolicLink() ? await readlink(path).catch(() => '?') : undefined
    const link = to === undefined ? '' : `a symbolic link to ${to}, `
    const what = to === undefined ? kind : `a symbolic link to ${to} (${kind})`
    found.push({ path, why: `not a regular file: ${link}${kind}`, what, tooLarge: false, skippable })
  } else if (target.size > HUGE_IGNORE_BYTES) {
    const why = `${target.size} bytes, too large to compile`
    found.push({ path, why, what: why, tooLarge: true, skippable })
  }
}

/** One more ripgrep run of a grep that ripgrep could not finish because of ignore files it cannot use. */
export interface RetryRun {
  /** What ripgrep searches, as it prints it (`.` or `./<dir below the root>`). */
  readonly path: string
  /** Extra flags: which rules to leave out, which directories the other run searches. */
  readonly flags: readonly string[]
}

/**
 * How to search `root` again without the rules of the `hostile` ignore files, and what to say about each: ripgrep
 * cannot skip one file, only kinds of them. Every .ignore/.rgignore is left out (--no-ignore-dot: they are rare, and
 * leaving one out only widens the search). A .gitignore in a directory D below the root: D is left out of the main
 * run (so ripgrep never reads that file) and searched in a run of its own without .gitignore rules (so what the other
 * .gitignore files hide stays hidden everywhere else). A .gitignore in the root or above it: one run without any
 * .gitignore rules.
 */
export function retryPlan(
  hostile: readonly HostileIgnoreFile[],
  root: string,
  cwd: string,
): { runs: RetryRun[]; notes: string[] } {
  const dot = hostile.some((file) => file.skippable) ? ['--no-ignore-dot'] : []
  const shown = (path: string) => displayPath(cwd, path) || '.'
  const vcs = hostile.filter((file) => !file.skippable)
  const below = (file: HostileIgnoreFile) => dirname(file.path).startsWith(`${root}/`)
  const notes = hostile.map((file) =>
    file.skippable
      ? `${shown(file.path)} is ${file.what}: its rules were not applied, nor those of any other .ignore or .rgignore`
      : below(file)
        ? `${shown(file.path)} is ${file.what}: its rules were not applied, and no .gitignore rules were applied within ${shown(dirname(file.path))}/`
        : `${shown(file.path)} is ${file.what}: its rules were not applied, nor those of any other .gitignore`,
  )
  if (vcs.some((file) => !below(file))) return { runs: [{ path: '.', flags: [...dot, '--no-ignore-vcs'] }], notes }
  // The outermost directories of the .gitignore files below the root (one inside another is searched with it).
  const dirs = [...new Set(vcs.map((file) => dirname(file.path)))]
    .sort()
    .filter((dir, i, all) => !all.slice(0, i).some((outer) => dir.startsWith(`${outer}/`)))
  const rel = dirs.map((dir) => dir.slice(root.length + 1))
  return {
    runs: [
      { path: '.', flags: [...dot, ...rel.map((dir) => `--glob=!/${escapeGlob(dir)}/`)] },
      ...rel.map((dir) => ({ path: `./${dir}`, flags: [...dot, '--no-ignore-vcs'] })),
    ],
    notes,
  }
}

function escapeGlob(text: string): string {
  return text.replace(/[\\*?[\]{}!]/g, '\\$&')
}
