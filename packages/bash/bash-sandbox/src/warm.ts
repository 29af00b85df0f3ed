import { Readable } from 'node:stream'
import type { ConfinedProcess, ConfineRequest } from '@deepseek-ai/dsh-confinement'
import {
  descendantByNsPid,
  type ExitStatus,
  residentBytes,
  STATUS_BYTES,
  type SubprocessHandle,
} from '@deepseek-ai/dsh-subprocess'
import { randomBytes } from 'node:crypto'

/**
 * The program of a warm sandbox, run by Node inside it. It reads one JSON request a line on stdin — `run`: start the
 * sandbox's program (fd 7) with these arguments in this directory; `kill`: signal the run — and runs one at a time.
 * The program writes its output straight to the runner's stdout, the host's pipe (no copy on the way); once it
 * ended, the runner writes the run's nonce there, which the host strips: where this run's output ends. On stderr, it
 * writes frames: a kind byte, the run's id and the payload's length (32-bit, big-endian), then the payload — 2 the
 * program's stderr, 3 `{"pid"}` once started, 4 `{"code","signal"}` or `{"error"}` once ended (after the nonce).
 * Node writes to a pipe synchronously, so the stdout the program inherits stays blocking; it exits with stdin.
 */
const RUNNER = `'use strict'
const { spawn } = require('node:child_process')
const out = process.stdout
const runs = new Map()
const frame = (kind, id, payload) => {
  const head = Buffer.allocUnsafe(9)
  head[0] = kind
  head.writeUInt32BE(id, 1)
  head.writeUInt32BE(payload.length, 5)
  process.stderr.write(Buffer.concat([head, payload]))
}
const json = (value) => Buffer.from(JSON.stringify(value))
const start = (request) => {
  const finish = (value) => {
    runs.delete(request.id)
    out.write(Buffer.from(request.nonce, 'hex'))
    frame(4, request.id, json(value))
  }
  let child
  try {
    child = spawn('/proc/self/fd/7', request.args, { cwd: request.cwd, stdio: ['ignore', 1, 'pipe'] })
  } catch (error) {
    finish({ error: String(error && error.message) })
    return
  }
  let ended = false
  runs.set(request.id, child)
  if (child.pid !== undefined) frame(3, request.id, json({ pid: child.pid }))
  child.stderr.on('data', (chunk) => frame(2, request.id, chunk))
  child.once('error', (error) => {
    if (ended || child.pid !== undefined) return
    ended = true
    finish({ error: String(error && error.message) })
  })
  child.once('close', (code, signal) => {
    if (ended) return
    ended = true
    finish({ code, signal })
  })
}
let pending = ''
process.stdin.setEncoding('utf8')
process.stdin.on('data', (text) => {
  pending += text
  for (let at = pending.indexOf('\\n'); at !== -1; at = pending.indexOf('\\n')) {
    const request = JSON.parse(pending.slice(0, at))
    pending = pending.slice(at + 1)
    if (request.op === 'run') start(request)
    else if (request.op === 'kill') runs.get(request.id)?.kill(request.signal)
  }
})
`

/** A frame's header: its kind, its run's id, its payload's length. */
const HEADER_BYTES = 9

/** The runner's argv after the launcher: Node, told to run RUNNER (its own memory kept small). */
export function runnerArgs(): string[] {
  return ['--max-old-space-size=32', '-e', RUNNER]
}

/** Bytes of the nonce that ends a run's output on the runner's stdout. */
const NONCE_BYTES = 16

/** The run in flight: its streams, the end of its output, and how it ends. */
interface Run {
  readonly id: number
  readonly stdout: Readable
  readonly stderr: Readable
  readonly nonce: Buffer
  /** The last bytes of its output read so far (up to NONCE_BYTES): shown once more follows, or dropped as the nonce. */
  held: Buffer
  /** Its end, as the runner reported it; the run ends once the nonce was read too. */
  status: ExitStatus | undefined
  nsPid: number | undefined
  hostPid: number | undefined
  failure: string | undefined
  end(status: ExitStatus): void
}

/**
 * A sandbox kept warm for one session's searches: started once with the masks of a call, it runs the program for
 * later calls whose masks are exactly those (`key`: the bubblewrap arguments and the identity of every path they
 * name), one at a time. Nothing of a call is decided inside: the caller compares the key at each call, and starts
 * a fresh sandbox when it differs or this one is busy.
 */
