import { basename, dirname, resolve } from 'node:path'
import { type Context, Service } from 'cordis'
import Schema from 'schemastery'
import { type LocalDirectories, localDirectoriesOf, type SpillStore } from '@deepseek-ai/dsh-spill'
import { CREDENTIAL_STORES, followService, type ToolSession } from '@deepseek-ai/dsh-tools'
import { refusal, rootRefusedMessage, WorkspaceErrorCode, type WorkspaceRoots } from './errors.ts'
import {
  broadness,
  hiddenEntries,
  realRoot,
  relocated,
  type HiddenRule,
  type Moved,
  type PathPolicy,
} from './policy.ts'

export {
  hiddenMessage,
  loopMessage,
  outsideMessage,
  readOnlyMessage,
  rootRefusedMessage,
  WorkspaceError,
  WorkspaceErrorCode,
  type WorkspaceRoots,
} from './errors.ts'
export {
  checkPath,
  checkReal,
  openDirectory,
  openFile,
  type OpenedDir,
  type OpenedFile,
  type OpenOptions,
} from './open.ts'
export {
  broadness,
  hiddenBy,
  type Access,
  type HiddenRule,
  type PathPolicy,
} from './policy.ts'

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
  roots: Schema.array(Schema.string().min(1))
    .default([])
    .description('Workspace roots besides the session cwd (always a root).'),
  readOnly: Schema.array(Schema.string().min(1))
    .default([])
    .description('Directories readable by the tools but never writable.'),
  denyRead: Schema.array(Schema.string().min(1))
    .default([])
    .description(
      'Paths hidden from every tool and command (`~` is $HOME, relative ones are taken in the session cwd), besides the default credential list (always hidden).',
    ),
  allowBroadRoots: Schema.boolean()
    .default(false)
    .description(
      'Allow `/`, the home directory, or a directory that holds credential stores as a writable root (the session cwd included).',
    ),
  hidden: Schema.array(Schema.string().min(1))
    .default([])
    .description('Hidden paths set by dsh itself (its token and config file).'),
})

/** Where the service keeps its core (see Policies). */
const CORE: unique symbol = Symbol('workspace core')

/**
 * `ctx.workspace`: the one path policy (docs/security.md#boundary). While it is loaded, `read`, `glob`, `grep` (and `write`, `edit`)
 * open a path and then check what they opened against `policy(cwd)`, and the bash sandbox binds exactly its roots
 * and masks its hidden paths. Consumers read it with `ctx.get('workspace')` (optional: without it nothing is confined).
 */
export class Workspace extends Service {
  static readonly provide = 'workspace'
  static readonly Config = Config
  private readonly [CORE]: Policies

  constructor(ctx: Context, config: Partial<Config> = {}) {
    super(ctx, 'workspace')
    // Other sessions' saved results (the spill store's shared root).
    const core = new Policies(Config(config), followService(ctx, 'spillStore'))
    this[CORE] = core
  }

  /**
   * The policy of `session` (or, without one, of a directory `cwd`; see Policies.policy): WORKSPACE_ROOT_REFUSED for a
   * broad root. (A session whose pinned root moved never gets here: the tools pipeline refuses its calls.)
   */
  policy(where: ToolSession | string, tool = 'dsh', fresh = false): PathPolicy {
    return this[CORE].policy(where, tool, fresh)
  }

  /** The roots of `session` (or of a directory `cwd`). A root that does not exist (yet) is kept as written. */
  roots(where: ToolSession | string): WorkspaceRoots {
    return this[CORE].roots(where)
  }

  /** Adds a read-only root (a spill store's directory, say) until the returned function runs. */
  addReadOnly(path: string): () => void {
    return this[CORE].addReadOnly(path)
  }

  /** Hides more paths (the bash sandbox's `denyRead`, say) until the returned function runs. */
  addHidden(paths: readonly string[]): () => void {
    return this[CORE].addHidden(paths)
  }
}

