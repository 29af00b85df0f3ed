import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { constants, tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Context } from 'cordis'
import { BashError, BashErrorCode, type BashExecSpec } from '@deepseek-ai/dsh-bash'
import { makePrivateTempDir } from '@deepseek-ai/dsh-private-dir'
import {
  type ExitStatus,
  type ProcStat,
  procPids,
  procStat,
  runningState,
  type SubprocessHandle,
  type SubprocessService,
} from '@deepseek-ai/dsh-subprocess'
import { CREDENTIAL_STORES, expandForHomes, followService, type ToolSession, within } from '@deepseek-ai/dsh-tools'
import { localDirectoriesOf, type SpillStore } from '@deepseek-ai/dsh-spill'
import type { Workspace } from '@deepseek-ai/dsh-workspace'
import type { Config } from './config.ts'
import { sandboxEnv } from './env.ts'
import { Lifeline } from './lifeline.ts'
import {
  bwrapArgs,
  existing,
  existingDirs,
  hiddenPaths,
  pinnedAncestors,
  systemHidden,
  withoutCovered,
  type HiddenPath,
  type SandboxPolicy,
} from './policy.ts'
import { probe, unavailableError, type Unavailable } from './probe.ts'
import { seccompFilter } from './seccomp.ts'
import { resolvePrograms, writableProblem, type Programs } from './trusted.ts'

/**
 * The spawned program: a POSIX sh that opens the bwrap arguments file as fd 3 and the seccomp filter as fd 4,
 * deletes the arguments file, ignores SIGTERM and execs bwrap through `env -i` (both by absolute path): bwrap and
 * the namespace's init carry no environment at all (the command gets its own from `--setenv` pairs in the file,
 * never on a command line other users can read), and a SIGTERM to the group reaches the shell, not bwrap: bwrap then
 * reports how the shell ended.
 */
const WRAPPER =
  'f=$1; s=$2; e=$3; r=$4; shift 4; exec 3<"$f" 4<"$s" 5<"$r" || exit 126; rm -f -- "$f"; trap "" TERM; exec "$e" -i "$@"'

/** Signal numbers to names, for bwrap's "128 + signal" exit codes. */
const SIGNALS = new Map<number, NodeJS.Signals>(
  Object.entries(constants.signals).map(([name, number]) => [number, name as NodeJS.Signals]),
)

/**
 * Turns a resolved spec into the argv that runs it inside bubblewrap. Fails closed: until a probe of the same
 * namespaces succeeded, every call gets BASH_SANDBOX_UNAVAILABLE (a success is kept; a failure is probed again on
 * the next call, so a fix takes effect without a restart).
 */
export class Sandbox {
  private available: Promise<Unavailable | undefined> | undefined
  /**
   * `<os tmpdir>/dsh-sandbox-XXXXXX` (0700): `tmp/<session>/` is each session's /tmp, `args/` holds argument files,
   * `seccomp` the filter, `groups` the process groups the reaper kills if dsh dies.
   */
  private stateDir: string | undefined
  private files = 0
  /** Resolved once, by the first successful check: bwrap, sh, env and the shell, as trusted real paths. */
  private programs: Programs | undefined
  private lifeline: Lifeline | undefined
  /** Where a session keeps its /tmp of this sandbox (a new sandbox, a new state directory: a new /tmp). */
  private readonly tmpKey = Symbol('dsh.bash-sandbox.tmp')

  private readonly spillStore: () => SpillStore | undefined
  private readonly workspace: () => Workspace | undefined

  constructor(
    ctx: Context,
    private readonly subprocess: SubprocessService,
    private readonly config: Config,
  ) {
    this.spillStore = followService(ctx, 'spillStore')
    this.workspace = followService(ctx, 'workspace')
  }

