import { stat } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { resolve } from 'node:path'
import type { Writable } from 'node:stream'
import { parseArgs, parseToolArgs, type CommandName, type Invocation } from './args.ts'
import { HELP, usageText } from './help.ts'
// Types only: the composition (and with it every plugin) is imported when a command needs it, never for --help.
import type { DefaultContext } from './compose.ts'

export const EXIT = { OK: 0, TOOL_ERROR: 1, USAGE: 2, START_FAILED: 3 } as const

const SIGNAL_EXIT: Record<string, number> = { SIGINT: 130, SIGTERM: 143 }
/** A stuck dispose must not keep the command alive forever. */
const DISPOSE_BOUND_MS = 15_000

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

/** The composition with `--config` applied, or the exit code of why it could not be built (already reported). */
async function startHost(command: CommandName, configPath: string | undefined, sandbox = false): Promise<DefaultContext | number> {
  const { createDefaultContext, readConfigFile, DshError, DshErrorCode } = await import('./index.ts')
  try {
    const config = configPath === undefined ? {} : await readConfigFile(configPath)
    const host = await createDefaultContext({ config, sandbox })
    // The tools never need credentials, and a command could read them back from /proc/$PPID/environ.
    const { forgetCredentials } = await import('./environ.ts')
    forgetCredentials()
    return host
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    if (error instanceof DshError && error.code === DshErrorCode.DSH_CONFIG_INVALID) {
      return usage(command, `invalid --config ${configPath}: ${message}`)
    }
    await write(process.stderr, `dsh: the runtime could not start: ${message}\n`)
    return EXIT.START_FAILED
  }
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

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

type Of<K extends Invocation['kind']> = Extract<Invocation, { kind: K }>

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
    const parsed = parseToolArgs(await readStdin())
    if (typeof parsed === 'string') return usage('call', parsed.replace('the arguments', 'the arguments on stdin'))
    args = parsed
  }
  const host = await startHost('call', invocation.config, invocation.sandbox)
  if (typeof host === 'number') return host
  running = true
  let code: number
  try {
    const result = await host.ctx.tools.execute(invocation.tool, args, {
      signal: controller.signal,
      session: { id: `cli-${process.pid}`, cwd },
    })
    const text = result.content[0].text
    await write(process.stdout, invocation.json
      ? `${JSON.stringify({ text, isError: result.isError, error: result.error ?? null })}\n`
      : text.endsWith('\n') ? text : `${text}\n`)
    code = interrupted ? SIGNAL_EXIT[interrupted]! : result.isError ? EXIT.TOOL_ERROR : EXIT.OK
  } finally {
    await stop(host)
  }
  return code
}

async function runTools(invocation: Of<'tools'>): Promise<number> {
  const host = await startHost('tools', invocation.config)
  if (typeof host === 'number') return host
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
  const host = await startHost('prompt', invocation.config)
  if (typeof host === 'number') return host
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
  const host = await startHost('mcp', invocation.config, invocation.sandbox)
  if (typeof host === 'number') return host
  try {
    const { serveStdio } = await import('@deepseek-ai/dsh-mcp')
    const connection = await serveStdio(host.ctx, {
      serverInfo: { name: 'dsh', version: version() },
      ...(cwd === undefined ? {} : { cwd }),
      log: (line) => process.stderr.write(`dsh mcp: ${line}\n`),
    })
    const close = () => void connection.close()
    process.on('SIGTERM', close)
    process.on('SIGINT', close)
    await connection.closed
  } finally {
    await stop(host)
  }
  return EXIT.OK
}
