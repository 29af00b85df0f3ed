import { statSync } from 'node:fs'
import { constants } from 'node:os'
import { join } from 'node:path'
import type { Context } from 'cordis'
import { BashError, BashErrorCode } from '@deepseek-ai/dsh-bash'
import {
  type ConfinedProcess,
  type ConfineRequest,
  Confinement,
  spawnWrapped,
  type Wrapped,
} from '@deepseek-ai/dsh-confinement'
import type { ExitStatus, SubprocessService } from '@deepseek-ai/dsh-subprocess'
import { within } from '@deepseek-ai/dsh-tools'
import { bwrapArgs, type SandboxPolicy } from './policy.ts'
import { unavailableError } from './probe.ts'
import type { Sandbox } from './sandbox.ts'
import { writableProblem } from './trusted.ts'
import { runnerArgs, WarmSandbox } from './warm.ts'

/**
 * The program's wrapper: a POSIX sh that opens the seccomp filter as fd 4, the session's pinned root as fd 5
 * (ROOT_FD) and the program itself as fd 6 (PROGRAM_FD), then execs bwrap through `env -i`. Inside, the program is
 * executed as /proc/self/fd/6: the bytes the host opened (a private copy may lie under the host's /tmp, which the
 * sandbox replaces), never a path a command could swap meanwhile.
 */
const WRAPPER = 's=$1; r=$2; p=$3; shift 3; exec 4<"$s" 5<"$r" 6<"$p" || exit 126; exec "$@"'
/** The descriptor the wrapper opens the program as (4 is the filter, 5 the root: ROOT_FD). */
const PROGRAM_FD = 6

/** Signal numbers to names, for bwrap's "128 + signal" exit codes. */
const SIGNALS = new Map<number, NodeJS.Signals>(
  Object.entries(constants.signals).map(([name, number]) => [number, name as NodeJS.Signals]),
)

/** Where the provider keeps its sandbox (symbol reads pass Cordis' per-caller proxy straight through). */
const SANDBOX: unique symbol = Symbol('sandbox')
const SUBPROCESS: unique symbol = Symbol('subprocess')
const RUNNING: unique symbol = Symbol('running')

/** The runner's wrapper: as WRAPPER, and the program opened as fd 7 too, for the runner (Node, fd 6) to start. */
const WARM_WRAPPER = 's=$1; r=$2; p=$3; g=$4; shift 4; exec 4<"$s" 5<"$r" 6<"$p" 7<"$g" || exit 126; exec "$@"'

/** A warm sandbox unused this long is closed. */
const WARM_IDLE_MS = 30_000

/** Where a session keeps its warm sandbox (see Warm). */
const WARM: unique symbol = Symbol('dsh.bash-sandbox.warm')

/**
 * A session's warm sandbox: `current` serves the calls whose key it has; `last` is the key of the call before, so
 * that one is started only for a key two calls in a row had (a one-shot `dsh call` never starts one).
 */
interface Warm {
  current: WarmSandbox | undefined
  starting: boolean
  last: string | undefined
  disposed: boolean
}

/** A call, prepared: the launcher of a fresh sandbox for it, and the key of its masks (see WarmSandbox). */
interface Prepared {
  readonly wrapped: Wrapped
  readonly key: string
  readonly warmArgv: readonly string[]
}

/**
 * `ctx.confinement` over bubblewrap: a program runs in the calling session's sandbox as its commands do — the same
 * hidden paths masked, the same seccomp filter, no network — with every root read-only and a read-only /tmp, in its
 * own PID namespace that dies with dsh. Fails closed with BASH_SANDBOX_UNAVAILABLE, exactly when bash would.
 *
 * A namespace per call costs more than a small search (docs/decisions/2026-12-04-warm-search-sandbox.md): a
 * session whose masks stayed the same over two calls gets a sandbox kept warm with those masks, which later calls
 * use while their own masks — computed at each call as for a fresh one — are still exactly its.
 */
