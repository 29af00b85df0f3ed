import { constants } from 'node:os'
import { procPids, procStat, runningState } from '@deepseek-ai/dsh-subprocess'

/** Sends `signal` to every process of group `pgid`; a group that is already gone is not an error. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal)
  } catch {
    // ESRCH: nobody left; EPERM: only processes we may not signal are left (not ours to stop).
  }
}

/** `process.kill` without the exception: Node's binding under it, which returns 0 or a negative errno. */
const rawKill = (process as unknown as { _kill?: unknown })._kill
const ESRCH = -constants.errno.ESRCH
const EPERM = -constants.errno.EPERM

/**
 * `kill(pid, 0)`: undefined when the target exists, else the error code. The expected "gone" answer (ESRCH) comes
 * from `process.kill` as an exception, which costs more than the system call itself at every leader's exit; Node's
 * binding under it answers with a number. If that binding is missing or answers something else, `process.kill`
 * decides (with its stack trace skipped).
 */
function probe(pid: number): string | undefined {
  if (typeof rawKill === 'function') {
    const result: unknown = rawKill.call(process, pid, 0)
    if (result === 0) return undefined
    if (result === ESRCH) return 'ESRCH'
    if (result === EPERM) return 'EPERM'
  }
  const limit = Error.stackTraceLimit
  Error.stackTraceLimit = 0
  try {
    process.kill(pid, 0)
    return undefined
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? 'UNKNOWN'
  } finally {
    Error.stackTraceLimit = limit
  }
}

const hasProc = procStat(process.pid) !== undefined

/**
 * Tells whether any process of a group still runs. `kill(-pgid, 0)` answers for the whole group, but counts
 * zombies: an orphan whose new parent never reaps it (some container init processes) would keep a dead group
 * "alive" forever. So on Linux a positive answer is confirmed through /proc, and a running member found there
 * is remembered so that the next poll costs one file read instead of a scan.
 */
export class GroupWatch {
  private member: number | undefined

  constructor(readonly pgid: number) {}

  alive(): boolean {
    const failure = probe(-this.pgid)
    if (failure !== undefined) return failure === 'EPERM'
    if (!hasProc) return true
    if (this.member !== undefined) {
      const s = procStat(this.member)
      if (s && s.pgrp === this.pgid && runningState(s.state)) return true
      this.member = undefined
    }
    const pids = procPids()
    if (!pids) return true
    for (const pid of pids) {
      const s = procStat(pid)
      if (s && s.pgrp === this.pgid && runningState(s.state)) {
        this.member = pid
        return true
      }
    }
    return false
  }
}