  /**
   * `<sh> -c <wrapper> … <bwrap> --args 3 --seccomp 4 <mounts and namespaces> -- <env> --default-signal=TERM <shell>
   * -c -- <command>`, every program by its trusted absolute path.
   */
  async argv(spec: BashExecSpec): Promise<string[]> {
    const programs = await this.ensureAvailable()
    const env = sandboxEnv(spec.env ?? {}, this.config.passEnv)
    for (const [name, value] of Object.entries(env)) {
      if (name.includes('\0') || value.includes('\0'))
        throw new BashError(`environment entry ${JSON.stringify(name)} contains a NUL byte`, {
          code: BashErrorCode.BASH_INVALID_REQUEST,
        })
    }
    const policy = this.policy(spec.session)
    const hidden = policy.hidden.find((item) => within(spec.workdir, item.path))
    if (hidden) {
      throw new BashError(
        `working directory ${JSON.stringify(spec.workdir)} is hidden by the sandbox (denyRead: ${hidden.path})`,
        { code: BashErrorCode.BASH_INVALID_WORKDIR },
      )
    }
    const problem = writableProblem(programs, this.state(), [
      ...policy.writable,
      ...(policy.pinned ?? []),
      policy.tmpDir,
    ])
    if (problem) throw unavailableError(problem)
    await this.reaper(programs).ensure()
    return this.wrapped(programs, bwrapArgs(policy, spec.workdir), env, spec.command, spec.session?.root?.fdPath)
  }

  /** bwrap exits 128 + N when the shell died of signal N: the handle reports that as the signal, like a local shell. */
  wrap(handle: SubprocessHandle, session: ToolSession | undefined): SubprocessHandle {
    const mapped = (status: ExitStatus): ExitStatus => {
      const signal =
        status.signal === null && status.exitCode !== null && status.exitCode > 128
          ? SIGNALS.get(status.exitCode - 128)
          : undefined
      return signal ? { exitCode: null, signal } : status
    }
    // bwrap exits as soon as the shell does; the namespace's init follows a moment later unless something the shell
    // started still runs. Waiting for that moment keeps a lingering init from passing for a leftover.
    const exited = handle.exited.then(async (status) => {
      await initSettled(handle.pid)
      return mapped(status)
    })
    const done = Promise.all([handle.done, exited]).then(([status]) => mapped(status))
    this.lifeline?.watch(handle)
    // The command's full-output files, once complete, stay readable to its own session (see othersSavedResults).
    // Until `done` has recorded them, the next call of the session reads them from the handle: the tool's result
    // can go out before this callback runs, and the next call's `tail` of the file would find no such file.
    const outputs = session && outputsOf(session)
    outputs?.pending.add(handle)
    void done.then(() => {
      if (!outputs) return
      for (const path of spillPaths(handle)) outputs.files.add(path)
      outputs.pending.delete(handle)
    })
    return new Proxy(handle, {
      get(target, key) {
        if (key === 'exited') return exited
        if (key === 'done') return done
        if (key === 'waitForExit') return () => target.waitForExit().then(mapped)
        const value: unknown = Reflect.get(target, key, target)
        return typeof value === 'function' ? value.bind(target) : value
      },
    })
  }

  /**
   * What a command of `session` may touch: the session's workspace roots (its pinned root, bound from its
   * descriptor, and the configured roots) and `writable` read-write, read-only roots (spill directories) readable,
   * the credential paths hidden (and their ancestors inside a writable root pinned), the session's own /tmp.
   * Without a session, the host's cwd stands for its root.
   */
  policy(session: ToolSession | undefined): SandboxPolicy {
    const workspace = this.workspace()
    const cwd = session?.cwd ?? process.cwd()
    // WORKSPACE_ROOT_MOVED when the pinned root's path names another directory now (the workspace checks it too).
    session?.root?.check('bash')
    const roots = workspace?.roots(session ?? cwd) ?? { writable: [session?.root?.path ?? cwd], readOnly: [] }
    const [first, ...rest] = roots.writable
    const writable = [
      ...(session?.root && first === session.root.path ? [first] : existingDirs(first === undefined ? [] : [first])),
      ...existingDirs([...rest, ...expandForHomes(this.config.writable)]),
    ].filter((dir, at, all) => all.indexOf(dir) === at)
    const readOnly = existingDirs(roots.readOnly).filter((dir) => !writable.includes(dir))
    // The one hidden list of ctx.workspace (docs/security.md#boundary: credential stores, its denyRead, the HTTP token file, dsh's
    // config file), with the sandbox's own list and denyRead on top. It refuses a broad root (WORKSPACE_ROOT_REFUSED)
    // before anything runs; fresh: a hidden directory renamed since the last look is found and masked where it is.
    const shared = workspace?.policy(session ?? cwd, 'bash', true).hidden ?? []
    const hidden = withoutCovered([
      ...systemHidden(),
      ...hiddenPaths([...expandForHomes([...CREDENTIAL_STORES, ...this.config.denyRead], cwd), ...shared]),
      ...this.othersSavedResults(session),
    ])
    return {
      writable,
      readOnly,
      hidden,
      pinned: pinnedAncestors(hidden, writable),
      ...(session?.root && writable[0] === session.root.path ? { boundRoot: session.root.path } : {}),
      tmpDir: this.sessionTmp(session),
      network: this.config.network,
    }
  }

