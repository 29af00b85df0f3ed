import { type Context, Service } from 'cordis'
import { HarnessError } from '@deepseek-ai/dsh-tools'
import type { Readable, Writable } from 'node:stream'

declare module 'cordis' {
  interface Context {
    subprocess: SubprocessService
  }
}

/** What the child's fd 0 is: /dev/null, a pipe the caller writes, or `data` written then closed. */
export type StdinDisposition = 'ignore' | 'pipe' | { data: string | Uint8Array }

/**
 * Keep the in-memory TAIL of the last `maxBytes` bytes and, with `headBytes`, the HEAD of the first `headBytes`
 * bytes too. With `spill`, the complete stream is also written to a private file from the first overflow of the
 * tail on; the file is discarded if the stream passes `spill.maxBytes`.
 */
export interface CollectOptions {
  maxBytes: number
  /** Also keep the first `headBytes` bytes (default 0: only the tail). */
  headBytes?: number
  spill?: { maxBytes: number }
}

/**
 * `'pipe'`: the caller reads `handle.stdout` (and must, or the child blocks once the pipe is full); `'inherit'`: the
 * host's own fd; `'ignore'`: /dev/null; or collect (see CollectOptions), read through `handle.collected`.
 */
export type OutputDisposition = 'pipe' | 'inherit' | 'ignore' | CollectOptions

/**
 * The most UTF-8 bytes one argv element may hold: Linux's MAX_ARG_STRLEN (32 pages of 4 KiB) less the terminating
 * NUL. A longer element fails the spawn with E2BIG, so callers that pass model text check against it first.
 */
export const MAX_ARG_BYTES = 131_071

export interface SpawnRequest {
  /** argv[0] is the program (looked up on PATH); no shell ever; each element at most MAX_ARG_BYTES. */
  argv: readonly string[]
  cwd: string
  /** Merged over the scrubbed parent env: an entry wins, `undefined` removes the name. */
  env?: Readonly<Record<string, string | undefined>>
  /**
   * False for a process that must outlive dsh on purpose (a reaper of its own, e.g. the sandbox's lifeline): the
   * provider's own reaper leaves it alone when dsh dies. Default true.
   */
  reap?: boolean
  stdin: StdinDisposition
  stdout: OutputDisposition
  stderr: OutputDisposition
  /** Time between SIGTERM and SIGKILL when terminating. */
  graceMs: number
  /** Aborting terminates the process tree; an already-aborted signal spawns nothing. */
  signal?: AbortSignal
}

export interface ExitStatus {
  /** null when killed by a signal. */
  exitCode: number | null
  signal: NodeJS.Signals | null
}

export interface CollectedRead {
  /**
   * Decoded UTF-8 from `offset` (or from the start of the tail, if `offset` fell out of it) to the end. The remains
   * of a character cut at the front are dropped; while the stream is open, an incomplete character at the end is
   * left for the next read. Invalid bytes become U+FFFD.
   */
  text: string
  /** Absolute byte offset in the stream: pass it back as `offset` to read only what is new. */
  nextOffset: number
  /** True when bytes between `offset` and the tail's start were dropped. */
  lossy: boolean
  /** The file holding the complete stream, when one exists. */
  spillPath?: string
}

export interface CollectedStream {
  /**
   * Non-consuming: the same offset can be read twice. Served from the head as well while head and tail together
   * still hold every byte from `offset` on; otherwise from the tail.
   */
  readFrom(offset: number): CollectedRead
  /** The kept head (`headBytes`), from offset 0, whole characters only; empty text without `headBytes`. */
  readHead(): CollectedRead
  /** Bytes the child wrote to this stream so far. */
  readonly totalBytes: number
  /** Lines written so far, counted as `read` counts them: newlines, plus one for a last line without one. */
  readonly totalLines: number
  /** True once bytes were dropped: head and tail together no longer hold the whole stream. */
  readonly truncated: boolean
  /** The complete-stream file, while it exists (spill on, overflowed, within the spill cap). */
  readonly spillPath: string | undefined
}

/** A process outside the group that holds a collected stream open (found through /proc; Linux only). */
export interface OutputHolder {
  readonly pid: number
  /** Its command line, arguments joined by spaces (cut when long). */
  readonly command: string
}

export interface SubprocessHandle {
  /** The leader's pid, which is also the process group id. */
  readonly pid: number
  /** The leader's exit, at once: collected output may still arrive (see `done`). Never rejects. */
  readonly exited: Promise<ExitStatus>
  /**
   * Leader exit, after its collected streams are drained (EOF, and spill files complete on disk). `'pipe'` streams
   * are the caller's and are not waited for. A descendant that keeps a collected pipe open keeps this pending
   * until it exits or `terminate()` ends it. Never rejects.
   */
  readonly done: Promise<ExitStatus>
  /** SIGTERM to the whole process group, SIGKILL after `graceMs`. Idempotent. */
  terminate(): void
  /** Resolves once no process of the group is left (the leader and every descendant that kept the group). */
  waitForExit(): Promise<ExitStatus>
  /** True while a process of the group (the leader or a descendant that kept the group) still runs, checked now. */
  alive(): boolean
  /** Calls `listener` after new bytes were collected on stdout or stderr; returns the remover. */
  onOutput(listener: () => void): () => void
  /**
   * Stops reading the collected streams now, so that `done` resolves with what arrived, and returns the other
   * processes that still held them open (empty when none could be found). Call it once nothing of the group runs
   * and the streams still do not end: a process that left the group holds them. Idempotent.
   */
  abandonOutput(): readonly OutputHolder[]
  /** Only with stdin `'pipe'`: the caller writes, then ends it. */
  readonly stdin: Writable | null
  /** Only with `'pipe'` output. */
  readonly stdout: Readable | null
  readonly stderr: Readable | null
  /** Only for streams in collect mode. */
  readonly collected: { readonly stdout?: CollectedStream; readonly stderr?: CollectedStream }
}

