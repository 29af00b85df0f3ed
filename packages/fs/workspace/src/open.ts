import { constants, fstatSync, readlinkSync, statSync, type Stats } from 'node:fs'
import { mkdir, open, readlink, realpath, type FileHandle } from 'node:fs/promises'
import { basename, dirname, join, resolve } from 'node:path'
import {
  hiddenMessage,
  loopMessage,
  MAX_LINKS,
  outsideMessage,
  readOnlyMessage,
  refusal,
  WorkspaceErrorCode,
} from './errors.ts'
import { within } from '@deepseek-ai/dsh-tools'
import { hiddenBy, identity, type Access, type PathPolicy } from './policy.ts'

export interface OpenOptions {
  /** The session cwd: relative paths resolve against it. */
  readonly cwd: string
  /** Named in refusal texts. */
  readonly tool: string
  readonly access: Access
  /** Undefined = unconfined (no workspace loaded): the same mechanics, no checks. */
  readonly policy: PathPolicy | undefined
}

/** An open, verified file: its descriptor's real path (readlink /proc/self/fd/N) was checked, not a path string. */
export interface OpenedFile extends AsyncDisposable {
  /** O_RDONLY | O_NONBLOCK | O_NOCTTY: a FIFO cannot hang the open, a terminal does not become ours. */
  readonly handle: FileHandle
  readonly real: string
  /** The path as given, made absolute (for texts). */
  readonly absolute: string
  /** fstat of the descriptor. */
  readonly stats: Stats
  close(): Promise<void>
}

/**
 * An open, verified directory. `fdPath` is `/proc/<pid>/fd/<n>`: it names exactly this directory, so mkdir, rename
 * or open of `${fdPath}/${name}` and a child's `cwd: fdPath` cannot be redirected by a swapped link.
 */
export interface OpenedDir extends AsyncDisposable {
  readonly handle: FileHandle
  readonly real: string
  readonly absolute: string
  readonly fdPath: string
  readonly stats: Stats
  close(): Promise<void>
}

const FILE_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY
const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY

/**
 * Opens `path` (against `cwd`) for reading, then checks what was opened: the real path of the descriptor against
 * the policy, and the identity of it and of its directories against the hidden ones. OS errors (ENOENT, ELOOP, …)
 * are rethrown as they are, unless the path, judged without opening, lies outside the roots or is hidden (then the
 * refusal: nothing outside tells whether it exists).
 */
export async function openFile(path: string, options: OpenOptions): Promise<OpenedFile> {
  const absolute = resolve(options.cwd, path)
  return opened(await openVerified(absolute, absolute, FILE_FLAGS, options))
}

/**
 * Opens the directory `path` and checks it as openFile does. With `create`, missing components are made one at a
 * time inside the verified parent (`mkdir ${fdPath}/${name}`, then opened O_NOFOLLOW and verified), only where
 * write access is allowed.
 */
export async function openDirectory(
  path: string,
  options: OpenOptions & { readonly create?: boolean },
): Promise<OpenedDir> {
  const absolute = resolve(options.cwd, path)
  if (!options.create) return openDir(absolute, absolute, DIR_FLAGS, options)
  const missing: string[] = []
  let existing = absolute
  let dir: OpenedDir
  for (;;) {
    try {
      dir = await openDir(existing, existing, DIR_FLAGS, options)
      break
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || dirname(existing) === existing) throw error
      missing.unshift(basename(existing))
      existing = dirname(existing)
    }
  }
  for (const name of missing) {
    const parent = dir
    try {
      checkReal(join(parent.real, name), { ...options, access: 'write' }, join(parent.absolute, name))
      await mkdir(`${parent.fdPath}/${name}`).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'EEXIST') throw error
      })
      dir = await openDir(
        `${parent.fdPath}/${name}`,
        join(parent.absolute, name),
        DIR_FLAGS | constants.O_NOFOLLOW,
        options,
      )
    } finally {
      await parent.close()
    }
  }
  return dir
}

async function openDir(openPath: string, absolute: string, flags: number, options: OpenOptions): Promise<OpenedDir> {
  const verified = await openVerified(openPath, absolute, flags, options)
  return { ...opened(verified), fdPath: `/proc/${process.pid}/fd/${verified.handle.fd}` }
}

/** Opens `openPath`, then judges the descriptor (its real path, its and its directories' identities); closes it on refusal. */
async function openVerified(
  openPath: string,
  absolute: string,
  flags: number,
  options: OpenOptions,
): Promise<{ handle: FileHandle; real: string; absolute: string; stats: Stats }> {
  let handle: FileHandle
  try {
    handle = await open(openPath, flags)
  } catch (error) {
    return await unopened(absolute, error, options)
  }
  try {
    const real = fdReal(handle)
    const stats = fstatSync(handle.fd)
    verify(handle, real, stats, absolute, options)
    return { handle, real, absolute, stats }
  } catch (error) {
    await handle.close()
    throw error
  }
}

function opened<T extends { handle: FileHandle }>(
  parts: T,
): T & { close(): Promise<void>; [Symbol.asyncDispose](): Promise<void> } {
  let closing: Promise<void> | undefined
  const close = () => (closing ??= parts.handle.close())
  return { ...parts, close, [Symbol.asyncDispose]: close }
}

