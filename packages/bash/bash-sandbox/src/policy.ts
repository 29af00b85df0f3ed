import { realpathSync, statSync } from 'node:fs'
import { dirname, sep } from 'node:path'
import { within } from '@deepseek-ai/dsh-tools'

/** What one sandboxed command may touch. Every path is absolute and real (bubblewrap mounts on real paths only). */
export interface SandboxPolicy {
  /** Bound read-write at their own path (the workspace roots, `writable`). */
  readonly writable: readonly string[]
  /**
   * Directories inside a writable root bound onto themselves (read-write): the ancestors, below the root,
   * of a hidden path. A mount point cannot be renamed (EBUSY), so a command cannot move a hidden path away from the
   * place where the next command's mask is put (`mv ~/.config ~/.config.x`, then read it in the next call).
   */
  readonly pinned?: readonly string[]
  /**
   * The root that is the session's pinned root (writable, or read-only for a search): bound from the descriptor the
   * wrapper opens as fd ROOT_FD (`/proc/self/fd/5`), not from its path, so a rename or a link swapped in never moves
   * what the command reads or writes.
   */
  readonly boundRoot?: string
  /** Bound read-only at their own path, after the private /tmp (so a spill directory under the host's /tmp shows). */
  readonly readOnly: readonly string[]
  /** Hidden: an empty read-only directory over each `dir`, /dev/null over each `file`. */
  readonly hidden: readonly HiddenPath[]
  /** The host directory bound at /tmp: private to the executor, kept between its commands. */
  readonly tmpDir: string
  readonly network: 'none' | 'host'
}

export interface HiddenPath {
  readonly path: string
  readonly kind: 'dir' | 'file'
  /** Files below a hidden directory that stay visible read-only (the resolver config under /run). */
  readonly keep?: readonly string[]
}

/**
 * The bubblewrap arguments (without the program and without the command after `--`), in mount order: later
 * mounts win, so the system is read-only, the private /tmp and the roots are writable on top of it, and the hidden
 * credential paths are masked last — also inside a writable root. Namespaces: a new user (when possible), PID,
 * IPC, UTS and cgroup namespace, and a network namespace with only a loopback unless `network` is `host`.
 */
export function bwrapArgs(policy: SandboxPolicy, workdir: string): string[] {
  // The namespace's init (pid 1) runs without the seccomp filter: its memory is not writable from inside.
  const args = [
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    ...INIT_MEMORY.flatMap((path) => ['--ro-bind', '/dev/null', path]),
    '--bind',
    policy.tmpDir,
    '/tmp',
  ]
  for (const dir of policy.writable)
    args.push('--bind', dir === policy.boundRoot ? `/proc/self/fd/${ROOT_FD}` : dir, dir)
  for (const dir of policy.readOnly)
    args.push('--ro-bind', dir === policy.boundRoot ? `/proc/self/fd/${ROOT_FD}` : dir, dir)
  for (const dir of policy.pinned ?? []) args.push('--bind', dir, dir)
  for (const hidden of policy.hidden) {
    if (hidden.kind === 'file') {
      args.push('--ro-bind', '/dev/null', hidden.path)
      continue
    }
    args.push('--tmpfs', hidden.path)
    for (const file of hidden.keep ?? []) args.push('--ro-bind', file, file)
    args.push('--remount-ro', hidden.path)
  }
  // No `--die-with-parent`: the namespace's init (bwrap's pid 1, in the command's process group) outlives the
  // shell while anything it started runs, so the executor adopts it as a task; stopping that group kills the init,
  // and with it the whole namespace. No capabilities: bwrap run by root keeps them otherwise, and root inside
  // could unmount a mask or remount / writable.
  args.push('--unshare-all', '--cap-drop', 'ALL')
  if (policy.network === 'host') args.push('--share-net')
  args.push('--chdir', workdir)
  return args
}

