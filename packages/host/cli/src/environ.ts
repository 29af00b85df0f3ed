import { closeSync, openSync, readFileSync, readSync, writeSync } from 'node:fs'
import { scrubbedParentEnv } from '@deepseek-ai/dsh-subprocess'

export interface Forgotten {
  /** The credential-looking names removed from this process's environment. */
  names: string[]
  /**
   * `'overwritten'`: their entries in the initial environment block (what `/proc/<pid>/environ` shows) are zeroed
   * too. `'untouched'`: that block could not be changed here (not Linux, no /proc, a refused write), so
   * `/proc/<pid>/environ` still shows them; `'none'`: there was nothing to forget.
   */
  initialBlock: 'overwritten' | 'untouched' | 'none'
}

/**
 * The names that the subprocess seam's scrub keeps from every child as credentials (KEY, TOKEN, SECRET, a password
 * in a URL, …): the tools never need them in the host either. The managed `DSH_*` namespace, also kept from
 * children, is dsh's own configuration, not a secret, and stays.
 */
export function credentialNames(env: NodeJS.ProcessEnv = process.env): string[] {
  const kept = scrubbedParentEnv(env)
  return Object.keys(env).filter(
    (name) => env[name] !== undefined && !Object.hasOwn(kept, name) && !name.startsWith('DSH_'),
  )
}

/**
 * Removes the credential names from this process's environment after start-up, so that a command cannot read them
 * back from its parent (`/proc/$PPID/environ`). Deleting from `process.env` alone is not enough on Linux: that
 * file shows the initial environment block on the stack, which unsetenv(3) leaves as it was. So after the delete
 * (nothing points into those entries any more) the entries are zeroed in place through `/proc/self/mem`.
 * `keep` spares names the host still has to read; `also` names more to forget whatever they look like (the
 * variable `--token-env` named: the HTTP token never reaches a command).
 */
export function forgetCredentials(keep: readonly string[] = [], also: readonly string[] = []): Forgotten {
  const extra = also.filter((name) => process.env[name] !== undefined)
  const names = [...new Set([...credentialNames(), ...extra])].filter((name) => !keep.includes(name))
  if (names.length === 0) return { names, initialBlock: 'none' }
  for (const name of names) delete process.env[name]
  let initialBlock: Forgotten['initialBlock'] = 'untouched'
  try {
    if (process.platform === 'linux' && zeroInitialEntries(new Set(names))) initialBlock = 'overwritten'
  } catch {
    /* no /proc, or the kernel refused the write: the block stays as it was, and we say so */
  }
  return { names, initialBlock }
}

/** Zeroes `NAME=value` for every name in the block between env_start and env_end (fields 50, 51 of /proc/self/stat). */
function zeroInitialEntries(names: ReadonlySet<string>): boolean {
  const stat = readFileSync('/proc/self/stat', 'latin1')
  // Fields after the command name, which is in parentheses and may hold spaces: the first is field 3.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  const start = Number(fields[50 - 3])
  const end = Number(fields[51 - 3])
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start <= 0 || end <= start) return false
  const fd = openSync('/proc/self/mem', 'r+')
  try {
    const block = Buffer.alloc(end - start)
    if (readSync(fd, block, 0, block.length, start) !== block.length) return false
    for (let from = 0; from < block.length; ) {
      const nul = block.indexOf(0, from)
      const to = nul === -1 ? block.length : nul
      const equals = block.indexOf(0x3d, from)
      if (equals !== -1 && equals < to && names.has(block.toString('utf8', from, equals))) {
        block.fill(0, from, to)
        // A Number position: Node 20 fails this write (EIO) when the position is a BigInt.
        writeSync(fd, block, from, to - from, start + from)
      }
      from = to + 1
    }
    return true
  } finally {
    closeSync(fd)
  }
}
