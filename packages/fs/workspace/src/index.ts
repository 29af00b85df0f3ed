import { resolve } from 'node:path'
import { Context, Service } from 'cordis'
import Schema from 'schemastery'
import { refusal, rootRefusedMessage, WorkspaceErrorCode, type WorkspaceRoots } from './errors.ts'
import { checkReal } from './open.ts'
import { broadness, DEFAULT_HIDDEN, hiddenEntries, realRoot, type PathPolicy } from './policy.ts'

export {
  hiddenMessage, loopMessage, outsideMessage, readOnlyMessage, rootRefusedMessage, WorkspaceError, WorkspaceErrorCode, type WorkspaceRoots,
} from './errors.ts'
export { checkPath, checkReal, openDirectory, openFile, type OpenedDir, type OpenedFile, type OpenOptions } from './open.ts'
export { broadness, DEFAULT_HIDDEN, expandHome, hiddenBy, within, type Access, type HiddenRule, type PathPolicy } from './policy.ts'

declare module 'cordis' {
  interface Context {
    workspace: Workspace
  }
}

export const name = 'workspace'

export interface Config {
  /** Directories the tools may use besides the session's cwd (writable for the bash sandbox). */
  roots: string[]
  /** Directories that may be read but are never writable. */
  readOnly: string[]
  /** Paths hidden from every tool and sandboxed command, besides the default credential list (always hidden). */
  denyRead: string[]
  /** Let `/`, the home directory or a directory holding credential stores be a writable root (the session cwd too). */
  allowBroadRoots: boolean
  /** Hidden like denyRead; set by dsh itself (the HTTP token file, the --config file), not meant for users. */
  hidden: string[]
}

export const Config: Schema<Partial<Config>, Config> = Schema.object({
  roots: Schema.array(Schema.string().min(1)).default([]).description('Workspace roots besides the session cwd (always a root).'),
  readOnly: Schema.array(Schema.string().min(1)).default([]).description('Directories readable by the tools but never writable.'),
  denyRead: Schema.array(Schema.string().min(1)).default([]).description('Paths hidden from every tool and command (`~` is $HOME, relative ones are taken in the session cwd), besides the default credential list (always hidden).'),
  allowBroadRoots: Schema.boolean().default(false).description('Allow `/`, the home directory, or a directory that holds credential stores as a writable root (the session cwd included).'),
  hidden: Schema.array(Schema.string().min(1)).default([]).description('Hidden paths set by dsh itself (its token and config file).'),
})

/**
 * `ctx.workspace`: the one path policy (DESIGN §17). While it is loaded, `read`, `glob`, `grep` (and `write`, `edit`)
 * open a path and then check what they opened against `policy(cwd)`, and the bash sandbox binds exactly its roots
 * and masks its hidden paths. Consumers read it with `ctx.get('workspace')` (optional: without it nothing is confined).
 */
export class Workspace extends Service {
  static readonly provide = 'workspace'
  static readonly Config = Config
  private readonly state: { config: Config; added: string[]; hidden: string[]; sessions: Map<string, string>; identities: Map<string, string> }

  constructor(ctx: Context, config: Partial<Config> = {}) {
    super(ctx, 'workspace')
    this.state = { config: Config(config), added: [], hidden: [], sessions: new Map(), identities: new Map() }
    // The cwd of each session, as its calls carry it: the bash executor only sees the session id.
    ctx.on('tools/pre-execute', (call) => {
      if (call.session) this.state.sessions.set(call.session.id, call.session.cwd)
    })
    ctx.on('tools/session-end', (sessionId) => { this.state.sessions.delete(sessionId) })
    // The identities of the hidden entries as they are at start: a later rename of one cannot un-hide it.
    hiddenEntries(this.hiddenList(), process.cwd(), this.state.identities)
  }

  /**
   * The policy of a session whose directory is `cwd`: its roots, its hidden paths. Throws WORKSPACE_ROOT_REFUSED
   * when a writable root (`cwd` included) is too broad and `allowBroadRoots` is off, so every tool, and the bash
   * sandbox, refuses to work in it. Computed per call (a few dozen stat calls), so a credential store created since
   * is hidden too; the identities of hidden entries accumulate for the life of the service.
   */
  policy(cwd: string, tool = 'dsh'): PathPolicy {
    const roots = this.roots(cwd)
    if (!this.state.config.allowBroadRoots) {
      for (const root of roots.writable) {
        const why = broadness(root)
        if (why !== undefined) throw refusal(rootRefusedMessage(tool, root, why), WorkspaceErrorCode.WORKSPACE_ROOT_REFUSED)
      }
    }
    const { rules, hidden } = hiddenEntries(this.hiddenList(), resolve(cwd), this.state.identities)
    return { ...roots, hidden, rules, identities: this.state.identities }
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
    return addUntil(this.state.added, resolve(path))
  }

  /** Hides more paths (the bash sandbox's `denyRead`, say) until the returned function runs. */
  addHidden(paths: readonly string[]): () => void {
    const removers = paths.map((path) => addUntil(this.state.hidden, path))
    hiddenEntries(paths, process.cwd(), this.state.identities)
    return () => { for (const remove of removers) remove() }
  }

  private hiddenList(): string[] {
    return [...DEFAULT_HIDDEN, ...this.state.config.denyRead, ...this.state.config.hidden, ...this.state.hidden]
  }
}

function addUntil(list: string[], item: string): () => void {
  list.push(item)
  return () => {
    const index = list.indexOf(item)
    if (index >= 0) list.splice(index, 1)
  }
}

function unique(paths: string[]): string[] {
  return [...new Set(paths)]
}

export default Workspace
