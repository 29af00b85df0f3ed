import { constants } from 'node:os'
import { join } from 'node:path'
import type { Context } from 'cordis'
import { BashError, BashErrorCode } from '@deepseek-ai/dsh-bash'
import { type ConfineRequest, type Confined, Confinement } from '@deepseek-ai/dsh-confinement'
import type { ExitStatus } from '@deepseek-ai/dsh-subprocess'
import { within } from '@deepseek-ai/dsh-tools'
import { bwrapArgs, type SandboxPolicy } from './policy.ts'
import { unavailableError } from './probe.ts'
import type { Sandbox } from './sandbox.ts'
import { writableProblem } from './trusted.ts'

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

/**
 * `ctx.confinement` over bubblewrap: a program runs in the calling session's sandbox as its commands do — the same
 * hidden paths masked, the same seccomp filter, no network — with every root read-only and a read-only /tmp, in its
 * own PID namespace that dies with dsh. Fails closed with BASH_SANDBOX_UNAVAILABLE, exactly when bash would.
 */
export class SandboxConfinement extends Confinement {
  private readonly [SANDBOX]: Sandbox

  constructor(ctx: Context, sandbox: Sandbox) {
    super(ctx)
    this[SANDBOX] = sandbox
  }

  async confine(request: ConfineRequest): Promise<Confined> {
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
    return {
      argv: [
        programs.sh,
        '-c',
        WRAPPER,
        'sh',
        join(state, 'seccomp'),
        // The pinned root, bound from its descriptor as bash binds it ('/' when the session has none).
        request.session?.root?.fdPath ?? '/',
        program,
        programs.env,
        '-i',
        programs.bwrap,
        '--seccomp',
        '4',
        ...bwrapArgs(policy, request.cwd),
        // Nothing of it outlives dsh; nothing in it writes, /tmp included.
        '--die-with-parent',
        // The program is the namespace's pid 1, bwrap's own child: bwrap reaps it before exiting, so the process
        // group is gone with bwrap (a separate init would be orphaned, the group watched through /proc until the
        // host's init reaped it). A pid 1 ignores SIGTERM from outside: the group's SIGTERM ends bwrap, whose
        // death (--die-with-parent) ends the program.
        '--as-pid-1',
        '--remount-ro',
        '/tmp',
        '--',
        `/proc/self/fd/${PROGRAM_FD}`,
        ...args,
      ],
      cwd: '/',
      status,
      failure,
    }
  }
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