export class WarmSandbox {
  private current: Run | undefined
  private nextId = 1
  private readonly frames = new FrameReader(
    (id, part) => {
      if (this.current?.id === id) deliver(this.current.stderr, part)
    },
    (kind, id, text) => this.event(kind, id, text),
  )
  private ended: string | undefined
  private readonly buffer = Buffer.allocUnsafe(STATUS_BYTES)
  private idle: ReturnType<typeof setTimeout> | undefined

  constructor(
    readonly key: string,
    private readonly handle: SubprocessHandle,
    private readonly idleMs: number,
  ) {
    handle.stdout?.on('data', (chunk: Buffer) => this.output(chunk))
    handle.stderr?.on('data', (chunk: Buffer) => this.frames.push(chunk))
    // A runner that died meanwhile: `done` below ends its run; a write to it fails quietly.
    handle.stdin?.on('error', () => {})
    void handle.done.then((status) => {
      this.ended = `the warm sandbox ended (${status.signal ?? `exit ${status.exitCode}`})`
      const run = this.current
      this.current = undefined
      if (!run) return
      run.failure ??= this.ended
      run.end({ exitCode: null, signal: 'SIGKILL' })
    })
  }

  /** Whether it can take a run now: it runs, and runs nothing else. */
  get free(): boolean {
    return this.ended === undefined && this.current === undefined
  }

  /** Whether it still runs. */
  get alive(): boolean {
    return this.ended === undefined
  }

  /**
   * Starts `args` of the sandbox's program in `cwd` (as the program sees it); only when `free`. Resolves at once: a
   * run that cannot start ends with `failure` saying why.
   */
  run(request: ConfineRequest, args: readonly string[]): ConfinedProcess {
    const id = this.nextId++
    // Pushed to, without a transform between: a run's output comes in hundreds of chunks.
    const stdout = new Readable({ read() {} })
    const stderr = new Readable({ read() {} })
    let settle: (status: ExitStatus) => void = () => {}
    const done = new Promise<ExitStatus>((resolve) => {
      settle = resolve
    })
    const run: Run = {
      id,
      stdout,
      stderr,
      nonce: randomBytes(NONCE_BYTES),
      held: Buffer.alloc(0),
      status: undefined,
      nsPid: undefined,
      hostPid: undefined,
      failure: undefined,
      end: (status) => {
        if (!stdout.destroyed) stdout.push(null)
        if (!stderr.destroyed) stderr.push(null)
        settle(status)
      },
    }
    let kill: ReturnType<typeof setTimeout> | undefined
    const terminate = (): void => {
      if (this.current !== run || kill) return
      this.send({ op: 'kill', id, signal: 'SIGTERM' })
      kill = setTimeout(() => this.send({ op: 'kill', id, signal: 'SIGKILL' }), request.graceMs)
      kill.unref()
    }
    const onAbort = (): void => terminate()
    request.signal?.addEventListener('abort', onAbort, { once: true })
    void done.then(() => {
      clearTimeout(kill)
      request.signal?.removeEventListener('abort', onAbort)
    })
    if (!this.free) {
      run.failure = this.ended ?? 'the warm sandbox was running another program'
      run.end({ exitCode: null, signal: 'SIGKILL' })
    } else {
      clearTimeout(this.idle)
      this.current = run
      this.send({ op: 'run', id, args, cwd: request.cwd, nonce: run.nonce.toString('hex') })
    }
    return {
      stdout,
      stderr,
      done,
      terminate,
      residentBytes: () => this.residentBytes(run),
      failure: () => run.failure,
    }
  }

  /** Ends the runner once its run ended (its stdin closed): taken out of use, not out of work. */
  close(): void {
    clearTimeout(this.idle)
    this.handle.stdin?.end()
  }

  /** Stops the sandbox and what runs in it now. */
  kill(): void {
    clearTimeout(this.idle)
    this.handle.terminate()
  }

  /** Runs the program's `--version` once: whether the sandbox started and can take runs. */
  async started(): Promise<boolean> {
    const probe = this.run({ argv: [], cwd: '/', session: undefined, access: 'read', graceMs: 1000 }, ['--version'])
    probe.stdout.resume()
    probe.stderr.resume()
    const status = await probe.done
    return status.exitCode === 0 && this.alive
  }