/**
 * The service's state and logic as a plain object. Cordis hands consumers a tracing proxy of the service, and a method
 * called through it reads every `this.…` through the proxy's trap: policy() ran on every file-tool call at about
 * 20–40 µs that way. The service keeps this under a symbol (which the proxy passes straight through) and delegates.
 */
class Policies {
  /** Where each session keeps its part of the policy (this instance's own key). */
  private readonly apartKey = Symbol('workspace.sessionApart')
  readonly state: {
    config: Config
    added: string[]
    hidden: string[]
    identities: Map<string, string>
    /** The last policy of each cwd, and when it was computed; `version` counts changes of added roots and hidden paths. */
    policies: Map<string, Cached>
    version: number
    /** Hidden identities no longer at the path they were seen at: where a walk of the roots found them, or not. */
    moved: Map<string, Moved>
  }

  constructor(
    config: Config,
    private readonly spillStore: () => SpillStore | undefined,
  ) {
    this.state = {
      config,
      added: [],
      hidden: [],
      identities: new Map(),
      policies: new Map(),
      version: 0,
      moved: new Map(),
    }
    // The identities of the hidden entries as they are at start: a later rename of one cannot un-hide it.
    hiddenEntries(this.hiddenList(), process.cwd(), this.state.identities)
  }

  /**
   * The policy of a session whose directory is `cwd`: its roots, its hidden paths. Throws WORKSPACE_ROOT_REFUSED
   * when a writable root (`cwd` included) is too broad and `allowBroadRoots` is off, so every tool, and the bash
   * sandbox, refuses to work in it. The roots and hidden entries are computed at most once a second per cwd (a few
   * dozen syscalls); staleness un-hides nothing, since hidden entries match by name, existing or not, and by the
   * identities seen, which only accumulate. `fresh` (for a walk of a root: glob, grep, a sandboxed command) also
   * looks, with one stat per hidden entry, whether one was moved since, and where to (see `relocated`).
   */
  policy(where: ToolSession | string, tool = 'dsh', fresh = false): PathPolicy {
    const now = Date.now()
    const session = typeof where === 'string' ? undefined : where
    // A pinned root is taken as it was claimed, never resolved again; one that moved fails every call of the
    // session in the tools pipeline (WORKSPACE_ROOT_MOVED) before a tool asks for its policy.
    const key = session?.root ? `pinned:${session.root.path}` : typeof where === 'string' ? where : where.cwd
    let base = this.state.policies.get(key)
    const stale = !base || now - base.at >= POLICY_FRESH_MS || base.version !== this.state.version
    if (stale) base = this.compute(key, where, now)
    if ('refused' in base!)
      throw refusal(
        rootRefusedMessage(tool, base.refused.root, base.refused.why),
        WorkspaceErrorCode.WORKSPACE_ROOT_REFUSED,
      )
    const policy = session ? this.sessionApart(base!.policy, session) : base!.policy
    const roots = [...policy.writable, ...policy.readOnly]
    // A hidden directory moved inside a root (under another name) stays hidden there, so no walk lists it.
    const moved =
      stale || fresh
        ? relocated(this.state.identities, this.state.moved, roots, now)
        : [...this.state.moved.values()].flatMap((entry) =>
            entry.path === undefined ? [] : [{ path: entry.path, seenAt: entry.seenAt }],
          )
    if (moved.length === 0) return policy
    return {
      ...policy,
      hidden: [...policy.hidden, ...moved.map((entry) => entry.path)],
      rules: [
        ...policy.rules,
        ...moved.map((entry) => ({
          parent: dirname(entry.path),
          name: basename(entry.path),
          raw: basename(entry.path),
          shown: entry.seenAt,
        })),
      ],
    }
  }

