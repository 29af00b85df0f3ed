import { Context, Logger, type Fiber, type Message, type Plugin } from 'cordis'
import Schema from 'schemastery'
import type {} from '@deepseek-ai/dsh-tools'
import type {} from '@deepseek-ai/dsh-system-prompt'
import { CONFIG_KEYS, validateConfig, type ConfigKey, type DshConfig } from './config.ts'
import { DshError, DshErrorCode } from './errors.ts'

/** What a plugin package exports: the plugin as default, and its schemastery Config. */
interface PluginModule {
  default?: Plugin
  Config?: Schema
}

/** The packages' types differ (a Service class, a plugin object); the host reads only the two exports above. */
const module = (imported: Promise<unknown>) => imported as Promise<PluginModule>

interface Entry {
  /** Short name: the `--config` key, and the name used in every message. */
  key: ConfigKey | 'system-prompt' | 'tools-remote'
  load(): Promise<PluginModule>
  /** Loaded only in this mode (default: always). */
  only?: (mode: Mode) => boolean
}

/** Which optional parts run: the bash sandbox (in place of bash-local) and the workspace roots. */
interface Mode {
  sandbox: boolean
  roots: boolean
}

/**
 * The default composition, in load order: registries first, then providers, then the tools that consume them.
 * Imports are lazy so that a command pays only for what it loads, and the MCP SDK is never among them.
 */
const ENTRIES: readonly Entry[] = [
  { key: 'tools', load: () => module(import('@deepseek-ai/dsh-tools')) },
  { key: 'system-prompt', load: () => module(import('@deepseek-ai/dsh-system-prompt')) },
  { key: 'timeout-policy', load: () => module(import('@deepseek-ai/dsh-timeout-policy')) },
  { key: 'subprocess-local', load: () => module(import('@deepseek-ai/dsh-subprocess-local')) },
  { key: 'spill-local', load: () => module(import('@deepseek-ai/dsh-spill-local')) },
  { key: 'tasks-local', load: () => module(import('@deepseek-ai/dsh-tasks-local')) },
  { key: 'bash-local', load: () => module(import('@deepseek-ai/dsh-bash-local')), only: (mode) => !mode.sandbox },
  { key: 'bash-sandbox', load: () => module(import('@deepseek-ai/dsh-bash-sandbox')), only: (mode) => mode.sandbox },
  { key: 'spill-policy', load: () => module(import('@deepseek-ai/dsh-spill-policy')) },
  { key: 'workspace', load: () => module(import('@deepseek-ai/dsh-workspace')), only: (mode) => mode.roots },
  { key: 'tool-bash', load: () => module(import('@deepseek-ai/dsh-tool-bash')) },
  { key: 'tool-fs', load: () => module(import('@deepseek-ai/dsh-tool-fs')) },
  { key: 'tool-fs-search', load: () => module(import('@deepseek-ai/dsh-tool-fs-search')) },
]

/** A remote dsh to front instead of the local tools: a command giving a byte stream, or a URL with its token. */
export type RemoteTarget = { command: string[] } | { url: string; token: string }

/**
 * The composition that fronts a remote dsh: the registries, a subprocess provider to start the command, and
 * tools-remote. No local tool, policy, sandbox or spill: the remote applies its own.
 */
const REMOTE_ENTRIES: readonly Entry[] = [
  ENTRIES[0]!,
  ENTRIES[1]!,
  { key: 'subprocess-local', load: () => module(import('@deepseek-ai/dsh-subprocess-local')) },
  { key: 'tools-remote', load: () => module(import('@deepseek-ai/dsh-tools-remote')) },
]

export interface DefaultContextOptions {
  /**
   * Front this remote dsh instead of composing the local tools (`--remote`). `config` and `sandbox` must then be
   * unset: the remote takes its own (its command carries its `--config` and `--sandbox`).
   */
  remote?: RemoteTarget
  /** Per-plugin config, keyed by short name (the parsed `--config` file). Validated before anything runs. */
  config?: unknown
  /** Receives each warning or error a plugin logs, one formatted line. Default: written to stderr. */
  log?: (line: string) => void
  /** How long every plugin together may take to become active. Default 10 000 ms. */
  startTimeoutMs?: number
  /**
   * Confinement (`--sandbox`): bash-sandbox replaces bash-local and the workspace roots are on. A `bash-sandbox`
   * section in the config turns it on too; a `workspace` section turns on the roots alone.
   */
  sandbox?: boolean
  /**
   * Files of dsh's own that no tool or sandboxed command may read (the `--token-file`, the `--config` file): added to
   * the workspace's hidden paths whenever the workspace is loaded.
   */
  hidden?: readonly string[]
}