  private send(request: object): void {
    this.handle.stdin?.write(`${JSON.stringify(request)}\n`)
  }

  /**
   * The runner's stdout: the current run's output, its last NONCE_BYTES held back until more follows — they may be
   * the nonce that ends it. A reader that stopped (destroyed its end) has what it wanted: the rest is dropped.
   */
  private output(chunk: Buffer): void {
    const run = this.current
    if (!run) return
    if (chunk.length >= NONCE_BYTES) {
      if (run.held.length) deliver(run.stdout, run.held)
      deliver(run.stdout, chunk.subarray(0, chunk.length - NONCE_BYTES))
      run.held = Buffer.from(chunk.subarray(chunk.length - NONCE_BYTES))
    } else {
      const joined = Buffer.concat([run.held, chunk])
      const keep = Math.max(0, joined.length - NONCE_BYTES)
      if (keep) deliver(run.stdout, joined.subarray(0, keep))
      run.held = joined.subarray(keep)
    }
    this.finish(run)
  }

  /** Ends the run once the runner reported its end and its nonce was read: everything before it was its output. */
  private finish(run: Run): void {
    if (run.status === undefined || !run.held.equals(run.nonce)) return
    this.current = undefined
    run.end(run.status)
    // Unused for idleMs: closed, its memory given back; the session's next search starts another.
    this.idle = setTimeout(() => this.close(), this.idleMs)
    this.idle.unref()
  }

  /** The program's resident bytes: found once by its pid inside the namespace, read from /proc each time. */
  private residentBytes(run: Run): number {
    if (run.nsPid === undefined) return 0
    run.hostPid ??= descendantByNsPid(this.handle.pid, run.nsPid)
    return run.hostPid === undefined ? 0 : residentBytes(run.hostPid, this.buffer)
  }

  /** The run started (3: its pid inside) or ended (4: how; it ends once its nonce was read). */
  private event(kind: number, id: number, text: string): void {
    const run = this.current
    if (run?.id !== id) return
    if (kind === 3) {
      run.nsPid = (JSON.parse(text) as { pid: number }).pid
      return
    }
    if (kind !== 4) return
    const end = JSON.parse(text) as { code?: number | null; signal?: NodeJS.Signals | null; error?: string }
    if (end.error !== undefined) run.failure = `the warm sandbox could not start the program (${end.error})`
    run.status = { exitCode: end.code ?? null, signal: end.signal ?? null }
    this.finish(run)
  }
}

function deliver(stream: Readable, payload: Buffer): void {
  if (!stream.destroyed && payload.length > 0) stream.push(payload)
}

/**
 * Reads the runner's frames as they come, without gathering them: the program's stderr (kind 2) is handed on as
 * slices of the chunk that holds them (a frame of 64 KiB spans two reads of the pipe); an event (3, 4) whole.
 */
export class FrameReader {
  private readonly header = Buffer.alloc(HEADER_BYTES)
  private headerFill = 0
  /** The frame being read: its kind, its run, the payload bytes still to come (and, for an event, those read). */
  private frame: { kind: number; id: number; left: number; parts: Buffer[] } | undefined

  constructor(
    private readonly output: (id: number, part: Buffer) => void,
    private readonly event: (kind: number, id: number, text: string) => void,
  ) {}

  push(chunk: Buffer): void {
    let at = 0
    while (at < chunk.length || this.frame?.left === 0) {
      const frame = this.frame
      if (frame === undefined) {
        const taken = Math.min(HEADER_BYTES - this.headerFill, chunk.length - at)
        chunk.copy(this.header, this.headerFill, at, at + taken)
        this.headerFill += taken
        at += taken
        if (this.headerFill < HEADER_BYTES) return
        this.headerFill = 0
        this.frame = {
          kind: this.header[0] as number,
          id: this.header.readUInt32BE(1),
          left: this.header.readUInt32BE(5),
          parts: [],
        }
        continue
      }
      if (frame.left > 0) {
        const part = chunk.subarray(at, at + frame.left)
        at += part.length
        frame.left -= part.length
        if (frame.kind === 2) this.output(frame.id, part)
        else frame.parts.push(part)
      }
      if (frame.left === 0) {
        this.frame = undefined
        if (frame.kind !== 2) this.event(frame.kind, frame.id, Buffer.concat(frame.parts).toString())
      }
    }
  }
}