/** The descriptor the wrapper opens the session's pinned root as (3 and 4 are the arguments and the filter). */
export const ROOT_FD = 5

/** /proc/1/mem of the namespace's init, masked: writing it would run code outside the seccomp filter. */
const INIT_MEMORY = ['/proc/1/mem', '/proc/1/task/1/mem']

/**
 * The directories to pin (see SandboxPolicy.pinned): for each hidden path strictly inside a writable root, every
 * directory between the root (exclusive) and the hidden path (exclusive), parents first, without duplicates.
 */
export function pinnedAncestors(hidden: readonly HiddenPath[], writable: readonly string[]): string[] {
  const pinned = new Set<string>()
  for (const item of hidden) {
    for (const root of writable) {
      if (item.path === root || !within(item.path, root)) continue
      const chain: string[] = []
      for (let dir = dirname(item.path); dir !== root && within(dir, root); dir = dirname(dir)) chain.unshift(dir)
      for (const dir of chain) pinned.add(dir)
    }
  }
  return [...pinned].sort((a, b) => a.split(sep).length - b.split(sep).length)
}

/**
 * Hidden whatever the config says: /run holds the host's Unix sockets (docker, dbus, systemd, the user's runtime
 * dir), which a read-only mount does not stop anyone from connecting to. The resolver config, when /etc/resolv.conf
 * leads there, stays visible so that `network: "host"` still resolves names.
 */
export function systemHidden(): HiddenPath[] {
  const run = existing('/run')
  if (run?.kind !== 'dir') return []
  const resolver = existing('/etc/resolv.conf')
  const keep = resolver?.kind === 'file' && within(resolver.real, run.real) ? [resolver.real] : []
  return [{ path: run.real, kind: 'dir', keep }]
}

/** The real path of an existing entry and what it is, or undefined when there is nothing there. */
export function existing(path: string): { real: string; kind: 'dir' | 'file' } | undefined {
  try {
    // Most of the credential list is absent on a given machine: one stat answers that, without an exception.
    if (!statSync(path, { throwIfNoEntry: false })) return undefined
    const real = realpathSync.native(path)
    const info = statSync(real)
    return { real, kind: info.isDirectory() ? 'dir' : 'file' }
  } catch {
    return undefined
  }
}

/** Existing directories among `paths`, as real paths, without duplicates. */
export function existingDirs(paths: readonly string[]): string[] {
  const dirs: string[] = []
  for (const path of paths) {
    const found = existing(path)
    if (found?.kind === 'dir' && !dirs.includes(found.real)) dirs.push(found.real)
  }
  return dirs
}

/**
 * The masks that still matter, outermost first: one strictly inside a masked directory, and not inside what that
 * mask keeps, is hidden by it already (every mask is a mount bwrap makes at each start, two for a directory, and the
 * spill root alone names a directory per session: masked whole, it needs none of them); one inside what a mask keeps
 * must be mounted after it, or the kept directory bound back over it would show what it hides.
 */
export function withoutCovered(hidden: readonly HiddenPath[]): HiddenPath[] {
  const dirs = hidden.filter((item) => item.kind === 'dir')
  const covered = (item: HiddenPath) =>
    dirs.some(
      (dir) =>
        dir.path !== item.path &&
        within(item.path, dir.path) &&
        !(dir.keep ?? []).some((kept) => within(item.path, kept)),
    )
  const depth = (path: string) => path.split(sep).length
  return hidden.filter((item) => !covered(item)).sort((a, b) => depth(a.path) - depth(b.path))
}

/** Existing entries among `paths` (absolute), as real paths: a path that does not exist needs no mask. */
export function hiddenPaths(paths: readonly string[]): HiddenPath[] {
  const hidden: HiddenPath[] = []
  for (const path of paths) {
    const found = existing(path)
    if (found && !hidden.some((item) => item.path === found.real)) hidden.push({ path: found.real, kind: found.kind })
  }
  return hidden
}
