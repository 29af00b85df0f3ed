import { closeSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs'

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

const VM_RSS = Buffer.from('\nVmRSS:')
const NS_PID = Buffer.from('\nNSpid:')
/** Enough for the lines read here, which come early in /proc/<pid>/status. */
export const STATUS_BYTES = 4096

/** The `VmRSS:` figure (kB) of a status text in `bytes[0..length)`, in bytes; 0 when it has none. */
export function vmRss(bytes: Buffer, length: number): number {
  return statusNumbers(bytes, length, VM_RSS)[0] ?? 0
}

/** The numbers on one line of a status text (`VmRSS:  123 kB` → [123]; `NSpid: 40 1` → [40, 1]); kB made bytes. */
function statusNumbers(bytes: Buffer, length: number, key: Buffer): number[] {
  const at = bytes.indexOf(key)
  if (at === -1 || at >= length) return []
  const numbers: number[] = []
  let i = at + key.length
  for (;;) {
    while (i < length && (bytes[i] === 0x20 || bytes[i] === 0x09)) i++
    if (i >= length || (bytes[i] as number) < 0x30 || (bytes[i] as number) > 0x39) break
    let value = 0
    for (; i < length && (bytes[i] as number) >= 0x30 && (bytes[i] as number) <= 0x39; i++)
      value = value * 10 + (bytes[i] as number) - 0x30
    numbers.push(value)
  }
  return key === VM_RSS ? numbers.map((kb) => kb * 1024) : numbers
}

/** Reads /proc/<pid>/status into `buffer`; the bytes read, 0 when the process is gone. */
function readStatus(pid: number, buffer: Buffer): number {
  let fd: number | undefined
  try {
    fd = openSync(`/proc/${pid}/status`, 'r')
    return readSync(fd, buffer, 0, STATUS_BYTES, 0)
  } catch {
    return 0
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}

/** The children of `pid` (its main thread's: the processes here do not fork from other threads). */
function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'latin1')
      .split(' ')
      .filter((child) => child.trim() !== '')
      .map(Number)
  } catch {
    return []
  }
}

/** `pid` and its descendants, breadth first, at most `limit` of them. */
function treeOf(pid: number, limit = 64): number[] {
  const queue = [pid]
  for (let i = 0; i < queue.length && queue.length < limit; i++) queue.push(...childrenOf(queue[i] as number))
  return queue.slice(0, limit)
}

/** The resident bytes of `pid`, read afresh; 0 once it is gone. */
export function residentBytes(pid: number, buffer = Buffer.allocUnsafe(STATUS_BYTES)): number {
  return vmRss(buffer, readStatus(pid, buffer))
}

/** The resident bytes of `pid` and every descendant, each read afresh; 0 once all are gone. */
export function treeResidentBytes(pid: number, buffer = Buffer.allocUnsafe(STATUS_BYTES)): number {
  let total = 0
  for (const at of treeOf(pid)) total += residentBytes(at, buffer)
  return total
}

/**
 * The host pid of the descendant of `pid` that a nested PID namespace numbers `nsPid` (the last field of its
 * `NSpid:` line), or undefined when there is none now.
 */
export function descendantByNsPid(pid: number, nsPid: number): number | undefined {
  const buffer = Buffer.allocUnsafe(STATUS_BYTES)
  for (const at of treeOf(pid)) {
    const numbers = statusNumbers(buffer, readStatus(at, buffer), NS_PID)
    if (numbers.length > 1 && numbers.at(-1) === nsPid) return at
  }
  return undefined
}
