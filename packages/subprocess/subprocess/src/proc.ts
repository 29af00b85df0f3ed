import { readdirSync, readFileSync } from 'node:fs'

/** The fields of `/proc/<pid>/stat` that dsh reads. */
export interface ProcStat {
  readonly pid: number
  /** The command name, at most 15 bytes; it may hold spaces and parentheses. */
  readonly comm: string
  /** One letter: R, S, D, Z (zombie), X (dead), T, … */
  readonly state: string
  readonly ppid: number
  readonly pgrp: number
  readonly session: number
}

/** `pid`'s entry of /proc, or undefined when it does not exist (gone, or no /proc on this system). */
export function procStat(pid: number | string): ProcStat | undefined {
  let text: string
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'latin1')
  } catch {
    return undefined
  }
  // "pid (comm) S ppid pgrp session …": comm may hold ") ", so the fields start after the last ')'.
  const close = text.lastIndexOf(')')
  const fields = text.slice(close + 2).split(' ')
  return {
    pid: Number(pid),
    comm: text.slice(text.indexOf('(') + 1, close),
    state: fields[0] ?? '',
    ppid: Number(fields[1]),
    pgrp: Number(fields[2]),
    session: Number(fields[3]),
  }
}

/** The pids /proc lists now, or undefined when it cannot be listed (no /proc on this system). */
export function procPids(): number[] | undefined {
  let entries: string[]
  try {
    entries = readdirSync('/proc')
  } catch {
    return undefined
  }
  const pids: number[] = []
  for (const entry of entries) {
    const code = entry.charCodeAt(0)
    if (code >= 48 && code <= 57) pids.push(Number(entry))
  }
  return pids
}

/** A zombie (Z) or dead (X) entry no longer runs: only its parent's wait() is missing. */
export function runningState(state: string): boolean {
  return state !== 'Z' && state !== 'X'
}

const HAS_PROC = procStat(process.pid) !== undefined

/** True while `pid` exists and is not a zombie; without /proc, while `kill(pid, 0)` finds it. */
export function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false
  }
  if (!HAS_PROC) return true
  const stat = procStat(pid)
  return stat !== undefined && runningState(stat.state)
}
