import { resolveTrusted, SYSTEM_PATH } from '@deepseek-ai/dsh-subprocess'
import { within } from '@deepseek-ai/dsh-tools'
import type { Unavailable } from './probe.ts'

/** The programs dsh's host side runs to start a sandboxed command, as trusted real paths (resolved once). */
export interface Programs {
  readonly bwrap: string
  /** The POSIX shell of the wrapper (and of the reaper). */
  readonly sh: string
  /** GNU env: the wrapper's `env -i`, and `env --default-signal=TERM` inside. */
  readonly env: string
  /** The command's shell (`bash-local.shell`). */
  readonly shell: string
}

const INSTALL =
  'install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap; Arch: pacman -S bubblewrap), ' +
  'or point "bash-sandbox": {"bwrapPath": "/path/to/bwrap"} at it'

/**
 * Resolves every program once: an absolute path as written, a bare name in SYSTEM_PATH — never the session's PATH,
 * where npx puts `<cwd>/node_modules/.bin` first — each verified (owned by root or this user, no ancestor writable
 * by others). Returns what is wrong with the first that fails.
 */
export function resolvePrograms(bwrapPath: string, shell: string): Programs | Unavailable {
  const bwrap = resolveTrusted(bwrapPath)
  if ('problem' in bwrap) {
    const missing = /does not exist$|^no "/.test(bwrap.problem)
    return missing
      ? {
          why: `bubblewrap is not installed (no ${JSON.stringify(bwrapPath)} found${bwrapPath.includes('/') ? '' : ` in ${SYSTEM_PATH}`})`,
          fix: INSTALL,
        }
      : {
          why: `bubblewrap is not trusted: ${bwrap.problem}`,
          fix: `${INSTALL}, in a directory only root (or you) can write`,
        }
  }
  const found: Record<string, string> = {}
  for (const [role, name] of [
    ['sh', 'sh'],
    ['env', 'env'],
    ['shell', shell],
  ] as const) {
    const program = resolveTrusted(name)
    if ('problem' in program) {
      return {
        why: `the ${role === 'shell' ? `shell ${JSON.stringify(shell)}` : `helper ${JSON.stringify(name)}`} has no trusted path: ${program.problem}`,
        fix: `install it in ${SYSTEM_PATH}${role === 'shell' ? ', or set "bash-local": {"shell": "/absolute/path"}' : ''}`,
      }
    }
    found[role] = program.path
  }
  return { bwrap: bwrap.path, sh: found.sh as string, env: found.env as string, shell: found.shell as string }
}

/**
 * What is wrong when a program (or the sandbox's own state directory, which holds the seccomp filter and the
 * argument files) lies inside a directory this command may write: a command could replace it before the next call.
 * Undefined when nothing is.
 */
export function writableProblem(
  programs: Programs,
  stateDir: string,
  writable: readonly string[],
): Unavailable | undefined {
  for (const [role, path] of Object.entries(programs)) {
    const root = writable.find((dir) => within(path, dir))
    if (root !== undefined) {
      return {
        why: `${role} (${path}) lies inside the writable directory ${root}, where a command can replace it`,
        fix: `keep ${path} out of the writable roots (workspace.roots, bash-sandbox.writable, the session's cwd)`,
      }
    }
  }
  const root = writable.find((dir) => within(stateDir, dir))
  if (root !== undefined) {
    return {
      why: `the sandbox's state directory ${stateDir} lies inside the writable directory ${root}`,
      fix: 'point TMPDIR at a directory outside the writable roots',
    }
  }
  return undefined
}
