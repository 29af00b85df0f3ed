import { createHash } from 'node:crypto'
import { lstatSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, dirname, isAbsolute, join } from 'node:path'
import { type Dir, makePrivateTempDir, openPrivateDir, PrivateDirError } from '@deepseek-ai/dsh-private-dir'
import { within } from '@deepseek-ai/dsh-tools'

/**
 * The directories a trusted program is looked up in, never the session's PATH: npx puts `<cwd>/node_modules/.bin`
 * first, an activated `.venv/bin` lies inside the workspace, and a command can write either.
 */
export const SYSTEM_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'

/** A program dsh's host side may execute: its real path, and where it was found. */
export interface TrustedProgram {
  /** The real path (every symbolic link resolved): what is executed. */
  readonly path: string
  /** The name or path it was asked for. */
  readonly asked: string
}

/** Why a program is not trusted, in words that follow "<name> is not trusted: ". */
export type Distrust = { readonly problem: string }

/**
 * Resolves `program` to a trusted absolute path: an absolute path is taken as written, a bare name is looked up in
 * SYSTEM_PATH (the first candidate that passes wins), a relative path with a slash is refused. The result is
 * verified with `untrustedReason`; `writable` are directories a sandboxed command can write (never trusted).
 */
export function resolveTrusted(program: string, writable: readonly string[] = []): TrustedProgram | Distrust {
  if (program.includes('/') && !isAbsolute(program))
    return {
      problem: `${JSON.stringify(program)} is a relative path; give an absolute path or a bare name (looked up in ${SYSTEM_PATH})`,
    }
  const candidates = isAbsolute(program) ? [program] : SYSTEM_PATH.split(':').map((dir) => join(dir, program))
  let first: string | undefined
  for (const candidate of candidates) {
    let real: string
    try {
      real = realpathSync(candidate)
    } catch {
      continue
    }
    const reason = untrustedReason(real, writable)
    if (reason === undefined) return { path: real, asked: program }
    first ??= `${candidate}${real === candidate ? '' : ` (${real})`} ${reason}`
  }
  if (first) return { problem: first }
  return {
    problem: isAbsolute(program) ? `${program} does not exist` : `no ${JSON.stringify(program)} in ${SYSTEM_PATH}`,
  }
}

/**
 * Undefined when `real` (a real path) may be executed by dsh's host side: a regular executable file that lies
 * outside every `writable` directory, owned (like each of its ancestors) by root or by this user, with no ancestor
 * and not the file itself writable by group or others (a root-owned sticky directory such as /tmp excepted: others
 * cannot rename what is ours in it). Otherwise says why, e.g. "lies inside the writable directory /w".
 */
export function untrustedReason(real: string, writable: readonly string[] = []): string | undefined {
  const root = writable.find((dir) => within(real, dir))
  if (root !== undefined) return `lies inside the writable directory ${root}, where a command can replace it`
  let info
  try {
    info = statSync(real)
  } catch (error) {
    return `cannot be examined (${(error as NodeJS.ErrnoException).code ?? String(error)})`
  }
  if (!info.isFile()) return 'is not a regular file'
  if ((info.mode & 0o111) === 0) return 'is not executable'
  const uid = process.geteuid?.() ?? 0
  for (let path = real; ; path = dirname(path)) {
    const entry = lstatSync(path)
    if (entry.uid !== 0 && entry.uid !== uid)
      return `${path === real ? 'is' : `lies in ${path}, which is`} owned by another user (uid ${entry.uid})`
    const sticky = (entry.mode & 0o1000) !== 0 && entry.uid === 0 && path !== real
    if ((entry.mode & 0o022) !== 0 && !sticky)
      return `${path === real ? 'is' : `lies in ${path}, which is`} writable by group or others`
    if (path === dirname(path)) return undefined
  }
}

/**
 * A read-only copy of `source` that a sandboxed command cannot replace, for a program that lies where one may write:
 * `<os tmpdir>/dsh-bin-<uid>/<sha-256 prefix>-<name>` (directory 0700, file 0500, both this user's), reused by later
 * processes when it still holds exactly the bytes read from `source` now, else written anew (to a temporary name,
 * then renamed into place) and checked after the write: owner, mode, size and SHA-256. A cache directory that is not
 * this user's private directory is not used: a fresh one (`dsh-bin-XXXXXX`, removed at exit) is made instead.
 * `accept` sees the SHA-256 (hex) of the bytes read, before anything is written, and throws to refuse them.
 */
export function privateCopy(source: string, accept?: (sha256: string) => void): string {
  const data = readFileSync(source)
  const digest = createHash('sha256').update(data).digest('hex')
  // Judged on the bytes that are copied: a file swapped after this read never reaches the copy.
  accept?.(digest)
  const name = `${digest.slice(0, 16)}-${basename(source)}`
  const uid = process.geteuid?.() ?? 0
  using dir = cacheDir(uid)
  const path = join(dir.path, name)
  if (copyProblem(path, data.length, digest, uid) === undefined) return path
  const temporary = dir.at(`.${name}.${process.pid}.${Date.now()}`)
  writeFileSync(temporary, data, { mode: 0o500, flag: 'wx' })
  renameSync(temporary, dir.at(name))
  const problem = privateDirProblem(dir.path, uid) ?? copyProblem(path, data.length, digest, uid)
  if (problem !== undefined) throw new Error(`the private copy of ${source} failed its check: ${problem}`)
  return path
}

/** `<tmpdir>/dsh-bin-<uid>` when it is this user's private directory, else a fresh one removed at exit. */
function cacheDir(uid: number): Dir {
  try {
    return openPrivateDir(join(tmpdir(), `dsh-bin-${uid}`), { writable: 'refuse' })
  } catch (error) {
    if (!(error instanceof PrivateDirError)) throw error
  }
  const dir = makePrivateTempDir(tmpdir(), 'dsh-bin-')
  const made = dir.path
  process.once('exit', () => rmSync(made, { recursive: true, force: true }))
  return dir
}

function privateDirProblem(dir: string, uid: number): string | undefined {
  const info = lstatSync(dir)
  return !info.isDirectory() || info.uid !== uid || (info.mode & 0o777) !== 0o700
    ? `${dir} is not a private directory of this user`
    : undefined
}

/** Why `path` is not the 0500 copy of these bytes (undefined when it is). */
function copyProblem(path: string, size: number, digest: string, uid: number): string | undefined {
  let info
  try {
    info = lstatSync(path)
  } catch {
    return `${path} does not exist`
  }
  if (!info.isFile() || info.uid !== uid || (info.mode & 0o7777) !== 0o500 || info.size !== size)
    return `${path} is not the read-only copy made`
  return createHash('sha256').update(readFileSync(path)).digest('hex') === digest
    ? undefined
    : `${path} differs from its source`
}
