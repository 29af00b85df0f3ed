import { constants, fstatSync, type Stats } from 'node:fs'
import { lstat, open, readdir, rmdir, unlink } from 'node:fs/promises'
import type { Dir } from './dir.ts'

export interface PruneOptions {
  /** Entries last modified before this time (ms since the epoch) are removed. */
  before: number
  /** Only the names directly under the pruned directory that this accepts are considered (default: every name). */
  match?: (name: string) => boolean
  /** Stops between two entries. */
  signal?: AbortSignal
}

export interface PruneCount {
  files: number
  directories: number
  bytes: number
}

/** Directories nested deeper than this are left alone (ours are two levels deep). */
const MAX_DEPTH = 8

/**
 * Removes, under `dir`, every regular file of this user last modified before `options.before`, and every
 * directory of this user that is empty afterwards and was itself last modified before then. Nothing of another
 * user, no symlink (neither followed nor removed), no other kind of file is touched, and every operation goes
 * through the open descriptor of the directory it is in. A directory that others can write to and that is not
 * sticky is not pruned at all: an entry checked there could be swapped before its removal. Errors on single
 * entries skip them (an entry removed meanwhile, a file in use elsewhere); pruning is best effort.
 */
export async function prune(dir: Dir, options: PruneOptions): Promise<PruneCount> {
  const count: PruneCount = { files: 0, directories: 0, bytes: 0 }
  const mode = fstatSync(dir.fd).mode
  if (mode & 0o002 && !(mode & 0o1000)) return count
  await pruneIn(dir, options, options.match, 0, count)
  return count
}

async function pruneIn(
  dir: Dir,
  options: PruneOptions,
  match: ((name: string) => boolean) | undefined,
  depth: number,
  count: PruneCount,
): Promise<void> {
  let names: string[]
  try {
    names = await readdir(dir.self)
  } catch {
    return
  }
  const uid = process.getuid?.()
  for (const name of names) {
    if (options.signal?.aborted) return
    if (match && !match(name)) continue
    let info: Stats
    try {
      info = await lstat(dir.at(name))
    } catch {
      continue
    }
    if (uid !== undefined && info.uid !== uid) continue
    if (info.isFile()) {
      if (info.mtimeMs >= options.before) continue
      try {
        await unlink(dir.at(name))
        count.files++
        count.bytes += info.size
      } catch {
        /* removed meanwhile, or not ours to remove */
      }
    } else if (info.isDirectory() && depth < MAX_DEPTH) {
      let sub: Dir
      try {
        sub = dir.subdir(name, { create: false, tighten: false })
      } catch {
        continue
      }
      try {
        await pruneIn(sub, options, undefined, depth + 1, count)
      } finally {
        sub.close()
      }
      // The directory's own time from before its old entries went: a directory in use is recent, and kept.
      if (info.mtimeMs >= options.before || options.signal?.aborted) continue
      try {
        await rmdir(dir.at(name))
        count.directories++
      } catch {
        /* not empty (a new entry, or one that was kept), or removed meanwhile */
      }
    }
  }
}

/**
 * How often the providers prune at start-up, at most: a `dsh call` per tool call would otherwise rescan their
 * directories at every start.
 */
export const PRUNE_INTERVAL_MS = 3_600_000

/**
 * Whether `dir` is due for pruning, by its stamp file `name`: not when that is a regular file of this user modified
 * less than `intervalMs` ago. When due, the stamp is set to now first (created 0600 if missing), so that start-ups
 * in a burst prune once. A stamp that is not ours — another user's file, a symlink, anything else — is never
 * trusted, touched or followed: the directory is then due every time, as without a stamp.
 */
export async function dueForPruning(dir: Dir, name: string, intervalMs: number): Promise<boolean> {
  const path = dir.at(name)
  const uid = process.getuid?.()
  const info = await lstat(path).catch(() => undefined)
  const ours = info?.isFile() && (uid === undefined || info.uid === uid)
  if (ours && info && Date.now() - info.mtimeMs < intervalMs) return false
  if (info !== undefined && !ours) return true
  try {
    const handle = await open(
      path,
      constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK,
      0o600,
    )
    try {
      // The file opened may not be the one checked (replaced meanwhile): only a regular file of ours is stamped.
      const opened = await handle.stat()
      if (opened.isFile() && (uid === undefined || opened.uid === uid)) {
        const now = new Date()
        await handle.utimes(now, now)
      }
    } finally {
      await handle.close()
    }
  } catch {
    // No stamp (a read-only directory, a name taken by a symlink): pruning goes ahead regardless.
  }
  return true
}