export const SubprocessErrorCode = {
  /** Empty argv, a NUL byte in an argument or env entry. */
  SUBPROCESS_INVALID_REQUEST: 'SUBPROCESS_INVALID_REQUEST',
  /** The program could not be started (missing, not executable, bad cwd…). */
  SUBPROCESS_SPAWN_FAILED: 'SUBPROCESS_SPAWN_FAILED',
  /** The signal was already aborted: nothing was spawned. */
  SUBPROCESS_ABORTED: 'SUBPROCESS_ABORTED',
} as const
export type SubprocessErrorCode = (typeof SubprocessErrorCode)[keyof typeof SubprocessErrorCode]

export class SubprocessError extends HarnessError {
  override name = 'SubprocessError'
}

/** `ctx.subprocess`: start programs without a shell, in their own process group, and never lose track of them. */
export abstract class SubprocessService extends Service {
  static readonly provide = 'subprocess'

  constructor(ctx: Context) {
    super(ctx, 'subprocess')
  }

  /** Rejects with a SubprocessError when nothing could be started. */
  abstract spawn(request: SpawnRequest): Promise<SubprocessHandle>
}

/**
 * Names that look like they hold a credential (any case): KEY, TOKEN, SECRET, PASSW(ORD), PASSPHRASE, CREDENTIAL,
 * AUTH (AUTHORIZATION and AUTHORISATION too, but not AUTHOR: GIT_AUTHOR_NAME, nor XAUTHORITY), JWT, COOKIE, DSN,
 * CONNECTION_STRING, WEBHOOK anywhere in the name; `_PAT`, `_PWD`, `_PASS`, `_SK` at its end (so PWD and OLDPWD stay);
 * the password managers' session tokens (BW_SESSION, OP_SESSION_*; not XDG_SESSION_* nor
 * DBUS_SESSION_BUS_ADDRESS); and the agent sockets that sign for the user (SSH_AUTH_SOCK, GPG_AGENT_INFO).
 */
const CREDENTIAL =
  /KEY|TOKEN|SECRET|PASSW|PASSPHRASE|CREDENTIAL|AUTH(?!OR(?!I[ZS]))|JWT|COOKIE|DSN|CONNECTION_STRING|WEBHOOK|_PAT$|_PWD$|_PASS$|_SK$|^BW_SESSION$|^OP_SESSION_|^SSH_AUTH_SOCK$|^GPG_AGENT_INFO$/i

/** A value holding a password in a URL: `scheme://user:password@host…` (a database URL, a git remote with a token). */
const URL_CREDENTIAL = /[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s/?#@:]*:[^\s/?#@]*@/

/** A name no child inherits: credential-looking, or in the managed `DSH_*` namespace. */
const scrubbed = (name: string) => CREDENTIAL.test(name) || name.startsWith('DSH_')

/** Whether a child inherits nothing of `name=value`: a credential-looking name, a password in a URL, or `DSH_*`. */
export function isScrubbed(name: string, value: string): boolean {
  return scrubbed(name) || URL_CREDENTIAL.test(value)
}

/**
 * The parent's env without credentials — credential-looking names (see CREDENTIAL: KEY, TOKEN, SECRET, PASSW,
 * PASSPHRASE, CREDENTIAL, AUTH, JWT, COOKIE, DSN, CONNECTION_STRING, WEBHOOK, `*_PAT`, `*_PWD`, `*_PASS`, `*_SK`,
 * BW_SESSION, OP_SESSION_*,
 * SSH_AUTH_SOCK, GPG_AGENT_INFO; any case) and values with a password in a URL — and without the managed `DSH_*`
 * namespace. PATH, HOME, PWD, LANG and the rest pass through.
 */
export function scrubbedParentEnv(source: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return childEnv({}, source)
}

/** The scrubbed parent env with `overrides` applied (`undefined` removes a name; an override is never scrubbed). */
export function childEnv(
  overrides: Readonly<Record<string, string | undefined>> = {},
  source: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const env: Record<string, string> = {}
  // Names first, then the value of each name kept: every read of process.env makes a new string, and the values of
  // scrubbed or overridden names are never needed (nor copied onto the heap).
  for (const name of Object.keys(source)) {
    if (Object.hasOwn(overrides, name) || scrubbed(name)) continue
    const value = source[name]
    if (value !== undefined && !URL_CREDENTIAL.test(value)) env[name] = value
  }
  for (const name of Object.keys(overrides)) {
    const value = overrides[name]
    if (value !== undefined) env[name] = value
  }
  return env
}

export {
  descendantByNsPid,
  type ProcStat,
  procPids,
  processRuns,
  procStat,
  residentBytes,
  runningState,
  STATUS_BYTES,
  treeResidentBytes,
  vmRss,
} from './proc.ts'
export {
  privateCopy,
  resolveTrusted,
  SYSTEM_PATH,
  untrustedReason,
  type Distrust,
  type TrustedProgram,
} from './trusted.ts'