  /**
   * Sessions apart: the saved-results directory of every session (the spill store's, when it keeps local files)
   * masked, except the calling session's own, bound read-only, and the full-output files of its own commands (the
   * subprocess provider writes those of every session to one directory there). Nothing without a session or a
   * local store.
   */
  private othersSavedResults(session: ToolSession | undefined): HiddenPath[] {
    const store = this.spillStore()
    if (!session || !store) return []
    const dirs = localDirectoriesOf(store, session)
    const all = dirs && existing(dirs.all)
    if (!dirs || all?.kind !== 'dir') return []
    const own = existing(dirs.own)
    const mine = outputsOf(session)
    const outputs = [...mine.files, ...[...mine.pending].flatMap(spillPaths)]
      .map(existing)
      .filter((file) => file?.kind === 'file' && within(file.real, all.real))
    const keep = [...(own?.kind === 'dir' ? [own.real] : []), ...outputs.map((file) => (file as { real: string }).real)]
    return [{ path: all.real, kind: 'dir', keep }]
  }

  /**
   * After disposal stopped every command: waits (bounded) until no process of this sandbox is left — tasks are
   * stopped at the same time, their namespaces die at SIGKILL at the latest — then removes the private /tmp.
   */
  async close(): Promise<void> {
    await this.lifeline?.close()
    const dir = this.stateDir
    if (!dir) return
    this.stateDir = undefined
    for (let turn = 0; turn < 200 && processesUsing(dir); turn++)
      await new Promise((resolve) => setTimeout(resolve, Math.min(5 + turn * 5, 100)))
    rmSync(dir, { recursive: true, force: true })
  }

  private wrapped(
    programs: Programs,
    args: readonly string[],
    env: Readonly<Record<string, string>>,
    command: string,
    rootFd = '/',
  ): string[] {
    const state = this.state()
    const file = join(state, 'args', String(++this.files))
    const records = Object.entries(env).flatMap(([name, value]) => ['--setenv', name, value])
    // 0600 in a 0700 directory that no sandbox mounts; the wrapper deletes it before bwrap starts.
    writeFileSync(file, records.length ? `${records.join('\0')}\0` : '', { mode: 0o600 })
    return [
      programs.sh,
      '-c',
      WRAPPER,
      'sh',
      file,
      join(state, 'seccomp'),
      programs.env,
      // Opened as fd ROOT_FD by the wrapper (outside the namespace, where dsh's descriptors may be opened).
      rootFd,
      programs.bwrap,
      '--args',
      '3',
      '--seccomp',
      '4',
      ...args,
      '--',
      programs.env,
      '--default-signal=TERM',
      programs.shell,
      '-c',
      '--',
      command,
    ]
  }

  /** What confine.ts launches with: the trusted programs (once the sandbox works) and the state directory. */
  async launcher(program: string): Promise<{ programs: Programs; state: string }> {
    return { programs: await this.ensureAvailable(program), state: this.state() }
  }

  private async ensureAvailable(program = 'bash'): Promise<Programs> {
    const pending = (this.available ??= this.check())
    const problem = await pending
    if (!problem && this.programs) return this.programs
    if (this.available === pending) this.available = undefined
    throw unavailableError(problem ?? { why: 'its programs were not resolved', fix: 'try again' }, program)
  }

  /**
   * Resolves the programs (trusted paths, never the session's PATH), then probes a real command the way every
   * command runs (wrapper, seccomp filter, namespaces, mounts but the roots).
   */
  private async check(): Promise<Unavailable | undefined> {
    const programs = resolvePrograms(this.config.bwrapPath, this.config.shell)
    if ('why' in programs) return programs
    if (!seccompFilter()) {
      return {
        why: `its seccomp filter knows no system call numbers for this machine (${process.arch})`,
        fix: 'run dsh on x86_64 or aarch64 Linux',
      }
    }
    const args = bwrapArgs(
      { writable: [], readOnly: [], hidden: [], tmpDir: join(this.state(), 'tmp'), network: this.config.network },
      '/',
    )
    const problem = await probe(
      this.subprocess,
      programs.bwrap,
      this.wrapped(programs, args, { PATH: '/usr/bin:/bin' }, 'true'),
    )
    if (!problem) this.programs = programs
    return problem
  }