export class SandboxConfinement extends Confinement {
  private readonly [SANDBOX]: Sandbox
  private readonly [SUBPROCESS]: SubprocessService
  /** Every warm sandbox that runs, whichever session it serves: stopped with the provider. */
  private readonly [RUNNING] = new Set<WarmSandbox>()

  constructor(ctx: Context, sandbox: Sandbox, subprocess: SubprocessService) {
    super(ctx)
    this[SANDBOX] = sandbox
    this[SUBPROCESS] = subprocess
    ctx.effect(
      () => () => {
        for (const warm of this[RUNNING]) warm.kill()
      },
      'bash-sandbox warm sandboxes',
    )
  }

  async start(request: ConfineRequest): Promise<ConfinedProcess> {
    const prepared = await this.prepare(request)
    const session = request.session
    if (!session) return spawnWrapped(this[SUBPROCESS], prepared.wrapped, request)
    const warm = session.slot(WARM, (): Warm => {
      const made: Warm = { current: undefined, starting: false, last: undefined, disposed: false }
      session.defer(() => {
        made.disposed = true
        made.current?.kill()
      })
      return made
    })
    const current = warm.current
    if (current?.alive && current.key === prepared.key) {
      // Busy with another call of the session (glob and grep at once): this one runs in a fresh sandbox.
      if (current.free) return current.run(request, request.argv.slice(1))
      return spawnWrapped(this[SUBPROCESS], prepared.wrapped, request)
    }
    if (current) {
      warm.current = undefined
      current.close()
    }
    if (warm.last === prepared.key && !warm.starting) void this.warmUp(warm, prepared, request)
    warm.last = prepared.key
    return spawnWrapped(this[SUBPROCESS], prepared.wrapped, request)
  }

  /**
   * Starts a warm sandbox with the call's masks, in the background; it is kept only if its key is still the key a
   * call computes once it runs (a path swapped while bubblewrap mounted would change it).
   */
  private async warmUp(warm: Warm, prepared: Prepared, request: ConfineRequest): Promise<void> {
    warm.starting = true
    let sandbox: WarmSandbox | undefined
    try {
      const handle = await this[SUBPROCESS].spawn({
        argv: prepared.warmArgv,
        cwd: '/',
        stdin: 'pipe',
        stdout: 'pipe',
        stderr: 'pipe',
        graceMs: request.graceMs,
      })
      sandbox = new WarmSandbox(prepared.key, handle, WARM_IDLE_MS)
      const running = this[RUNNING]
      running.add(sandbox)
      void handle.done.then(() => running.delete(sandbox as WarmSandbox))
      const kept = (await sandbox.started()) && (await this.prepare(request)).key === prepared.key && !warm.disposed
      if (kept && warm.current === undefined && warm.last === prepared.key) warm.current = sandbox
      else sandbox.kill()
    } catch {
      // Not kept: calls go on in a fresh sandbox each, as they would without it.
      sandbox?.kill()
    } finally {
      warm.starting = false
    }
  }

