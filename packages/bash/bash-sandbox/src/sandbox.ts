import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { constants, tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Context } from 'cordis'
import { BashError, BashErrorCode, type BashExecSpec } from '@deepseek-ai/dsh-bash'
import { childEnv, type ExitStatus, type SubprocessHandle, type SubprocessService } from '@deepseek-ai/dsh-subprocess'
import type {} from '@deepseek-ai/dsh-workspace'
import type { Config } from './config.ts'
import { bwrapArgs, DEFAULT_DENY_READ, existingDirs, expandHome, hiddenPaths, systemHidden, within, type SandboxPolicy } from './policy.ts'
import { probe, unavailableError, type Unavailable } from './probe.ts'

/**
 * The spawned program: a POSIX sh that opens the bwrap arguments file as fd 3, deletes it, ignores SIGTERM and
 * execs bwrap with an empty environment. So bwrap and the namespace's init carry none of the command's
 * environment (the command gets it from `--setenv` pairs in the file, never on a command line other users can
 * read), and a SIGTERM to the group reaches the shell, not bwrap: bwrap then reports how the shell ended.
 */
const WRAPPER = 'f=$1; shift; exec 3<"$f" || exit 126; rm -f -- "$f"; trap "" TERM; exec env -i PATH="$PATH" "$@"'

/** Signal numbers to names, for bwrap's "128 + signal" exit codes. */
const SIGNALS = new Map<number, NodeJS.Signals>(Object.entries(constants.signals).map(([name, number]) => [number, name as NodeJS.Signals]))

/**
 * Turns a resolved spec into the argv that runs it inside bubblewrap. Fails closed: until a probe of the same
 * namespaces succeeded, every call gets BASH_SANDBOX_UNAVAILABLE (a success is kept; a failure is probed again on
 * the next call, so a fix takes effect without a restart).
 */
export class Sandbox {
  private available: Promise<Unavailable | undefined> | undefined
  /** `<os tmpdir>/dsh-sandbox-XXXXXX` (0700): `tmp/` is the commands' /tmp, `args/` holds argument files. */
  private stateDir: string | undefined
  private files = 0

  constructor(private readonly ctx: Context, private readonly subprocess: SubprocessService, private readonly config: Config) {}

  /** `sh -c <wrapper> … bwrap --args 3 <mounts and namespaces> -- env --default-signal=TERM <shell> -c -- <command>`. */
  async argv(spec: BashExecSpec): Promise<string[]> {
    await this.ensureAvailable()
    const env = childEnv(spec.env)
    for (const [name, value] of Object.entries(env)) {
      if (name.includes('\0') || value.includes('\0')) throw new BashError(`environment entry ${JSON.stringify(name)} contains a NUL byte`, { code: BashErrorCode.BASH_INVALID_REQUEST })
    }
    const policy = this.policy(spec.owner)
    const hidden = policy.hidden.find((item) => within(spec.workdir, item.path))
    if (hidden) {
      throw new BashError(`working directory ${JSON.stringify(spec.workdir)} is hidden by the sandbox (denyRead: ${hidden.path})`, { code: BashErrorCode.BASH_INVALID_WORKDIR })
    }
    return this.wrapped(bwrapArgs(policy, spec.workdir), env, spec.command)
  }

  /** bwrap exits 128 + N when the shell died of signal N: the handle reports that as the signal, like a local shell. */
  wrap(handle: SubprocessHandle): SubprocessHandle {
    const mapped = (status: ExitStatus): ExitStatus => {
      const signal = status.signal === null && status.exitCode !== null && status.exitCode > 128 ? SIGNALS.get(status.exitCode - 128) : undefined
      return signal ? { exitCode: null, signal } : status
    }
    // bwrap exits as soon as the shell does; the namespace's init follows a moment later unless something the shell
    // started still runs. Waiting for that moment keeps a lingering init from passing for a leftover.
    const exited = handle.exited.then(async (status) => {
      await initSettled(handle.pid)
      return mapped(status)
    })
    const done = Promise.all([handle.done, exited]).then(([status]) => mapped(status))
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
   * What a command of `owner` (a session id) may touch: the session's workspace roots (its cwd, the configured
   * roots) and `writable` read-write, read-only roots (spill directories) readable, the credential paths hidden.
   * Without the workspace service, the host's cwd stands for the session's.
   */
  policy(owner: string | undefined): SandboxPolicy {
    const workspace = this.ctx.get('workspace')
    const cwd = workspace?.sessionCwd(owner) ?? process.cwd()
    const roots = workspace?.roots(cwd) ?? { writable: [cwd], readOnly: [] }
    const writable = existingDirs([...roots.writable, ...this.config.writable.map((path) => expandHome(path))])
    const readOnly = existingDirs(roots.readOnly).filter((dir) => !writable.includes(dir))
    const hidden = [...systemHidden(), ...hiddenPaths([...DEFAULT_DENY_READ, ...this.config.denyRead])]
    return { writable, readOnly, hidden, tmpDir: join(this.state(), 'tmp'), network: this.config.network }
  }

