import { realpathSync } from 'node:fs'
import { readlink, realpath } from 'node:fs/promises'
import { basename, dirname, join, resolve, sep } from 'node:path'
import { Context, Service } from 'cordis'
import Schema from 'schemastery'
import { HarnessError } from '@deepseek-ai/dsh-tools'

declare module 'cordis' {
  interface Context {
    workspace: Workspace
  }
}

export const name = 'workspace'

export interface Config {
  /** Directories the tools may use besides the session's cwd (writable for the bash sandbox). */
  roots: string[]
  /** Directories that may be read but are never writable (for the bash sandbox). */
  readOnly: string[]
}

export const Config: Schema<Partial<Config>, Config> = Schema.object({
  roots: Schema.array(Schema.string().min(1)).default([]).description('Workspace roots besides the session cwd (always a root).'),
  readOnly: Schema.array(Schema.string().min(1)).default([]).description('Directories readable by the tools but never writable.'),
})

export const WorkspaceErrorCode = {
  /** The path, once every symbolic link is resolved, is outside every workspace root. */
  WORKSPACE_OUTSIDE_ROOTS: 'WORKSPACE_OUTSIDE_ROOTS',
} as const
export type WorkspaceErrorCode = (typeof WorkspaceErrorCode)[keyof typeof WorkspaceErrorCode]

export class WorkspaceError extends HarnessError {
  override name = 'WorkspaceError'
}

/** A session's roots, as real paths (symbolic links resolved), without duplicates. */
export interface WorkspaceRoots {
  /** The session cwd first, then the configured roots. */
  readonly writable: readonly string[]
  /** Configured read-only roots and those added at run time (spill directories). */
  readonly readOnly: readonly string[]
}

export interface ConfineOptions {
  /** The calling session's directory: always a root. */
  readonly cwd: string
  /** Names the refusing tool in the message. */
  readonly tool: string
}

/**
 * `ctx.workspace`: the directories the tools are confined to. While it is loaded, `glob`, `grep` and `read` refuse
 * a path that resolves, through symbolic links, outside every root, and the bash sandbox makes exactly the
 * writable roots writable. Consumers read it with `ctx.get('workspace')` (optional: without it nothing is confined).
 */
export class Workspace extends Service {
  static readonly provide = 'workspace'
  static readonly Config = Config
  private readonly state: { config: Config; added: string[]; sessions: Map<string, string> }

  constructor(ctx: Context, config: Partial<Config> = {}) {
    super(ctx, 'workspace')
    this.state = { config: Config(config), added: [], sessions: new Map() }
    // The cwd of each session, as its calls carry it: the bash executor only sees the session id.
    ctx.on('tools/pre-execute', (call) => {
      if (call.session) this.state.sessions.set(call.session.id, call.session.cwd)
    })
    ctx.on('tools/session-end', (sessionId) => { this.state.sessions.delete(sessionId) })
  }

  /** The roots of a session whose directory is `cwd`. A root that does not exist (yet) is kept as written. */
  roots(cwd: string): WorkspaceRoots {
    const writable = unique([cwd, ...this.state.config.roots].map(realRoot))
    const readOnly = unique([...this.state.config.readOnly, ...this.state.added].map(realRoot)).filter((root) => !writable.includes(root))
    return { writable, readOnly }
  }

  /** The cwd the session's last tool call carried, or undefined for an unknown (or no) session. */
  sessionCwd(sessionId: string | undefined): string | undefined {
    return sessionId === undefined ? undefined : this.state.sessions.get(sessionId)
  }

  /** Adds a read-only root (a spill store's directory, say) until the returned function runs. */
  addReadOnly(path: string): () => void {
    const root = resolve(path)
    this.state.added.push(root)
    return () => {
      const index = this.state.added.indexOf(root)
      if (index >= 0) this.state.added.splice(index, 1)
    }
  }

  /**
   * Resolves `path` (absolute) through every symbolic link and returns the real path, or throws
   * WORKSPACE_OUTSIDE_ROOTS when that lies outside every root. A path that does not exist is judged by its
   * deepest existing ancestor, so the tool still reports "not found" for a missing file inside a root.
   */
  async confine(path: string, options: ConfineOptions): Promise<string> {
    const absolute = resolve(options.cwd, path)
    const resolved = await realPath(absolute)
    const { writable, readOnly } = this.roots(options.cwd)
    const all = [...writable, ...readOnly]
    const refused = (message: string) => new WorkspaceError(message, { code: WorkspaceErrorCode.WORKSPACE_OUTSIDE_ROOTS })
    if (resolved === undefined) throw refused(loopMessage(options.tool, absolute, { writable, readOnly }))
    if (all.some((root) => within(resolved, root))) return resolved
    const lexicallyInside = all.some((root) => within(absolute, root)) || [options.cwd, ...this.state.config.roots].some((root) => within(absolute, resolve(root)))
    throw refused(outsideMessage(options.tool, absolute, resolved, lexicallyInside, { writable, readOnly }))
  }
}

/** The refusal the model sees: which path, where it really leads, what the roots are, what to do instead. */
export function outsideMessage(tool: string, absolute: string, real: string, throughLink: boolean, roots: WorkspaceRoots): string {
  const listed = listRoots(roots)
  const where = throughLink && real !== absolute
    ? `${JSON.stringify(absolute)} resolves through a symbolic link to ${JSON.stringify(real)}, which is outside the workspace roots`
    : `${JSON.stringify(absolute)} is outside the workspace roots`
  return `${tool} refused: ${where} (${listed}); use a path inside them`
}

/** A path whose links never end: it resolves nowhere, so it is refused (fail closed), and the text says why. */
export function loopMessage(tool: string, absolute: string, roots: WorkspaceRoots): string {
  return `${tool} refused: ${JSON.stringify(absolute)} cannot be resolved: its symbolic links loop (or chain more than ${MAX_LINKS} deep), so it cannot be shown to lie inside the workspace roots (${listRoots(roots)}); use a path inside them`
}

function listRoots(roots: WorkspaceRoots): string {
  return roots.writable.join(', ') + (roots.readOnly.length ? `; read-only: ${roots.readOnly.join(', ')}` : '')
}

export function within(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep)
}

function realRoot(path: string): string {
  const absolute = resolve(path)
  try {
    return realpathSync(absolute)
  } catch {
    return absolute
  }
}

/** Links followed by hand before a path counts as unresolvable (Linux's own limit). */
const MAX_LINKS = 40

/**
 * realpath of the deepest existing ancestor, joined with the components below it; a dangling symbolic link on the
 * way is followed by hand (realpath refuses it, but a file created at its target later would be reached through
 * it). Undefined when links loop: such a path is refused.
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

function unique(paths: string[]): string[] {
  return [...new Set(paths)]
}

export default Workspace
