import { stat } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { resolve } from 'node:path'
import type { Writable } from 'node:stream'
import { isRemoteUrl, parseArgs, parseToolArgs, type CommandName, type Invocation, type RemoteFlags } from './args.ts'
import { HELP, usageText } from './help.ts'
// Types only: the composition (and with it every plugin) is imported when a command needs it, never for --help.
import type { DefaultContext, RemoteTarget } from './compose.ts'
import type {} from '@deepseek-ai/dsh-workspace'

export const EXIT = { OK: 0, TOOL_ERROR: 1, USAGE: 2, START_FAILED: 3 } as const

const SIGNAL_EXIT: Record<string, number> = { SIGINT: 130, SIGTERM: 143 }
/** A stuck dispose must not keep the command alive forever. */
const DISPOSE_BOUND_MS = 15_000
/** The session of `dsh call`: the same for every call, so that saved results outlive the process that saved them. */
const CLI_SESSION = 'cli'

export function version(): string {
  return (createRequire(import.meta.url)('../package.json') as { version: string }).version
}

function write(stream: Writable, text: string): Promise<void> {
  return new Promise((done) => {
    if (text === '') return done()
    stream.write(text, () => done())
  })
}

function usage(command: CommandName | undefined, message: string): Promise<number> {
  return write(process.stderr, usageText(command, message)).then(() => EXIT.USAGE)
}

/** Runs one command line and resolves with the exit code; the caller exits with it. */
export async function main(argv: readonly string[]): Promise<number> {
  // A reader that went away (`dsh call … | head -1`) is not a failure of the call: stop writing, clean up, exit.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') process.stderr.write(`dsh: cannot write to stdout: ${error.message}\n`)
  })
  const invocation = parseArgs(argv)
  switch (invocation.kind) {
    case 'help':
      await write(process.stdout, HELP[invocation.command ?? 'main'])
      return EXIT.OK
    case 'version':
      await write(process.stdout, `dsh ${version()}\n`)
      return EXIT.OK
    case 'usage':
      return usage(invocation.command, invocation.message)
    case 'call':
      return runCall(invocation)
    case 'tools':
      return runTools(invocation)
    case 'prompt':
      return runPrompt(invocation)
    case 'mcp':
      return runMcp(invocation)
  }
}

/** `--cwd` resolved against the current directory; it must be an existing directory. */
async function resolveCwd(dir: string | undefined): Promise<string | { problem: string }> {
  if (dir === undefined) return process.cwd()
  const path = resolve(dir)
  try {
    if ((await stat(path)).isDirectory()) return path
    return { problem: `--cwd ${dir}: not a directory` }
  } catch {
    return { problem: `--cwd ${dir}: no such directory` }
  }
}

/**
 * The token named by `--token-file` / `--token-env` (surrounding whitespace trimmed), or what is wrong. A token to
 * serve with (`serving`, dsh mcp --http) must be at least MIN_HTTP_TOKEN_BYTES long, and its file private to its
 * owner: anyone who can read it can use every tool.
 */