  /**
   * After disposal stopped every command: waits (bounded) until no process of this sandbox is left — tasks are
   * stopped at the same time, their namespaces die at SIGKILL at the latest — then removes the private /tmp.
   */
  async close(): Promise<void> {
    const dir = this.stateDir
    if (!dir) return
    this.stateDir = undefined
    for (let turn = 0; turn < 200 && processesUsing(dir); turn++) await new Promise((resolve) => setTimeout(resolve, Math.min(5 + turn * 5, 100)))
    rmSync(dir, { recursive: true, force: true })
  }

  private wrapped(args: readonly string[], env: Readonly<Record<string, string>>, command: string): string[] {
    const file = join(this.state(), 'args', String(++this.files))
    const records = Object.entries(env).flatMap(([name, value]) => ['--setenv', name, value])
    // 0600 in a 0700 directory that no sandbox mounts; the wrapper deletes it before bwrap starts.
    writeFileSync(file, records.length ? `${records.join('\0')}\0` : '', { mode: 0o600 })
    return ['sh', '-c', WRAPPER, 'sh', file, this.config.bwrapPath, '--args', '3', ...args, '--', 'env', '--default-signal=TERM', this.config.shell, '-c', '--', command]
  }

  private async ensureAvailable(): Promise<void> {
    const pending = (this.available ??= this.check())
    const problem = await pending
    if (!problem) return
    if (this.available === pending) this.available = undefined
    throw unavailableError(problem)
  }

  /** The probe runs a real command the way every command runs (wrapper, namespaces, mounts but the roots). */
  private check(): Promise<Unavailable | undefined> {
    const args = bwrapArgs({ writable: [], readOnly: [], hidden: [], tmpDir: join(this.state(), 'tmp'), network: this.config.network }, '/')
    return probe(this.subprocess, this.config.bwrapPath, this.wrapped(args, { PATH: process.env.PATH ?? '/usr/bin:/bin' }, 'true'))
  }

  private state(): string {
    if (!this.stateDir) {
      // 0700 (mkdtemp): other users never see what commands leave in /tmp, nor the argument files.
      const dir = mkdtempSync(join(tmpdir(), 'dsh-sandbox-'))
      mkdirSync(join(dir, 'tmp'))
      mkdirSync(join(dir, 'args'))
      this.stateDir = dir
    }
    return this.stateDir
  }
}

interface ProcStat { readonly pid: number; readonly comm: string; readonly state: string; readonly ppid: number; readonly pgrp: number }

function procStat(entry: string): ProcStat | undefined {
  try {
    const text = readFileSync(`/proc/${entry}/stat`, 'latin1')
    const close = text.lastIndexOf(')')
    const fields = text.slice(close + 2).split(' ')
    return { pid: Number(entry), comm: text.slice(text.indexOf('(') + 1, close), state: fields[0] ?? '', ppid: Number(fields[1]), pgrp: Number(fields[2]) }
  } catch {
    return undefined
  }
}

function processes(): ProcStat[] {
  let entries: string[]
  try {
    entries = readdirSync('/proc')
  } catch {
    return []
  }
  return entries.filter((entry) => /^\d+$/.test(entry)).map(procStat).filter((stat): stat is ProcStat => stat !== undefined && stat.state !== 'Z' && stat.state !== 'X')
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
    const stat = procStat(String(init.pid))
    if (!stat || stat.state === 'Z' || stat.state === 'X' || stat.pgrp !== leader) return
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
  let entries: string[]
  try {
    entries = readdirSync('/proc')
  } catch {
    return false
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'latin1').includes(dir)) return true
    } catch {
      // gone meanwhile
    }
  }
  return false
}