  private reaper(programs: Programs): Lifeline {
    this.lifeline ??= new Lifeline(this.subprocess, programs.sh, join(this.state(), 'groups'), this.state())
    return this.lifeline
  }

  /** The session's private /tmp (made on first use, removed by its dispose): `tmp/<its random name>`, `tmp/-` without one. */
  private sessionTmp(session: ToolSession | undefined): string {
    const make = (name: string) => {
      const dir = join(this.state(), 'tmp', name)
      mkdirSync(dir, { recursive: true, mode: 0o700 })
      return dir
    }
    if (!session) return make('-')
    return session.slot(this.tmpKey, () => {
      const dir = make(session.dirName)
      session.defer(() => rmSync(dir, { recursive: true, force: true }))
      return dir
    })
  }

  private state(): string {
    if (!this.stateDir) {
      // Private (0700, this user's): other users never see what commands leave in /tmp, nor the argument files.
      using dir = makePrivateTempDir(tmpdir(), 'dsh-sandbox-')
      dir.subdir('tmp').close()
      dir.subdir('args').close()
      writeFileSync(dir.at('seccomp'), seccompFilter() ?? Buffer.alloc(0), { mode: 0o400, flag: 'wx' })
      this.stateDir = dir.path
    }
    return this.stateDir
  }
}

/** Where a session keeps its commands not yet recorded in its `ownFiles`. */
const PENDING: unique symbol = Symbol('dsh.bash-sandbox.pending-outputs')

/**
 * The full-output files of the session's commands, kept visible to it alone (`ownFiles`); until `done` has recorded
 * a command's files, the next call reads them from its handle (the tool's result can go out before that callback).
 */
function outputsOf(session: ToolSession): { files: Set<string>; pending: Set<SubprocessHandle> } {
  return { files: session.ownFiles, pending: session.slot(PENDING, () => new Set<SubprocessHandle>()) }
}

/** The complete-stream files of a command's collected stdout and stderr, as far as they exist yet. */
function spillPaths(handle: SubprocessHandle): string[] {
  return [handle.collected.stdout?.spillPath, handle.collected.stderr?.spillPath].filter(
    (path): path is string => path !== undefined,
  )
}

function processes(): ProcStat[] {
  return (procPids() ?? [])
    .map((pid) => procStat(pid))
    .filter((stat): stat is ProcStat => stat !== undefined && runningState(stat.state))
}

/**
 * Resolves once the namespace's init (the bwrap left in the group of `leader`) is gone or has children of its own
 * (what the shell left running). Bounded: a few seconds at most, then the executor judges as usual.
 */
async function initSettled(leader: number): Promise<void> {
  const all = processes()
  const init = all.find((stat) => stat.pgrp === leader && stat.pid !== leader && stat.comm === 'bwrap')
  if (!init) return
  for (let turn = 0; turn < 150; turn++) {
    const stat = procStat(init.pid)
    if (!stat || !runningState(stat.state) || stat.pgrp !== leader) return
    if (hasChildren(init.pid, turn === 0 ? all : undefined)) return
    await new Promise((resolve) => setTimeout(resolve, Math.min(1 + turn, 20)))
  }
}

/** Whether `pid` has a live child: its `children` file when the kernel has one, else a scan of /proc. */
function hasChildren(pid: number, known: readonly ProcStat[] | undefined): boolean {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'latin1').trim() !== ''
  } catch {
    return (known ?? processes()).some((stat) => stat.ppid === pid)
  }
}

/** Whether a live process still has `dir` on its command line (a bwrap of this sandbox, or its namespace's init). */
function processesUsing(dir: string): boolean {
  const pids = procPids()
  if (!pids) return false
  for (const pid of pids) {
    if (pid === process.pid) continue
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'latin1').includes(dir)) return true
    } catch {
      // gone meanwhile
    }
  }
  return false
}
