/*
 * TEMPORARY adapter: the open-then-check API that helper `fs` is adding to @deepseek-ai/dsh-workspace, with the same
 * signatures, over the workspace service as it is today (roots, no hidden paths). Deleted when that API is merged:
 * the tools then import these names from the workspace package instead.
 */
import { constants, type Stats } from 'node:fs'
import { mkdir, open, readlink, type FileHandle } from 'node:fs/promises'
import { basename, dirname, join, resolve, sep } from 'node:path'
import type { Context } from 'cordis'
import { outsideMessage, WorkspaceError, WorkspaceErrorCode } from '@deepseek-ai/dsh-workspace'

export type Access = 'read' | 'write'

export interface PathPolicy {
  readonly writable: readonly string[]
  readonly readOnly: readonly string[]
  readonly hidden: readonly string[]
}

export interface OpenOptions {
  readonly cwd: string
  readonly tool: string
  readonly access: Access
  readonly policy: PathPolicy | undefined
}

export interface OpenedFile extends AsyncDisposable {
  readonly handle: FileHandle
  readonly real: string
  readonly absolute: string
  readonly stats: Stats
  close(): Promise<void>
}

export interface OpenedDir extends AsyncDisposable {
  readonly handle: FileHandle
  readonly real: string
  readonly absolute: string
  readonly fdPath: string
  readonly stats: Stats
  close(): Promise<void>
}

/** `ctx.workspace.policy(cwd)` as it will be. */
export function policyOf(ctx: Context, cwd: string): PathPolicy | undefined {
  const roots = ctx.get('workspace')?.roots(cwd)
  return roots && { writable: roots.writable, readOnly: roots.readOnly, hidden: [] }
}

const within = (path: string, root: string) => path === root || path.startsWith(root.endsWith(sep) ? root : root + sep)

export function checkReal(real: string, options: OpenOptions, absolute: string = real): void {
  const { policy } = options
  if (!policy) return
  if (policy.hidden.some((hidden) => within(real, hidden))) {
    throw new WorkspaceError(`${options.tool} refused: ${JSON.stringify(absolute)} is hidden`, { code: 'WORKSPACE_HIDDEN' })
  }
  if (policy.writable.some((root) => within(real, root))) return
  const readOnly = policy.readOnly.some((root) => within(real, root))
  if (readOnly && options.access === 'read') return
  if (readOnly) throw new WorkspaceError(`${options.tool} refused: ${JSON.stringify(absolute)} is in a read-only root`, { code: 'WORKSPACE_READ_ONLY' })
  throw new WorkspaceError(outsideMessage(options.tool, absolute, real, real !== absolute, { writable: policy.writable, readOnly: policy.readOnly }), { code: WorkspaceErrorCode.WORKSPACE_OUTSIDE_ROOTS })
}

export async function openFile(path: string, options: OpenOptions): Promise<OpenedFile> {
  const absolute = resolve(options.cwd, path)
  return opened(await open(absolute, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY), absolute, options)
}

export async function openDirectory(path: string, options: OpenOptions & { readonly create?: boolean }): Promise<OpenedDir> {
  const absolute = resolve(options.cwd, path)
  const flags = constants.O_RDONLY | constants.O_DIRECTORY
  const missing: string[] = []
  let existing = absolute
  let dir: OpenedDir
  for (;;) {
    try {
      dir = withFdPath(await opened(await open(existing, flags), existing, options))
      break
    } catch (error) {
      if (!options.create || (error as NodeJS.ErrnoException).code !== 'ENOENT' || dirname(existing) === existing) throw error
      missing.unshift(basename(existing))
      existing = dirname(existing)
    }
  }
  for (const name of missing) {
    const parent = dir
    try {
      checkReal(join(parent.real, name), { ...options, access: 'write' }, join(parent.absolute, name))
      await mkdir(`${parent.fdPath}/${name}`).catch((error: NodeJS.ErrnoException) => { if (error.code !== 'EEXIST') throw error })
      dir = withFdPath(await opened(await open(`${parent.fdPath}/${name}`, flags | constants.O_NOFOLLOW), join(parent.absolute, name), options))
    } finally {
      await parent.close()
    }
  }
  return dir
}

async function opened(handle: FileHandle, absolute: string, options: OpenOptions): Promise<OpenedFile> {
  try {
    const [real, stats] = await Promise.all([readlink(`/proc/self/fd/${handle.fd}`), handle.stat()])
    checkReal(real, options, absolute)
    let closing: Promise<void> | undefined
    const close = () => (closing ??= handle.close())
    return { handle, real, absolute, stats, close, [Symbol.asyncDispose]: close }
  } catch (error) {
    await handle.close()
    throw error
  }
}

function withFdPath(file: OpenedFile): OpenedDir {
  return { ...file, fdPath: `/proc/${process.pid}/fd/${file.handle.fd}` }
}