/**
 * The real path of an open descriptor, as the kernel knows it now. This and the other checks after the open are
 * synchronous: each is one syscall on a descriptor or an inode already in the cache (microseconds), where a
 * promise would cost a thread-pool round trip each.
 */
function fdReal(handle: FileHandle): string {
  return readlinkSync(`/proc/self/fd/${handle.fd}`)
}

/**
 * Throws the refusal for a real path: hidden (at or below a hidden path, by its rules), outside every root, or,
 * for write access, outside the writable roots. `absolute` (default `real`) is the path as the model gave it.
 */
export function checkReal(real: string, options: OpenOptions, absolute: string = real): void {
  const { policy, tool } = options
  if (!policy) return
  const rule = hiddenBy(real, policy.rules) ?? hiddenBy(absolute, policy.rules)
  if (rule) throw refusal(hiddenMessage(tool, absolute, real, rule.shown, false), WorkspaceErrorCode.WORKSPACE_HIDDEN)
  if (policy.writable.some((root) => within(real, root))) return
  const readOnly = policy.readOnly.some((root) => within(real, root))
  if (readOnly && options.access === 'read') return
  if (readOnly) throw refusal(readOnlyMessage(tool, absolute, policy), WorkspaceErrorCode.WORKSPACE_READ_ONLY)
  const throughLink =
    real !== absolute &&
    [...policy.writable, ...policy.readOnly, resolve(options.cwd)].some((root) => within(absolute, root))
  throw refusal(outsideMessage(tool, absolute, real, throughLink, policy), WorkspaceErrorCode.WORKSPACE_OUTSIDE_ROOTS)
}

/**
 * What was opened, checked: its real path, then whether it or a directory above it (up to its root) is a hidden
 * entry under another name (renamed, or hard-linked), then that the descriptor still has the real path the
 * directories were looked up by (a rename in between is refused, not guessed).
 */
function verify(handle: FileHandle, real: string, stats: Stats, absolute: string, options: OpenOptions): void {
  const { policy, tool } = options
  if (!policy) return
  checkReal(real, options, absolute)
  if (policy.identities.size === 0) return
  const renamed = (seenAt: string) =>
    refusal(hiddenMessage(tool, absolute, real, seenAt, true), WorkspaceErrorCode.WORKSPACE_HIDDEN)
  const own = policy.identities.get(identity(stats))
  if (own !== undefined) throw renamed(own)
  const root =
    [...policy.writable, ...policy.readOnly]
      .filter((dir) => within(real, dir))
      .sort((a, b) => b.length - a.length)[0] ?? real
  const above: string[] = []
  for (let dir = dirname(real); within(dir, root); dir = dirname(dir)) {
    above.push(dir)
    if (dir === dirname(dir)) break
  }
  for (const dir of above) {
    const info = statSync(dir, { throwIfNoEntry: false })
    if (!info) throw moved(tool, absolute, dir)
    const seenAt = policy.identities.get(identity(info))
    if (seenAt !== undefined) throw renamed(seenAt)
  }
  const now = fdReal(handle)
  if (now !== real) throw moved(tool, absolute, real)
}

function moved(tool: string, absolute: string, where: string) {
  return refusal(
    `${tool} refused: ${JSON.stringify(absolute)} was moved while it was being opened (${JSON.stringify(where)} changed), so where it lies cannot be shown; try again`,
    WorkspaceErrorCode.WORKSPACE_OUTSIDE_ROOTS,
  )
}

/**
 * An open that failed: a path outside the roots (or hidden, or through a link loop) is refused, judged by its
 * path alone, so the OS error never tells the model whether something exists there; inside, the OS error as is.
 */
async function unopened(absolute: string, error: unknown, options: OpenOptions): Promise<never> {
  await checkPath(absolute, options)
  throw error
}

/**
 * Judges a path by its name alone, without opening it (links resolved by hand; a missing path by its deepest
 * existing ancestor), and returns that real path or throws the refusal. Only for wording what a tool says about a
 * path it will not open (a FIFO, a device, a missing file): every path a tool does open is checked by its descriptor.
 */
export async function checkPath(path: string, options: OpenOptions): Promise<string> {
  const absolute = resolve(options.cwd, path)
  if (!options.policy) return absolute
  const resolved = await realPath(absolute)
  if (resolved === undefined)
    throw refusal(loopMessage(options.tool, absolute, options.policy), WorkspaceErrorCode.WORKSPACE_OUTSIDE_ROOTS)
  checkReal(resolved, options, absolute)
  return resolved
}

/**
 * realpath of the deepest existing ancestor, joined with the components below it; a dangling symbolic link on the
 * way is followed by hand (a file created at its target later would be reached through it). Undefined when links
 * loop. Only used to word the refusal of a path that could not be opened.
 */
async function realPath(absolute: string, links = 0): Promise<string | undefined> {
  if (links > MAX_LINKS) return undefined
  const rest: string[] = []
  let current = absolute
  for (;;) {
    try {
      return join(await realpath(current), ...rest.reverse())
    } catch {
      const target = await readlink(current).catch(() => undefined)
      if (target !== undefined) return realPath(resolve(dirname(current), target, ...rest.reverse()), links + 1)
      const parent = dirname(current)
      if (parent === current) return absolute
      rest.push(basename(current))
      current = parent
    }
  }
}