export interface DefaultContext {
  /** The root context: `ctx.tools`, `ctx.systemPrompt`, `ctx.subprocess`, `ctx.bash`, `ctx.spillStore`. */
  readonly ctx: Context
  /** Short names of the plugins that were loaded, in load order. */
  readonly plugins: readonly string[]
  /** Disposes every plugin: running processes are stopped and awaited; spill files are kept. Idempotent. */
  dispose(): Promise<void>
  /** The `mcp` section with its defaults: the HTTP server's limits (`dsh mcp --http`). */
  readonly mcp: McpSettings
}

export interface McpSettings {
  maxSessions: number
  sessionIdleMs: number
  headersTimeoutMs: number
}

/** The `mcp` section of `--config`: the host's settings, not a plugin's (the values are the HTTP server's defaults). */
export const McpConfig: Schema<Partial<McpSettings>, McpSettings> = Schema.object({
  maxSessions: Schema.natural()
    .min(1)
    .default(64)
    .description('Most sessions `dsh mcp --http` keeps open; the next initialize is refused with a coded error.'),
  sessionIdleMs: Schema.natural()
    .min(1)
    .default(30 * 60_000)
    .description('An HTTP session with no request for this long ends, and its tasks with it.'),
  headersTimeoutMs: Schema.natural()
    .min(1)
    .default(10_000)
    .description('A socket that has not sent a whole request head within this many ms is closed.'),
})

interface Loaded {
  key: Entry['key']
  plugin: Plugin | undefined
  config: Schema | undefined
}

async function loadModules(entries: readonly Entry[] = ENTRIES): Promise<Loaded[]> {
  const modules = await Promise.all(entries.map((entry) => entry.load()))
  return entries.map((entry, index) => {
    const module = modules[index] as PluginModule
    const plugin = module.default
    const config = module.Config ?? (plugin as { Config?: Schema } | undefined)?.Config
    return { key: entry.key, plugin, config }
  })
}

/**
 * Validates `raw` as a `--config` value against the composition's plugins, without starting anything. Returns
 * the sections with their defaults; throws DshError DSH_CONFIG_INVALID naming the offending key.
 */
export async function resolveConfig(raw: unknown): Promise<DshConfig> {
  return validateConfig(raw, schemaMap(await loadModules()))
}

function schemaMap(loaded: readonly Loaded[]): Map<ConfigKey, Schema | undefined> {
  const map = new Map<ConfigKey, Schema | undefined>()
  for (const key of CONFIG_KEYS) map.set(key, loaded.find((item) => item.key === key)?.config)
  map.set('mcp', McpConfig)
  return map
}

function stderrLine(line: string): void {
  process.stderr.write(`${line}\n`)
}

const plain = { colors: false as const, export() {} }

function formatMessage(message: Message): string {
  return `dsh: [${message.type}] ${message.name}: ${Logger.format(plain, message)}`
}

/**
 * Builds the default composition — tools, system prompt, timeout policy, local subprocesses, local bash and the
 * bash tools, local spill and the spill policy, read, glob and grep — and resolves once every plugin is active.
 * A config problem throws before any plugin runs; a plugin that fails, or waits for a service that never
 * arrives, throws DSH_PLUGIN_FAILED naming it (and everything already started is disposed).
 */
export async function createDefaultContext(options: DefaultContextOptions = {}): Promise<DefaultContext> {
  const { loaded, config } = options.remote ? await remoteComposition(options) : await localComposition(options)
  const log = options.log ?? stderrLine
  const ctx = new Context()
  ctx.logger.exporter({
    export(message) {
      if (message.type === 'error' || message.type === 'warn') log(formatMessage(message))
    },
  })

  let disposed: Promise<void> | undefined
  const dispose = () => (disposed ??= ctx.fiber.dispose())
  const started: { key: string; fiber: Fiber }[] = []
  // A remote's start is its connection (an ssh handshake, say), bounded by tools-remote's own connect timeout.
  const boundMs = options.startTimeoutMs ?? (options.remote ? 45_000 : 10_000)
  try {
    for (const item of loaded) {
      if (!item.plugin) throw failed(`plugin ${item.key} cannot start: its package has no default export (the plugin)`)
      const section =
        item.key === 'system-prompt' ? undefined : item.key === 'spill-policy' ? safetyNet(config) : config[item.key]
      started.push({ key: item.key, fiber: ctx.plugin(item.plugin, section) })
    }
    await waitActive(ctx, started, boundMs)
  } catch (error) {
    // A plugin whose start never ends cannot be unloaded either (Cordis awaits it): bound the clean-up too.
    let timer: NodeJS.Timeout | undefined
    await Promise.race([
      dispose(),
      new Promise((resolve) => {
        timer = setTimeout(resolve, boundMs)
      }),
    ])
    clearTimeout(timer)
    throw error
  }
  return { ctx, plugins: started.map((item) => item.key), dispose, mcp: McpConfig(config.mcp ?? {}) }
}

