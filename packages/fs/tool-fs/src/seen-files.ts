import type { ToolSession } from '@deepseek-ai/dsh-tools'
import { createHash } from 'node:crypto'
import { constants, type Stats } from 'node:fs'
import { open } from 'node:fs/promises'
import { setImmediate as turn, setTimeout as sleep } from 'node:timers/promises'
import { rowsOf, type StaleFacts } from './change-text.ts'

/*
 * "Seen before changed" (docs/model-surface.md#tools): per session, what it last saw of each file (read, written or edited), judged by
 * content. An identity (dev, ino, size, mtime, ctime) recorded once the file's timestamps are settled means unchanged
 * bytes while it stays the same, so the common case hashes nothing; when it moved (a touch, a rewrite, someone
 * else's edit) or was recorded within a timestamp tick of a write (the "racy" case: a second write in the same tick
 * would not show), the bytes decide — compared with the copy the session holds (small files, or a large one until
 * it is settled and digested), else with a SHA-256 of what it saw. Hashing and settling run after the call, so
 * neither read nor edit waits for them (docs/decisions/2026-12-02-write-and-edit.md).
 */

export interface GuardLimits {
  /** Files remembered per session; the least recently seen is forgotten past this (then it must be read again). */
  readonly maxFiles: number
  /** A file up to this size is kept as a copy (for "what changed"); larger ones as a digest once settled. */
  readonly keepBytes: number
  /** Most bytes of copies per session; past it the oldest copies become digests. */
  readonly keepTotal: number
  /** A file read only in part is completed (read whole and digested, after the call) up to this size. */
  readonly completeBytes: number
  /** A file's identity is trusted once its ctime is this much older than the clock (coarse timestamps, skew). */
  readonly settleMs: number
}

export const GUARD_LIMITS: GuardLimits = {
  maxFiles: 4096,
  keepBytes: 256 * 1024,
  keepTotal: 16 * 1024 * 1024,
  completeBytes: 16 * 1024 * 1024,
  settleMs: 1000,
}

/** Bytes hashed per turn of the event loop (a turn stays under a few milliseconds). */
const SLICE = 256 * 1024

interface Identity {
  readonly dev: number
  readonly ino: number
  readonly size: number
  readonly mtimeMs: number
  readonly ctimeMs: number
}

const identityOf = (stats: Stats): Identity => ({
  dev: stats.dev,
  ino: stats.ino,
  size: stats.size,
  mtimeMs: stats.mtimeMs,
  ctimeMs: stats.ctimeMs,
})
const sameIdentity = (a: Identity, b: Identity) =>
  a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs

interface Seen {
  identity: Identity
  /** The identity alone proves the bytes unchanged (it was recorded after the file's last tick). */
  trusted: boolean
  /** What the session saw, while held: always for a small file; for a larger one until settled and digested. */
  bytes: Buffer | undefined
  digest: string | undefined
  /** The start of a file read in part within its last tick (what the read streamed, at most PREFIX_BYTES). */
  prefix: Buffer | undefined
  /** Settling or digesting under way. */
  pending: Promise<void> | undefined
}

/** Most bytes of a recently written file's start kept from a read that saw it in part. */
const PREFIX_BYTES = 1024 * 1024

export type Verdict =
  | { readonly kind: 'fresh' }
  | { readonly kind: 'not-read' }
  | { readonly kind: 'stale'; readonly facts: StaleFacts }

/** What a read tells the guard while it streams the file. */
export interface ReadObserver {
  /** The real path of the opened descriptor and its fstat. */
  opened(real: string, stats: Stats): void
  chunk(bytes: Buffer): void
}

/** What one session has seen (the session keeps it: `observationsOf`). */
export class Observations {
  /** Real path → what the session saw there, least recently seen first. */
  private readonly seen = new Map<string, Seen>()
  /** Bytes of the copies held. */
  private kept = 0
  private readonly work = new Set<Promise<void>>()
  /** Background reads of whole files run one at a time (each holds a file in memory). */
  private queue: Promise<void> = Promise.resolve()

  constructor(private readonly limits: GuardLimits = GUARD_LIMITS) {}

  /** Resolves once no settling or digest is under way (tests, benches). */
  async settled(): Promise<void> {
    while (this.work.size) await awaitHeld(Promise.all([...this.work]))
  }

