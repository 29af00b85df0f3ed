import type { SubprocessService } from '@deepseek-ai/dsh-subprocess'
import { HarnessError } from '@deepseek-ai/dsh-tools'

export const SandboxErrorCode = {
  /** The sandbox cannot be set up here (bubblewrap missing, namespaces blocked): nothing was run. */
  BASH_SANDBOX_UNAVAILABLE: 'BASH_SANDBOX_UNAVAILABLE',
} as const
export type SandboxErrorCode = (typeof SandboxErrorCode)[keyof typeof SandboxErrorCode]

export class SandboxError extends HarnessError {
  override name = 'SandboxError'
}

/** Why the sandbox is unavailable, and what the user can do about it. */
export interface Unavailable {
  readonly why: string
  readonly fix: string
}

/** The error every bash call gets while the sandbox is unavailable: fail closed, never a silent unconfined run. */
export function unavailableError(problem: Unavailable, program = 'bash'): SandboxError {
  return new SandboxError(
    `${program} runs sandboxed here, but the sandbox cannot be set up: ${problem.why}. Nothing was run. To fix it: ${problem.fix}; ` +
      'or start dsh without --sandbox to run commands unconfined.',
    { code: SandboxErrorCode.BASH_SANDBOX_UNAVAILABLE },
  )
}

const INSTALL =
  'install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap; Arch: pacman -S bubblewrap), ' +
  'or point "bash-sandbox": {"bwrapPath": "/path/to/bwrap"} at it'
const NAMESPACES =
  'allow unprivileged user namespaces: on Ubuntu 23.10+ AppArmor restricts them (load an AppArmor profile that grants "userns" to bwrap, ' +
  'or sysctl kernel.apparmor_restrict_unprivileged_userns=0), on older Debian kernels sysctl kernel.unprivileged_userns_clone=1, ' +
  'and user.max_user_namespaces must not be 0; inside a container, allow unshare (e.g. docker run --security-opt seccomp=unconfined)'

/**
 * Turns a failed bubblewrap start into why + fix. `spawnError` is set when bwrap itself could not be started;
 * otherwise `stderr` is what it printed before exiting.
 */
export function classify(
  bwrapPath: string,
  spawnError: NodeJS.ErrnoException | undefined,
  stderr: string,
): Unavailable {
  if (spawnError) {
    if (spawnError.code === 'ENOENT')
      return { why: `bubblewrap is not installed (no ${JSON.stringify(bwrapPath)} found)`, fix: INSTALL }
    return {
      why: `bubblewrap (${JSON.stringify(bwrapPath)}) cannot be started: ${spawnError.code ?? spawnError.message}`,
      fix: INSTALL,
    }
  }
  const line = stderr.trim().split('\n').filter(Boolean).pop() ?? 'it exited without saying why'
  // The wrapper execs bwrap through env(1), which says so when there is none.
  if (/^env: .*No such file or directory/.test(line))
    return { why: `bubblewrap is not installed (no ${JSON.stringify(bwrapPath)} found)`, fix: INSTALL }
  if (
    /namespace|uid map|gid map|setgroups|Operation not permitted|Permission denied|ENOSPC|No permissions/i.test(line)
  ) {
    return { why: `bubblewrap cannot create the sandbox's namespaces (${line})`, fix: NAMESPACES }
  }
  return {
    why: `bubblewrap failed to set up the sandbox (${line})`,
    fix: `run "${bwrapPath} --ro-bind / / --unshare-all -- true" to see the problem, then ${NAMESPACES}`,
  }
}

/**
 * Runs `argv` (a sandboxed `true`) once through ctx.subprocess: resolves undefined when the sandbox works, else what
 * is wrong. Bounded: a probe that hangs is stopped after `timeoutMs`.
 */
export async function probe(
  subprocess: SubprocessService,
  bwrapPath: string,
  argv: readonly string[],
  timeoutMs = 10_000,
): Promise<Unavailable | undefined> {
  const limit = AbortSignal.timeout(timeoutMs)
  let handle
  try {
    handle = await subprocess.spawn({
      argv,
      cwd: '/',
      stdin: 'ignore',
      stdout: 'ignore',
      stderr: { maxBytes: 4096 },
      graceMs: 0,
      signal: limit,
    })
  } catch (error) {
    const cause = (error as { cause?: unknown }).cause
    return classify(bwrapPath, (cause ?? error) as NodeJS.ErrnoException, '')
  }
  const exit = await handle.done
  await handle.waitForExit()
  if (exit.exitCode === 0) return undefined
  if (limit.aborted) {
    return {
      why: `bubblewrap did not start a command within ${timeoutMs}ms`,
      fix: `run "${bwrapPath} --ro-bind / / --unshare-all -- true" to see the problem`,
    }
  }
  const stderr = handle.collected.stderr?.readFrom(0).text ?? ''
  return classify(bwrapPath, undefined, stderr || `exit ${exit.exitCode ?? exit.signal}`)
}