/** Every tool of the composition keeps results within its `maxResultBytes`, by default this many UTF-8 bytes. */
export const DEFAULT_MAX_RESULT_BYTES = 30_000
const BUDGETED = ['tool-bash', 'tool-fs', 'tool-fs-search'] as const

/**
 * The spill policy's section: on in the shipped composition, as the safety net at the budget — the largest
 * `maxResultBytes` of the tools, so raising one tool's budget is never undone by the net — unless
 * `maxInlineBytes` is set explicitly (docs/decisions/2026-12-01-result-budget.md).
 */
export function safetyNet(config: DshConfig): Record<string, unknown> {
  const section = config['spill-policy'] ?? {}
  if (section.maxInlineBytes !== undefined) return section
  const budgets = BUDGETED.map((key) => {
    const value = config[key]?.maxResultBytes
    return typeof value === 'number' ? value : DEFAULT_MAX_RESULT_BYTES
  })
  return { ...section, maxInlineBytes: Math.max(...budgets) }
}

interface Composition {
  loaded: Loaded[]
  config: Record<string, unknown>
}

/** The local tools, with the config validated and confinement (`--sandbox`, roots) applied. */
async function localComposition(options: DefaultContextOptions): Promise<Composition> {
  const all = await loadModules()
  const raw = options.config ?? {}
  const mode = modeOf(raw, options.sandbox ?? false)
  const config = validateConfig(confinedConfig(raw, mode, await spillRootOf(raw), options.hidden ?? []), schemaMap(all))
  const loaded = all.filter((item) => ENTRIES.find((entry) => entry.key === item.key)?.only?.(mode) ?? true)
  return { loaded, config }
}

/** tools-remote in place of the local tools; a local config or sandbox would be silently unused, so both are refused. */
async function remoteComposition(options: DefaultContextOptions): Promise<Composition> {
  if (options.sandbox) {
    throw new DshError(
      '--sandbox confines local tools, which a remote replaces: start the remote dsh with --sandbox in its own command',
      { code: DshErrorCode.DSH_CONFIG_INVALID },
    )
  }
  if (options.config !== undefined && !isEmptyObject(options.config)) {
    throw new DshError(
      'a config sets local plugins, which a remote replaces: give the remote dsh its own --config in its command',
      { code: DshErrorCode.DSH_CONFIG_INVALID },
    )
  }
  return { loaded: await loadModules(REMOTE_ENTRIES), config: { 'tools-remote': options.remote } }
}

function isEmptyObject(value: unknown): boolean {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0
}

function section(raw: unknown, key: ConfigKey): Record<string, unknown> | undefined {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return undefined
  const value = (raw as Record<string, unknown>)[key]
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined
}

function modeOf(raw: unknown, sandboxFlag: boolean): Mode {
  const sandbox = sandboxFlag || section(raw, 'bash-sandbox') !== undefined
  return { sandbox, roots: sandbox || section(raw, 'workspace') !== undefined }
}

/** The spill store's directory: the configured root, else spill-local's default. */
async function spillRootOf(raw: unknown): Promise<string> {
  const root = section(raw, 'spill-local')?.root
  if (typeof root === 'string') return root
  const { defaultRoot } = await import('@deepseek-ai/dsh-spill-local')
  return defaultRoot()
}

/**
 * The config with confinement applied (docs/decisions/2026-12-01-confinement.md): the sandbox takes the bash-local
 * settings too (one config serves both modes), and with roots on, the spill directory is a read-only root and
 * the subprocess spill files go there as well, so every saved output can be paged with read (and, under the sandbox,
 * read by the commands of the session that saved it: bash-sandbox masks the rest).
 */