  /**
   * Follows one read. At `done` the session has seen the file: its identity now, the bytes after the call (read
   * again, the same identity before and after); only a file written within the last tick has its bytes gathered
   * from the read itself.
   */
  observeRead(): ReadObserver & { done(): void } {
    let identity: Identity | undefined
    let real: string | undefined
    let chunks: Buffer[] | undefined
    let length = 0
    let limit = 0
    return {
      opened: (opened, stats) => {
        identity = identityOf(stats)
        real = opened
        const known = this.seen.get(opened)
        if (known?.trusted && sameIdentity(known.identity, identity)) return // seen as it is
        // A settled file gathers nothing: its identity holds until it moves, and its copy or digest is taken after
        // the call (a copy here would cost read more than its 5 %). A file written within the last tick may change
        // again unseen, so what read streams of it is kept now: all of a small one, the start of a larger one.
        if (this.isSettled(identity)) return
        limit = stats.size <= this.limits.keepBytes ? this.limits.keepBytes : PREFIX_BYTES
        chunks = []
      },
      chunk: (bytes) => {
        if (!chunks || length >= limit) return
        const kept = Buffer.from(bytes.subarray(0, limit - length)) // a copy: read reuses its buffer
        chunks.push(kept)
        length += kept.length
      },
      done: () => {
        if (!identity || real === undefined) return
        const known = this.seen.get(real)
        if (known?.trusted && sameIdentity(known.identity, identity)) {
          this.put(real, known) // seen again, unchanged: nothing to redo
          return
        }
        const prefix = chunks && (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, length))
        // A page of a file is a sight of the file: when its first chunks held every byte, the copy is whole.
        if (prefix && prefix.length === identity.size) this.record(real, identity, prefix)
        else this.recordPart(real, identity, prefix)
      },
    }
  }

  /** The session wrote (or found) these bytes at `real`, with this fstat. */
  recordBytes(real: string, stats: Stats, bytes: Buffer): void {
    this.record(real, identityOf(stats), bytes)
  }

  /**
   * May the session replace the file whose current state is `stats` + `bytes`? Fresh when it saw exactly these
   * bytes: by a trusted identity, else by content. Then the record follows the file (a touch is absorbed).
   */
  async check(real: string, stats: Stats, bytes: Buffer): Promise<Verdict> {
    const seen = this.seen.get(real)
    if (!seen) return { kind: 'not-read' }
    const now = identityOf(stats)
    if (seen.trusted && sameIdentity(seen.identity, now)) return { kind: 'fresh' }
    // Settling or digesting may still hold the answer: wait for it only when nothing else can tell.
    if (!seen.bytes && seen.digest === undefined && !seen.prefix && seen.pending) await awaitHeld(seen.pending)
    let same: boolean | undefined // undefined: nothing held can tell
    if (seen.bytes) same = seen.bytes.equals(bytes)
    else if (seen.digest !== undefined) same = seen.digest === createHash('sha256').update(bytes).digest('hex')
    else if (seen.prefix && sameIdentity(seen.identity, now))
      same = bytes.subarray(0, seen.prefix.length).equals(seen.prefix)
    if (same) {
      seen.identity = now
      seen.trusted = this.isSettled(now)
      return { kind: 'fresh' }
    }
    if (seen.bytes) return { kind: 'stale', facts: whatChanged(seen.bytes, bytes) }
    if (same === false || seen.identity.size !== bytes.length)
      return { kind: 'stale', facts: { kind: 'size', before: seen.identity.size, after: bytes.length } }
    return { kind: 'stale', facts: { kind: 'modified' } }
  }

  private isSettled(identity: Identity): boolean {
    return Date.now() - Math.max(identity.ctimeMs, identity.mtimeMs) > this.limits.settleMs
  }

  private current(real: string, seen: Seen): boolean {
    return this.seen.get(real) === seen
  }

  private put(real: string, seen: Seen): void {
    const files = this.seen
    this.drop(files, real)
    files.set(real, seen) // last in the map = most recently seen
    if (seen.bytes && seen.bytes.length <= this.limits.keepBytes) this.kept += seen.bytes.length
    while (files.size > this.limits.maxFiles) this.drop(files, files.keys().next().value!)
  }

  private drop(files: Map<string, Seen>, real: string): void {
    const old = files.get(real)
    if (!old) return
    files.delete(real)
    if (old.bytes && old.bytes.length <= this.limits.keepBytes) this.kept -= old.bytes.length
  }

  /** Whole bytes seen: a small file keeps its copy; a larger one is settled, digested and let go, after the call. */
  private record(real: string, identity: Identity, bytes: Buffer): void {
    const seen: Seen = {
      identity,
      trusted: this.isSettled(identity),
      bytes,
      digest: undefined,
      prefix: undefined,
      pending: undefined,
    }
    this.put(real, seen)
    const small = bytes.length <= this.limits.keepBytes
    if (small) this.trimCopies()
    if (small && seen.trusted) return
    this.later(seen, async () => {
      if (!seen.trusted) {
        await this.settle(identity)
        if (!this.current(real, seen)) return
        // Past the tick: if the file still has these bytes, no later change can keep the identity.
        const now = await this.queued(() => readIfSame(real, identity))
        if (now?.equals(bytes)) seen.trusted = true
      }
      if (!small && this.current(real, seen)) {
        seen.digest = await digest(bytes)
        seen.bytes = undefined
      }
    })
  }

  /**
   * A read of a settled file, or one that stopped before the end: the identity now. After the call, a recently
   * written file is trusted once settled if it still starts with what the read streamed, and a file up to
   * completeBytes is read whole, kept (small) or digested, so that a touch is told from a change.
   */
  private recordPart(real: string, identity: Identity, prefix: Buffer | undefined): void {
    const trusted = this.isSettled(identity)
    const seen: Seen = {
      identity,
      trusted,
      bytes: undefined,
      digest: undefined,
      prefix: trusted ? undefined : prefix,
      pending: undefined,
    }
    this.put(real, seen)
    const whole = identity.size <= this.limits.completeBytes
    if (trusted ? !whole : !prefix) return
    this.later(seen, async () => {
      if (!seen.trusted) {
        await this.settle(identity)
        if (!this.current(real, seen) || !prefix) return
        const start = await this.queued(() => readIfSame(real, identity, prefix.length))
        if (!start?.equals(prefix)) return
        seen.trusted = true
        seen.prefix = undefined
      }
      if (!whole || !this.current(real, seen)) return
      const bytes = await this.queued(() => readIfSame(real, identity))
      if (!bytes || !this.current(real, seen)) return
      if (bytes.length <= this.limits.keepBytes) this.keep(seen, bytes)
      else seen.digest = await digest(bytes)
    })
  }

  /** A small file's copy, counted against the session's budget. */
  private keep(seen: Seen, bytes: Buffer): void {
    seen.bytes = bytes
    this.kept += bytes.length
    this.trimCopies()
  }

  private later(seen: Seen, job: () => Promise<void>): void {
    const running: Promise<void> = job()
      .catch(() => {})
      .finally(() => {
        if (seen.pending === running) seen.pending = undefined
        this.work.delete(running)
      })
    seen.pending = running
    this.work.add(running)
  }

  private queued<T>(job: () => Promise<T>): Promise<T> {
    const result = this.queue.then(job)
    this.queue = result.then(
      () => {},
      () => {},
    )
    return result
  }

  /** Waits until the clock is past the file's last tick by the margin. */
  private async settle(identity: Identity): Promise<void> {
    const wait = Math.max(identity.ctimeMs, identity.mtimeMs) + this.limits.settleMs + 1 - Date.now()
    if (wait > 0) await sleep(wait, undefined, { ref: false })
  }

  /** Past the session's copy budget, its oldest copies give way to digests. */
  private trimCopies(): void {
    for (const seen of this.seen.values()) {
      if (this.kept <= this.limits.keepTotal) return
      if (!seen.bytes || seen.bytes.length > this.limits.keepBytes) continue
      this.kept -= seen.bytes.length
      seen.digest = createHash('sha256').update(seen.bytes).digest('hex')
      seen.bytes = undefined
    }
  }
}

