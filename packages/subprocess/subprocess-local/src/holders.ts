import { readdirSync, readFileSync, readlinkSync, statSync, type Stats } from 'node:fs'
import type { Readable } from 'node:stream'
import { type OutputHolder, procPids } from '@deepseek-ai/dsh-subprocess'

/** Longest command line shown for a holder. */
const MAX_COMMAND = 200

/** What our end of `stream` refers to (`socket:[123]`), or undefined (closed, not a socket, no /proc). */
export function ourEnd(stream: Readable): string | undefined {
  // Node keeps the descriptor on the stream's native handle; there is no public accessor for it.
  const fd = (stream as unknown as { _handle?: { fd?: unknown } | null })._handle?.fd
  if (typeof fd !== 'number' || fd < 0) return undefined
  return endOf(process.pid, fd)
}

/**
 * The other end of a socket pair whose one end is `end`, as the kernel almost always numbers them: the pair is made
 * by one call, whose two inodes are consecutive (libuv keeps the first for the parent) unless the inode counter
 * crossed a per-CPU batch in between. A guess, so only trusted where a child's stdout or stderr would be.
 */
export function likelyPeer(end: string): string | undefined {
  const match = /^socket:\[(\d+)\]$/.exec(end)
  return match ? `socket:[${Number(match[1]) + 1}]` : undefined
}

/**
 * What the child's descriptor `fd` refers to (`socket:[123]`, `pipe:[456]`, as `readlink` shows it), read right after
 * the spawn: Node's stdio pipes are socket pairs, whose two ends have different inodes, so the child's end can only be
 * learnt from the child. Undefined when it is already gone (a child that exits within microseconds), when there is no
 * /proc, or when the descriptor is no socket or pipe (then it is not ours). A `stat` through the link rather than a
 * `readlink`: it answers a missing entry without an exception, which costs more than the system call.
 */
export function endOf(pid: number, fd: number): string | undefined {
  let stats: Stats | undefined
  try {
    stats = statSync(`/proc/${pid}/fd/${fd}`, { throwIfNoEntry: false })
  } catch {
    return undefined
  }
  if (stats?.isSocket()) return `socket:[${stats.ino}]`
  if (stats?.isFIFO()) return `pipe:[${stats.ino}]`
  return undefined
}

/**
 * The processes other than this one that hold one of `ends` open, found by reading every /proc/<pid>/fd link
 * (processes of other users are unreadable and skipped: they cannot hold our pipes unless handed them). Costly on
 * a busy machine, so only used when a stream does not end after its group is gone.
 */
export function holdersOf(ends: ReadonlySet<string>, guesses: ReadonlySet<string> = new Set()): OutputHolder[] {
  if (ends.size === 0 && guesses.size === 0) return []
  const holders: OutputHolder[] = []
  const pids = procPids()
  if (!pids) return holders
  for (const pid of pids) {
    if (pid === process.pid) continue
    const entry = String(pid)
    let fds: string[]
    try {
      fds = readdirSync(`/proc/${entry}/fd`)
    } catch {
      continue
    }
    const holds = fds.some((fd) => {
      try {
        const link = readlinkSync(`/proc/${entry}/fd/${fd}`)
        return ends.has(link) || ((fd === '1' || fd === '2') && guesses.has(link))
      } catch {
        return false
      }
    })
    if (holds) holders.push({ pid: Number(entry), command: commandLine(entry) })
  }
  return holders
}

function commandLine(pid: string): string {
  let text: string
  try {
    text = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
  } catch {
    return ''
  }
  const line = text
    .split('\0')
    .filter((part) => part !== '')
    .join(' ')
  return line.length > MAX_COMMAND ? `${line.slice(0, MAX_COMMAND)}…` : line
}