function confinedConfig(raw: unknown, mode: Mode, spillRoot: string, hidden: readonly string[]): unknown {
  if (!mode.roots || raw === null || typeof raw !== 'object' || Array.isArray(raw)) return raw
  const result: Record<string, unknown> = { ...(raw as Record<string, unknown>) }
  if (mode.sandbox) result['bash-sandbox'] = { ...section(raw, 'bash-local'), ...section(raw, 'bash-sandbox') }
  const workspace = section(raw, 'workspace') ?? {}
  // A readOnly that is not a list is left as it is, for the validation to name it.
  const readOnly =
    workspace.readOnly === undefined
      ? [spillRoot]
      : Array.isArray(workspace.readOnly)
        ? [...workspace.readOnly, spillRoot]
        : workspace.readOnly
  // dsh's own token and config files join whatever hidden list the config gives (validation names a bad one).
  const ownHidden =
    hidden.length === 0
      ? {}
      : {
          hidden: Array.isArray(workspace.hidden)
            ? [...workspace.hidden, ...hidden]
            : (workspace.hidden ?? [...hidden]),
        }
  // bash-sandbox.denyRead hides from every tool, not only commands: it joins workspace.denyRead (one policy).
  const sandboxDeny = section(raw, 'bash-sandbox')?.denyRead
  const denyRead =
    Array.isArray(sandboxDeny) && sandboxDeny.length > 0
      ? { denyRead: Array.isArray(workspace.denyRead) ? [...workspace.denyRead, ...sandboxDeny] : sandboxDeny }
      : {}
  result.workspace = { ...workspace, readOnly, ...ownHidden, ...denyRead }
  const subprocess = section(raw, 'subprocess-local') ?? {}
  if (subprocess.spillDir === undefined) result['subprocess-local'] = { ...subprocess, spillDir: spillRoot }
  return result
}

// FiberState is a const enum in Cordis' declarations, which isolatedModules cannot read: mirror the values.
const ACTIVE = 2
const FAILED = 3

function failed(message: string, cause?: unknown): DshError {
  return new DshError(
    message,
    cause === undefined ? { code: DshErrorCode.DSH_PLUGIN_FAILED } : { code: DshErrorCode.DSH_PLUGIN_FAILED, cause },
  )
}

/**
 * Resolves once every fiber is active (internal; exported for tests). A plugin that failed is named with its error; a plugin still pending when
 * nothing else is moving waits for a service no loaded plugin provides (named); anything else is bounded by
 * `boundMs`, so a start that never finishes cannot hang the host.
 */
export async function waitActive(
  ctx: Context,
  started: readonly { key: string; fiber: Fiber }[],
  boundMs: number,
): Promise<void> {
  const deadline = Date.now() + boundMs
  let quietTurns = 0
  for (;;) {
    const broken = started.find((item) => item.fiber.state === FAILED)
    if (broken) {
      const error = await broken.fiber.await().then(
        () => undefined,
        (reason: unknown) => reason,
      )
      const reason = error instanceof Error ? error.message : String(error)
      throw failed(`plugin ${broken.key} failed to start: ${reason}`, error)
    }
    const busy = started.filter((item) => item.fiber.inertia)
    const waiting = started.filter((item) => item.fiber.state !== ACTIVE)
    if (waiting.length === 0 && busy.length === 0) return
    if (Date.now() >= deadline) {
      throw failed(`plugin ${(busy[0] ?? waiting[0])?.key} did not start within ${boundMs}ms`)
    }
    if (busy.length === 0) {
      // Nothing is loading, yet someone is pending: give the reflection a few turns, then name what is missing.
      if (++quietTurns > 3) {
        const item = waiting[0]!
        const missing = Object.keys(item.fiber.inject).filter((name) => ctx.get(name) === undefined)
        throw failed(
          `plugin ${item.key} cannot start: it needs ${missing.length ? missing.join(', ') : 'a service'}, which no loaded plugin provides`,
        )
      }
      await new Promise((resolve) => setImmediate(resolve))
      continue
    }
    quietTurns = 0
    let timer: NodeJS.Timeout | undefined
    await Promise.race([
      Promise.race(busy.map((item) => item.fiber.inertia)),
      new Promise((resolve) => {
        timer = setTimeout(resolve, Math.max(0, deadline - Date.now()))
      }),
    ])
    clearTimeout(timer)
  }
}
