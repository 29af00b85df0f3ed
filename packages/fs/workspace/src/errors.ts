import { HarnessError } from '@deepseek-ai/dsh-tools'

export const WorkspaceErrorCode = {
  /** The path, once every symbolic link is resolved, is outside every workspace root. */
  WORKSPACE_OUTSIDE_ROOTS: 'WORKSPACE_OUTSIDE_ROOTS',
  /** The path is (or lies below) a hidden path: a credential store, `denyRead`, dsh's token or config file. */
  WORKSPACE_HIDDEN: 'WORKSPACE_HIDDEN',
  /** A write to a read-only root, or outside the writable roots. */
  WORKSPACE_READ_ONLY: 'WORKSPACE_READ_ONLY',
  /** A writable root (the session cwd included) is `/`, the home directory, or holds credential stores. */
  WORKSPACE_ROOT_REFUSED: 'WORKSPACE_ROOT_REFUSED',
} as const
export type WorkspaceErrorCode = (typeof WorkspaceErrorCode)[keyof typeof WorkspaceErrorCode]

export class WorkspaceError extends HarnessError {
  override name = 'WorkspaceError'
}

/** The roots as the texts list them. */
export interface WorkspaceRoots {
  readonly writable: readonly string[]
  readonly readOnly: readonly string[]
}

/** Links followed by hand before a path counts as unresolvable (Linux's own limit). */
export const MAX_LINKS = 40

function listRoots(roots: WorkspaceRoots): string {
  return roots.writable.join(', ') + (roots.readOnly.length ? `; read-only: ${roots.readOnly.join(', ')}` : '')
}

/** The refusal the model sees: which path, where it really leads, what the roots are, what to do instead. */
export function outsideMessage(
  tool: string,
  absolute: string,
  real: string,
  throughLink: boolean,
  roots: WorkspaceRoots,
): string {
  const where =
    throughLink && real !== absolute
      ? `${JSON.stringify(absolute)} resolves through a symbolic link to ${JSON.stringify(real)}, which is outside the workspace roots`
      : `${JSON.stringify(absolute)} is outside the workspace roots`
  return `${tool} refused: ${where} (${listRoots(roots)}); use a path inside them`
}

/** A path whose links never end: it resolves nowhere, so it is refused (fail closed), and the text says why. */
export function loopMessage(tool: string, absolute: string, roots: WorkspaceRoots): string {
  return `${tool} refused: ${JSON.stringify(absolute)} cannot be resolved: its symbolic links loop (or chain more than ${MAX_LINKS} deep), so it cannot be shown to lie inside the workspace roots (${listRoots(roots)}); use a path inside them`
}

/** `entry` is how the hidden path was configured (`~/.ssh`), or the hidden path a renamed directory was seen at. */
export function hiddenMessage(tool: string, absolute: string, real: string, entry: string, renamed: boolean): string {
  const where =
    real === absolute ? JSON.stringify(absolute) : `${JSON.stringify(absolute)} (really ${JSON.stringify(real)})`
  const why = renamed
    ? `it lies in a hidden directory under another name (renamed or linked from ${JSON.stringify(entry)})`
    : `it lies at or below the hidden path ${entry}`
  return `${tool} refused: ${where} is hidden: ${why}. Credential stores, workspace.denyRead, dsh's token and config file are never read or written by the tools; work with files outside them`
}

export function readOnlyMessage(tool: string, absolute: string, roots: WorkspaceRoots): string {
  return `${tool} refused: ${JSON.stringify(absolute)} is not in a writable root (writable: ${roots.writable.join(', ')}${roots.readOnly.length ? `; read-only: ${roots.readOnly.join(', ')}` : ''}); write inside a writable root`
}

export function rootRefusedMessage(tool: string, root: string, why: string): string {
  return `${tool} refused: the workspace root ${JSON.stringify(root)} is too broad (${why}): a model could read or change everything below it. Pass a project directory with --cwd (or as the client's root); to allow this root anyway, set "workspace": { "allowBroadRoots": true } in the config`
}

export function refusal(message: string, code: WorkspaceErrorCode): WorkspaceError {
  return new WorkspaceError(message, { code })
}
