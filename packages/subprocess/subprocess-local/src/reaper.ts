import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import type { Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { resolveTrusted } from '@deepseek-ai/dsh-subprocess'

/**
 * The variable every spawned process gets, and its descendants inherit whatever group or session they move to
 * (`setsid`, a double fork, `nohup`): `<provider token>.<spawn number>`. A process that leaves its process group
 * keeps it, so a stop, disposal and the reaper below find it in /proc/<pid>/environ
 * (docs/decisions/2026-12-04-local-reaper.md).
 */
export const MARK = 'DSH_TREE'

/** Longest pause between two looks for marked processes, in ms. */
const MAX_POLL_MS = 100
/** Looks after the SIGKILL before giving up on a process that does not die (one in uninterruptible sleep). */
const KILL_LOOKS = 100

/**
 * The shell that outlives dsh: it blocks reading a pipe whose only writer is dsh, so it reads EOF exactly when dsh is
 * gone (a SIGKILL too), then SIGKILLs every process whose environment carries this provider's token, again until none
 * is left (a process may fork while the others die). `$1` grep, `$2` the token.
 */
const REAPER =
  'read -r _; n=0; while [ "$n" -lt 50 ]; do ' +
  'p=$("$1" -laszE -e "^DSH_TREE=$2[.]" /proc/[0-9]*/environ 2>/dev/null); [ -z "$p" ] && exit 0; ' +
  'for f in $p; do f=${f#/proc/}; kill -KILL "${f%/environ}" 2>/dev/null; done; n=$((n + 1)); done'

/** What to look for: `MARK=<value>` as a whole entry (`exact`), or as its start. */
function needle(value: string, exact: boolean): Buffer {
  return Buffer.from(`${MARK}=${value}${exact ? '\0' : ''}`, 'latin1')
}

/** Pids other than this process whose environment holds `wanted` at the start of an entry. */
function marked(wanted: Buffer): number[] {
  const pids: number[] = []
  let entries: string[]
  try {
    entries = readdirSync('/proc')
  } catch {
    return pids
  }
  for (const entry of entries) {
    const code = entry.charCodeAt(0)
    if (code < 48 || code > 57 || Number(entry) === process.pid) continue
    let env: Buffer
    try {
      env = readFileSync(`/proc/${entry}/environ`)
    } catch {
      continue // gone meanwhile, or another user's
    }
    for (let at = env.indexOf(wanted); at >= 0; at = env.indexOf(wanted, at + 1)) {
      if (at === 0 || env[at - 1] === 0) {
        pids.push(Number(entry))
        break
      }
    }
  }
  return pids
}

/** Sends `signal` to every marked process; how many there were. */
function signalMarked(wanted: Buffer, signal: NodeJS.Signals): number {
  const pids = marked(wanted)
  for (const pid of pids) {
    try {
      process.kill(pid, signal)
    } catch {
      // gone meanwhile
    }
  }
  return pids.length
}

/**
 * Stops every marked process: SIGTERM, up to `graceMs` for them to go, then SIGKILL (again at every look: a process
 * may fork while it dies). Resolves when none is left, or after KILL_LOOKS looks past the SIGKILL.
 */
async function stopMarked(wanted: Buffer, graceMs: number): Promise<void> {
  if (signalMarked(wanted, 'SIGTERM') === 0) return
  const killAt = Date.now() + graceMs
  let delay = 1
  for (let looks = 0; looks < KILL_LOOKS; ) {
    await sleep(delay)
    delay = Math.min(delay * 2, MAX_POLL_MS)
    if (Date.now() < killAt) {
      if (marked(wanted).length === 0) return
    } else {
      if (signalMarked(wanted, 'SIGKILL') === 0) return
      looks++
    }
  }
}

/** One spawn's mark: the value its process gets, and how to stop whatever carries it. */
export class Mark {
  private readonly wanted: Buffer

  constructor(readonly value: string) {
    this.wanted = needle(value, true)
  }

  /** Whether a process with this mark still runs (a /proc scan). */
  any(): boolean {
    return marked(this.wanted).length > 0
  }

  signal(signal: NodeJS.Signals): number {
    return signalMarked(this.wanted, signal)
  }

  stop(graceMs: number): Promise<void> {
    return stopMarked(this.wanted, graceMs)
  }
}

/**
 * A provider's marks, and the reaper that kills what carries them when dsh dies without running a line more
 * (SIGKILL, a crash of the runtime). The reaper starts with the first mark; without a trusted `sh` and `grep` there
 * is none, and only a host that exits through Node (the exit hook) or disposes reaps.
 */
export class Reaper {
  private readonly token = randomBytes(8).toString('hex')
  private readonly all = needle(`${this.token}.`, false)
  private spawned = 0
  private reaper: { pid: number | undefined; stdin: Socket } | undefined
  private started = false

  /** The mark of the next spawn. */
  next(): Mark {
    if (!this.started) this.start()
    return new Mark(`${this.token}.${++this.spawned}`)
  }

  /** At host exit: SIGKILL every marked process, synchronously. */
  killAll(): void {
    signalMarked(this.all, 'SIGKILL')
  }

  /** Disposal: stops every marked process (SIGTERM, `graceMs`, SIGKILL), then lets the reaper go. */
  async close(graceMs: number): Promise<void> {
    await stopMarked(this.all, graceMs)
    this.reaper?.stdin.end()
    this.reaper = undefined
  }

  private start(): void {
    this.started = true
    const sh = resolveTrusted('sh')
    const grep = resolveTrusted('grep')
    if (!('path' in sh) || !('path' in grep)) return
    try {
      const child = spawn(sh.path, ['-c', REAPER, 'sh', grep.path, this.token], {
        cwd: '/',
        env: { PATH: '/usr/bin:/bin' },
        stdio: ['pipe', 'ignore', 'ignore'],
        detached: true,
      })
      child.on('error', () => {})
      const stdin = child.stdin as Socket
      stdin.on('error', () => {})
      // Neither the reaper nor its pipe keeps dsh alive: it is for when dsh is gone.
      child.unref()
      stdin.unref()
      this.reaper = { pid: child.pid, stdin }
    } catch {
      // No reaper: disposal and the exit hook still reap.
    }
  }
}