/**
 * Awaits background work, keeping the process alive meanwhile: its timers are unref'd (a process that is done must
 * not wait for the guard), so a call that waits on one must hold the event loop itself.
 */
async function awaitHeld(work: Promise<unknown>): Promise<void> {
  const hold = setInterval(() => {}, 60_000)
  try {
    await work
  } finally {
    clearInterval(hold)
  }
}

/** SHA-256 of `bytes`, a slice per turn of the event loop. */
async function digest(bytes: Buffer): Promise<string> {
  const hash = createHash('sha256')
  for (let at = 0; at < bytes.length; at += SLICE) {
    await turn()
    hash.update(bytes.subarray(at, at + SLICE))
  }
  return hash.digest('hex')
}

/** The file's first `length` bytes (all of it by default), if it is still the one with `identity` before and after. */
async function readIfSame(real: string, identity: Identity, length = identity.size): Promise<Buffer | undefined> {
  const handle = await open(real, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY | constants.O_NOFOLLOW)
  try {
    if (!sameIdentity(identityOf(await handle.stat()), identity)) return undefined
    const bytes = Buffer.allocUnsafe(length)
    let at = 0
    while (at < bytes.length) {
      const { bytesRead } = await handle.read(bytes, at, bytes.length - at, at)
      if (bytesRead === 0) return undefined
      at += bytesRead
    }
    return sameIdentity(identityOf(await handle.stat()), identity) ? bytes : undefined
  } finally {
    await handle.close()
  }
}

/** Most rows a stale message shows of what changed. */
const STALE_ROWS = 12
const STALE_LINE_CHARS = 200

/** The first region where `now` differs from `before`, by lines (common head and tail), as rows of `now`. */
export function whatChanged(before: Buffer, now: Buffer): StaleFacts {
  const a = before.toString('utf8').split('\n')
  const b = now.toString('utf8').split('\n')
  let head = 0
  while (head < a.length && head < b.length && a[head] === b[head]) head++
  let tail = 0
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++
  const added = b.length - head - tail
  const removed = a.length - head - tail
  if (added <= 0 && removed <= 0) return { kind: 'size', before: before.length, after: now.length }
  const shown = Math.max(0, Math.min(added, STALE_ROWS))
  const lines = b.slice(head, head + shown).map((line) => line.replace(/\r$/, ''))
  return {
    kind: 'region',
    firstLine: head + 1,
    removed,
    rows: rowsOf({ firstLine: head + 1, lines }, STALE_LINE_CHARS),
    more: added > shown,
  }
}

/** The seen files of a session, kept in it (gone with it); `unsessioned` serves callers without a session. */
export function seenBy(unsessioned: Observations): (session: ToolSession | undefined) => Observations {
  const key = Symbol('dsh.tool-fs.seen')
  return (session) => (session === undefined ? unsessioned : session.slot(key, () => new Observations()))
}