  /** The call's sandbox: its policy (fresh), refusals, the launcher of a fresh one and the key of its masks. */
  private async prepare(request: ConfineRequest): Promise<Prepared> {
    const sandbox = this[SANDBOX]
    const [program, ...args] = request.argv
    if (program === undefined)
      throw new BashError('confine: an empty argv', { code: BashErrorCode.BASH_INVALID_REQUEST })
    const name = program.slice(program.lastIndexOf('/') + 1)
    const { programs, state } = await sandbox.launcher(name === 'rg' ? 'ripgrep' : name)
    const session = sandbox.policy(request.session)
    const policy = readOnly(session)
    const hidden = policy.hidden.find((item) => within(request.cwd, item.path))
    if (hidden) {
      throw new BashError(
        `${JSON.stringify(request.cwd)} is hidden by the sandbox (${hidden.path}): search a directory of the workspace`,
        { code: BashErrorCode.BASH_INVALID_WORKDIR },
      )
    }
    const problem = writableProblem(programs, state, session.writable)
    if (problem) throw unavailableError(problem, name)
    const seccomp = join(state, 'seccomp')
    // The pinned root, bound from its descriptor as bash binds it ('/' when the session has none).
    const root = request.session?.root?.fdPath ?? '/'
    // Without bwrapArgs' closing `--chdir`: the working directory is each call's own, not the sandbox's.
    const mounts = bwrapArgs(policy, '/').slice(0, -2)
    const namespace = [
      programs.env,
      '-i',
      programs.bwrap,
      '--seccomp',
      '4',
      ...mounts,
      // Nothing of it outlives dsh; nothing in it writes, /tmp included.
      '--die-with-parent',
      // The program is the namespace's pid 1, bwrap's own child: bwrap reaps it before exiting, so the process
      // group is gone with bwrap (a separate init would be orphaned, the group watched through /proc until the
      // host's init reaped it). A pid 1 ignores SIGTERM from outside: the group's SIGTERM ends bwrap, whose
      // death (--die-with-parent) ends the program.
      '--as-pid-1',
      '--remount-ro',
      '/tmp',
    ]
    return {
      wrapped: {
        argv: [
          programs.sh,
          '-c',
          WRAPPER,
          'sh',
          seccomp,
          root,
          program,
          ...namespace,
          '--chdir',
          request.cwd,
          '--',
          `/proc/self/fd/${PROGRAM_FD}`,
          ...args,
        ],
        cwd: '/',
        status,
        failure,
      },
      key: JSON.stringify([program, root, mounts, identities(program, policy)]),
      warmArgv: [
        programs.sh,
        '-c',
        WARM_WRAPPER,
        'sh',
        seccomp,
        root,
        process.execPath,
        program,
        ...namespace,
        '--',
        `/proc/self/fd/${PROGRAM_FD}`,
        ...runnerArgs(),
      ],
    }
  }
}

/**
 * What each path a sandbox's mounts name is now (device and inode, or absent): a sandbox made with the same
 * arguments but other files at those paths masks other files, and must not serve the call.
 */
function identities(program: string, policy: SandboxPolicy): string[] {
  const paths = [
    program,
    policy.tmpDir,
    ...policy.readOnly,
    ...policy.hidden.flatMap((item) => [item.path, ...(item.keep ?? [])]),
  ]
  return paths.map((path) => {
    const info = statSync(path, { throwIfNoEntry: false, bigint: true })
    return info ? `${info.dev}:${info.ino}` : '-'
  })
}

/** A policy with every writable root read-only, nothing pinned (no command runs to rename), and no network. */
export function readOnly(policy: SandboxPolicy): SandboxPolicy {
  const roots = [...policy.writable, ...policy.readOnly.filter((dir) => !policy.writable.includes(dir))]
  return {
    writable: [],
    pinned: [],
    ...(policy.boundRoot === undefined ? {} : { boundRoot: policy.boundRoot }),
    readOnly: roots,
    hidden: policy.hidden,
    tmpDir: policy.tmpDir,
    network: 'none',
  }
}

/** bwrap exits 128 + N when the program died of signal N: reported as that signal, as a bare run would be. */
function status(exit: ExitStatus): ExitStatus {
  const signal =
    exit.signal === null && exit.exitCode !== null && exit.exitCode > 128 ? SIGNALS.get(exit.exitCode - 128) : undefined
  return signal ? { exitCode: null, signal } : exit
}

/** bwrap (or the wrapper) failed before the program ran: its own words; undefined when the program ran. */
function failure(exit: ExitStatus, stderr: string): string | undefined {
  if (exit.exitCode === 126) return `the sandbox's wrapper could not open its files (${stderr.trim() || 'exit 126'})`
  const line = stderr.split('\n').find((text) => text.startsWith('bwrap: '))
  return exit.exitCode === 1 && line !== undefined ? `bubblewrap failed to set up the sandbox (${line})` : undefined
}