async function readToken(flags: RemoteFlags, serving: boolean): Promise<string | { problem: string } | undefined> {
  if (flags.tokenFile === undefined && flags.tokenEnv === undefined) return undefined
  const { MAX_TOKEN_BYTES, MIN_HTTP_TOKEN_BYTES, readTokenFile } = await import('./input.ts')
  const tooShort = (what: string, token: string, make: string) =>
    serving && Buffer.byteLength(token) < MIN_HTTP_TOKEN_BYTES
      ? {
          problem: `${what}: the token is ${Buffer.byteLength(token)} bytes; dsh mcp --http needs at least ${MIN_HTTP_TOKEN_BYTES} (make one: ${make})`,
        }
      : token
  if (flags.tokenFile !== undefined) {
    const file = flags.tokenFile
    let read: { bytes: Buffer | undefined; mode: number }
    try {
      read = await readTokenFile(file, MAX_TOKEN_BYTES)
    } catch (error) {
      return {
        problem: `--token-file ${file}: cannot read it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
      }
    }
    if (serving && (read.mode & 0o077) !== 0) {
      return {
        problem: `--token-file ${file}: group or others may read or change it (mode ${read.mode.toString(8).padStart(4, '0')}): make it private with chmod 600 ${file}`,
      }
    }
    if (read.bytes === undefined)
      return { problem: `--token-file ${file}: longer than ${MAX_TOKEN_BYTES} bytes, more than any token` }
    const token = read.bytes.toString('utf8').trim()
    return token
      ? tooShort(`--token-file ${file}`, token, `umask 077; openssl rand -hex 32 > ${file}`)
      : { problem: `--token-file ${file}: the file is empty` }
  }
  if (flags.tokenEnv !== undefined) {
    const token = process.env[flags.tokenEnv]?.trim()
    return token
      ? tooShort(`--token-env ${flags.tokenEnv}`, token, 'openssl rand -hex 32')
      : { problem: `--token-env ${flags.tokenEnv}: that environment variable is not set or empty` }
  }
  return undefined
}

/** `--remote` as the composition takes it, or what is wrong with it. */
async function remoteTarget(
  flags: RemoteFlags,
  token: string | undefined,
): Promise<RemoteTarget | { problem: string } | undefined> {
  if (flags.remote === undefined) return undefined
  if (isRemoteUrl(flags.remote)) return { url: flags.remote, token: token ?? '' }
  const { splitCommandLine } = await import('@deepseek-ai/dsh-tools-remote')
  const argv = splitCommandLine(flags.remote)
  return Array.isArray(argv) ? { command: argv } : { problem: `--remote: ${argv.problem}` }
}

/** The remote could not be reached: the error as a tool would give it (`dsh call` prints it as its result). */
interface Unavailable {
  unavailable: { message: string; name: string; code: string }
}

/** `config` with tool-bash's `backgroundAfterMs` off (a section that is not an object is left for validation to name). */
function foregroundOnly(config: unknown): unknown {
  return withSetting(config, 'tool-bash', { backgroundAfterMs: 0 })
}

/** dsh call changes files its caller has seen: the read-before-change guard is for model sessions. */
function withoutReadGuard(config: unknown): unknown {
  return withSetting(config, 'tool-fs', { requireRead: false })
}

function withSetting(config: unknown, plugin: string, setting: Record<string, unknown>): unknown {
  if (typeof config !== 'object' || config === null || Array.isArray(config)) return config
  const section: unknown = (config as Record<string, unknown>)[plugin] ?? {}
  if (typeof section !== 'object' || section === null || Array.isArray(section)) return config
  return { ...config, [plugin]: { ...section, ...setting } }
}

/**
 * The composition with `--config` applied (or fronting `remote`), or the exit code of why it could not be built
 * (already reported), or — for a remote that cannot be reached — its REMOTE_UNAVAILABLE error for the caller to
 * report (exit 1, as for any tool error).
 */
async function startHost(
  command: CommandName,
  configPath: string | undefined,
  sandbox: boolean,
  remote?: RemoteTarget,
  hidden: readonly string[] = [],
  tokenEnv?: string,
): Promise<DefaultContext | number | Unavailable> {
  const { createDefaultContext, readConfigFile, DshError, DshErrorCode } = await import('./index.ts')
  // While a remote starts, plugin log lines are held: an unreachable remote is reported once, as its error
  // result, not also as the plugin failure Cordis logs (with a stack trace) on the way.
  let held: string[] | undefined = remote ? [] : undefined
  const log = (line: string) => (held ? held.push(line) : process.stderr.write(`${line}\n`))
  const release = (keep: (line: string) => boolean) => {
    const lines = held ?? []
    held = undefined
    for (const line of lines) if (keep(line)) process.stderr.write(`${line}\n`)
  }
  try {
    const read = configPath === undefined ? {} : await readConfigFile(configPath)
    // dsh call keeps every bash command in the foreground: no later call could wait for a task, and its exit ends them.
    const config = command === 'call' && !remote ? withoutReadGuard(foregroundOnly(read)) : read
    const host = await createDefaultContext({ config, log, sandbox, hidden, ...(remote ? { remote } : {}) })
    release(() => true)
    // The tools never need credentials, and a command could read them back from /proc/$PPID/environ. The token
    // (--token-env) was read before this; a remote command's environment was taken when tools-remote started.
    const { forgetCredentials } = await import('./environ.ts')
    forgetCredentials([], tokenEnv === undefined ? [] : [tokenEnv])
    return host
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    const cause = (error as { cause?: { code?: unknown; message?: string; name?: string } }).cause
    release((line) => !(cause?.code === 'REMOTE_UNAVAILABLE' && line.startsWith('dsh: [error] tools-remote:')))
    if (error instanceof DshError && error.code === DshErrorCode.DSH_CONFIG_INVALID) {
      return usage(command, `invalid --config ${configPath}: ${message}`)
    }
    if (cause?.code === 'REMOTE_UNAVAILABLE') {
      return {
        unavailable: {
          message: cause.message ?? message,
          name: cause.name ?? 'RemoteError',
          code: 'REMOTE_UNAVAILABLE',
        },
      }
    }
    await write(process.stderr, `dsh: the runtime could not start: ${message}\n`)
    return EXIT.START_FAILED
  }
}

/** Token and `--remote` resolved, then the host started; a number is the exit code (already reported). */
async function startFor(
  command: CommandName,
  invocation: RemoteFlags & { config?: string; sandbox?: boolean; http?: true },
): Promise<{ host: DefaultContext | Unavailable; token: string | undefined } | number> {
  const token = await readToken(invocation, invocation.http === true)
  if (typeof token === 'object') return usage(command, token.problem)
  const remote = await remoteTarget(invocation, token)
  if (remote && 'problem' in remote) return usage(command, remote.problem)
  // dsh's own secrets are hidden from its tools (docs/security.md#boundary): a command must not read the token back and open a session.
  const hidden = [invocation.tokenFile, invocation.config]
    .filter((path): path is string => path !== undefined)
    .map((path) => resolve(path))
  const host = await startHost(
    command,
    invocation.config,
    invocation.sandbox ?? false,
    remote,
    hidden,
    invocation.tokenEnv,
  )
  return typeof host === 'number' ? host : { host, token }
}

/** A remote that cannot be reached, for the commands that do not print a tool result: stderr, exit 1. */
async function reportUnavailable(host: Unavailable): Promise<number> {
  await write(process.stderr, `dsh: ${host.unavailable.message}\n`)
  return EXIT.TOOL_ERROR
}

async function stop(host: DefaultContext): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  const bound = new Promise<void>((done) => {
    timer = setTimeout(() => {
      process.stderr.write(`dsh: plugins did not stop within ${DISPOSE_BOUND_MS}ms; exiting anyway\n`)
      done()
    }, DISPOSE_BOUND_MS)
    timer.unref()
  })
  await Promise.race([host.dispose(), bound])
  clearTimeout(timer)
}

type Of<K extends Invocation['kind']> = Extract<Invocation, { kind: K }>

/** Said on stderr after `dsh call bash` started a background task: the task is stopped as the command exits. */
export const BACKGROUND_ENDS_WITH_CALL =
  'dsh: the background task ends when dsh call exits, which is now: a task lives as long as its session, and' +
  ' dsh call is a session of one call (run the command in the foreground, or use dsh mcp to keep tasks running)\n'

function startsBackgroundTask(tool: string, args: unknown): boolean {
  return (
    tool === 'bash' &&
    typeof args === 'object' &&
    args !== null &&
    (args as { run_in_background?: unknown }).run_in_background === true
  )
}

async function runCall(invocation: Of<'call'>): Promise<number> {
  // Before the runtime exists there is nothing to clean up, so an interrupt exits at once (also while waiting for
  // arguments on stdin). Once it runs, the first interrupt aborts the call and disposes in order; a second one
  // exits at once (the subprocess provider's exit hook still kills what is left).
  const controller = new AbortController()
  let running = false
  let interrupted: NodeJS.Signals | undefined
  const onSignal = (signal: NodeJS.Signals) => {
    if (!running || interrupted) process.exit(SIGNAL_EXIT[signal])
    interrupted = signal
    controller.abort(new Error(`interrupted by ${signal}`))
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)

  const cwd = await resolveCwd(invocation.cwd)
  if (typeof cwd !== 'string') return usage('call', cwd.problem)
  let args = invocation.args
  if (args === 'stdin') {
    const { MAX_STDIN_ARGS_BYTES, readAtMost } = await import('./input.ts')
    const input = await readAtMost(process.stdin, MAX_STDIN_ARGS_BYTES)
    if (input === undefined)
      return usage(
        'call',
        `the arguments on stdin are longer than ${MAX_STDIN_ARGS_BYTES} bytes: pass one JSON object of at most that size`,
      )
    const parsed = parseToolArgs(input.toString('utf8'))
    if (typeof parsed === 'string') return usage('call', parsed.replace('the arguments', 'the arguments on stdin'))
    args = parsed
  }
  const started = await startFor('call', invocation)
  if (typeof started === 'number') return started
  const host = started.host
  if ('unavailable' in host) {
    const error = host.unavailable
    const text = `Error: ${error.message}`
    await write(process.stdout, invocation.json ? `${JSON.stringify({ text, isError: true, error })}\n` : `${text}\n`)
    return EXIT.TOOL_ERROR
  }
  running = true
  let code: number
  // The process is the session; its saved results keep one directory name for every `dsh call` of this user, so a
  // later call pages what an earlier one saved (sessions apart, docs/security.md#boundary, show a session only their own saved results).
  // From the chunk the host came from: `dsh --version` loads the entry alone, `dsh call` no chunk more.
  const { createSession } = await import('./index.ts')
  const session = createSession({ id: CLI_SESSION, cwd, dirName: CLI_SESSION })
  try {
    const result = await host.ctx.tools.execute(invocation.tool, args, { signal: controller.signal, session })
    const [{ text }, ...images] = result.content
    await write(
      process.stdout,
      invocation.json
        ? `${JSON.stringify({ text, isError: result.isError, error: result.error ?? null, ...(images.length ? { images } : {}) })}\n`
        : text.endsWith('\n')
          ? text
          : `${text}\n`,
    )
    code = interrupted ? SIGNAL_EXIT[interrupted]! : result.isError ? EXIT.TOOL_ERROR : EXIT.OK
    if (!result.isError && startsBackgroundTask(invocation.tool, args))
      await write(process.stderr, BACKGROUND_ENDS_WITH_CALL)
  } finally {
    await session.dispose()
    await stop(host)
  }
  return code
}

async function runTools(invocation: Of<'tools'>): Promise<number> {
  const started = await startFor('tools', invocation)
  if (typeof started === 'number') return started
  const host = started.host
  if ('unavailable' in host) return reportUnavailable(host)
  try {
    const schemas = host.ctx.tools.schemas()
    if (invocation.json) {
      // The same objects MCP's tools/list carries (name, title, description, inputSchema, annotations).
      const list = schemas.map(({ name, title, description, parameters, annotations }) => ({
        name,
        ...(title === undefined ? {} : { title }),
        description,
        inputSchema: parameters,
        ...(annotations === undefined ? {} : { annotations }),
      }))
      await write(process.stdout, `${JSON.stringify(list, null, 2)}\n`)
    } else {
      const width = Math.max(0, ...schemas.map((s) => s.name.length))
      const lines = schemas.map((s) => `${s.name.padEnd(width)}  ${firstSentence(s.description)}`)
      await write(process.stdout, lines.length ? `${lines.join('\n')}\n` : '(no tools)\n')
    }
  } finally {
    await stop(host)
  }
  return EXIT.OK
}

/** Up to the first full stop that ends a sentence (". " before a capital), on the first line. */
function firstSentence(text: string): string {
  const line = text.split('\n', 1)[0] ?? ''
  const end = /\.\s+(?=[A-Z])/.exec(line)
  return end ? line.slice(0, end.index + 1) : line
}

async function runPrompt(invocation: Of<'prompt'>): Promise<number> {
  const started = await startFor('prompt', invocation)
  if (typeof started === 'number') return started
  const host = started.host
  if ('unavailable' in host) return reportUnavailable(host)
  try {
    await write(process.stdout, `${host.ctx.systemPrompt.assemble()}\n`)
  } finally {
    await stop(host)
  }
  return EXIT.OK
}

async function runMcp(invocation: Of<'mcp'>): Promise<number> {
  const cwd = invocation.cwd === undefined ? undefined : await resolveCwd(invocation.cwd)
  if (cwd !== undefined && typeof cwd !== 'string') return usage('mcp', cwd.problem)
  const started = await startFor('mcp', invocation)
  if (typeof started === 'number') return started
  const host = started.host
  if ('unavailable' in host) return reportUnavailable(host)
  const options = {
    serverInfo: { name: 'dsh', version: version() },
    ...(cwd === undefined ? {} : { cwd }),
    log: (line: string) => process.stderr.write(`dsh mcp: ${line}\n`),
  }
  try {
    if (invocation.http) {
      const { serveHttp } = await import('@deepseek-ai/dsh-mcp')
      // A client may only claim roots inside the server's own: its cwd and the configured workspace roots.
      const serverCwd = cwd ?? process.cwd()
      const server = await serveHttp(host.ctx, {
        ...options,
        roots: host.ctx.get('workspace')?.roots(serverCwd).writable ?? [serverCwd],
        token: started.token ?? '',
        ...host.mcp,
        ...(invocation.host === undefined ? {} : { host: invocation.host }),
        port: invocation.port ?? DEFAULT_HTTP_PORT,
      }).catch(async (error: NodeJS.ErrnoException) => {
        await write(
          process.stderr,
          `dsh mcp: cannot listen on ${invocation.host ?? '127.0.0.1'}:${invocation.port ?? DEFAULT_HTTP_PORT}: ${error.message}\n`,
        )
        return undefined
      })
      if (!server) return EXIT.START_FAILED
      // Before the line that says it listens: a supervisor may stop it as soon as it reads that line.
      const close = () => void server.close()
      process.on('SIGTERM', close)
      process.on('SIGINT', close)
      // The one line a supervisor (or a test) reads to learn where the server is.
      await write(process.stderr, `dsh mcp: listening on ${server.url}\n`)
      await server.closed
      return EXIT.OK
    }
    const { serveStdio } = await import('@deepseek-ai/dsh-mcp')
    const connection = await serveStdio(host.ctx, options)
    const close = () => void connection.close()
    process.on('SIGTERM', close)
    process.on('SIGINT', close)
    await connection.closed
  } finally {
    await stop(host)
  }
  return EXIT.OK
}

/** `dsh mcp --http` listens here unless `--port` says otherwise. */
export const DEFAULT_HTTP_PORT = 8765