  /**
   * Sessions apart (docs/seams.md#sessions): in the spill store's shared root, every entry but this session's own directory is
   * hidden — other sessions' saved results, and the command-output directory (dsh puts it there) but for the files
   * this session was given (`ownFiles`) — for the file tools as for commands. The rules (by name, below the root)
   * are made once per session and store and kept in the session. No entry joins `hidden`: the sandbox masks the
   * whole root but what the session keeps.
   */
  private sessionApart(policy: PathPolicy, session: ToolSession): PathPolicy {
    const store = this.spillStore()
    if (!store) return policy
    const spill = localDirectoriesOf(store, session)
    const apart = session.slot(this.apartKey, (): Apart => ({ spill: undefined, rules: [], root: '', own: '' }))
    if (apart.spill !== spill) {
      const own = spill ? basename(spill.own) : ''
      const root = spill ? realRoot(spill.all) : ''
      const others = new RegExp(`^(?!${own}$)`)
      const parents = spill ? [...new Set([resolve(spill.all), root])] : []
      Object.assign(apart, {
        spill,
        own,
        root,
        rules: parents.map((parent) => ({
          parent,
          name: others,
          raw: '*',
          shown: "another session's saved results or command output",
          except: session.ownFiles,
        })),
      })
    }
    if (apart.rules.length === 0) return policy
    return { ...policy, rules: [...policy.rules, ...apart.rules] }
  }

  private compute(key: string, where: ToolSession | string, now: number): Cached {
    if (this.state.policies.size > 64) this.state.policies.clear()
    const cwd = typeof where === 'string' ? where : where.cwd
    const roots = this.roots(where)
    let cached: Cached | undefined
    if (!this.state.config.allowBroadRoots) {
      for (const root of roots.writable) {
        const why = broadness(root)
        if (why !== undefined) cached ??= { at: now, version: this.state.version, refused: { root, why } }
      }
    }
    if (!cached) {
      const { rules, hidden } = hiddenEntries(this.hiddenList(), resolve(cwd), this.state.identities)
      cached = {
        at: now,
        version: this.state.version,
        policy: { ...roots, hidden, rules, identities: this.state.identities },
      }
    }
    this.state.policies.set(key, cached)
    return cached
  }

  /** The roots of `where` (a session: its pinned root first, as claimed). A root that does not exist is kept as written. */
  roots(where: ToolSession | string): WorkspaceRoots {
    const first = typeof where === 'string' ? realRoot(where) : (where.root?.path ?? realRoot(where.cwd))
    const writable = unique([first, ...this.state.config.roots.map(realRoot)])
    const readOnly = unique([...this.state.config.readOnly, ...this.state.added].map(realRoot)).filter(
      (root) => !writable.includes(root),
    )
    return { writable, readOnly }
  }

  /** Adds a read-only root (a spill store's directory, say) until the returned function runs. */
  addReadOnly(path: string): () => void {
    return this.changed(addUntil(this.state.added, resolve(path)))
  }

  /** Hides more paths (the bash sandbox's `denyRead`, say) until the returned function runs. */
  addHidden(paths: readonly string[]): () => void {
    const removers = paths.map((path) => addUntil(this.state.hidden, path))
    hiddenEntries(paths, process.cwd(), this.state.identities)
    return this.changed(() => {
      for (const remove of removers) remove()
    })
  }

  /** Drops the cached policies now, and again when `undo` runs. */
  private changed(undo: () => void): () => void {
    this.state.version++
    return () => {
      undo()
      this.state.version++
    }
  }

  private hiddenList(): string[] {
    return [...CREDENTIAL_STORES, ...this.state.config.denyRead, ...this.state.config.hidden, ...this.state.hidden]
  }
}

/**
 * How long a computed policy is reused for its cwd: one tool call computes it once, a burst of calls shares it.
 * Staleness cannot un-hide anything: hidden entries are matched by name (created later or not) and by the identities
 * seen, which only accumulate; only `hidden` (existing entries, for the sandbox's masks) may lag by this much.
 */
const POLICY_FRESH_MS = 1000

/** A session's part of the policy, made once per spill store (see sessionApart). */
interface Apart {
  spill: LocalDirectories
  rules: HiddenRule[]
  root: string
  own: string
}

type Cached = { at: number; version: number } & ({ policy: PathPolicy } | { refused: { root: string; why: string } })

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
