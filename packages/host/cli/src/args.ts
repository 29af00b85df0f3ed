/** The command line, parsed. Pure: no I/O, no heavy imports (it runs before anything is loaded). */

export const COMMANDS = ['call', 'tools', 'prompt', 'mcp'] as const
export type CommandName = (typeof COMMANDS)[number]

export type Invocation =
  | { kind: 'help'; command: CommandName | undefined }
  | { kind: 'version' }
  | ({
      kind: 'call'
      tool: string
      args: Record<string, unknown> | 'stdin'
      cwd?: string
      json: boolean
      config?: string
      sandbox: boolean
    } & RemoteFlags)
  | ({ kind: 'tools'; json: boolean; config?: string } & RemoteFlags)
  | ({ kind: 'prompt'; config?: string } & RemoteFlags)
  | ({
      kind: 'mcp'
      cwd?: string
      config?: string
      sandbox: boolean
      http?: true
      host?: string
      port?: number
    } & RemoteFlags)
  /** Exit 2: `message` says what is wrong; the caller adds the command's usage line. */
  | { kind: 'usage'; command: CommandName | undefined; message: string }

/** `--remote <command|url>` and the token an HTTP remote (or `dsh mcp --http`) needs. */
export interface RemoteFlags {
  remote?: string
  tokenFile?: string
  tokenEnv?: string
}

type FlagKind = 'value' | 'boolean'
const REMOTE_FLAGS = { remote: 'value', 'token-file': 'value', 'token-env': 'value' } as const
const FLAGS: Record<CommandName, Record<string, FlagKind>> = {
  call: { cwd: 'value', json: 'boolean', config: 'value', sandbox: 'boolean', ...REMOTE_FLAGS },
  tools: { json: 'boolean', config: 'value', ...REMOTE_FLAGS },
  prompt: { config: 'value', ...REMOTE_FLAGS },
  mcp: {
    cwd: 'value',
    config: 'value',
    sandbox: 'boolean',
    ...REMOTE_FLAGS,
    http: 'boolean',
    host: 'value',
    port: 'value',
  },
}

/** The placeholder a flag's value is shown as in "needs a value" messages. */
const VALUE_NAMES: Record<string, string> = {
  cwd: 'DIR',
  remote: "'<command>'|<url>",
  'token-env': 'NAME',
  host: 'ADDRESS',
  port: 'PORT',
}

const POSITIONALS: Record<CommandName, number> = { call: 2, tools: 0, prompt: 0, mcp: 0 }

function isCommand(word: string | undefined): word is CommandName {
  return (COMMANDS as readonly string[]).includes(word ?? '')
}

/** Parses `argv` (without node and the script). `--help`/`-h` and `--version` win wherever they appear. */
export function parseArgs(argv: readonly string[]): Invocation {
  const end = argv.indexOf('--')
  const options = end === -1 ? argv : argv.slice(0, end)
  const first = argv[0]
  const command = isCommand(first) ? first : undefined
  if (options.includes('--help') || options.includes('-h') || first === 'help') {
    const topic = first === 'help' ? argv[1] : command
    return { kind: 'help', command: isCommand(topic) ? topic : undefined }
  }
  if (options.includes('--version')) return { kind: 'version' }
  if (first === undefined) return { kind: 'usage', command: undefined, message: 'missing command' }
  if (!command) {
    return first.startsWith('-')
      ? { kind: 'usage', command: undefined, message: `unknown flag ${first}: flags go after the command` }
      : { kind: 'usage', command: undefined, message: `unknown command "${first}" (commands: ${COMMANDS.join(', ')})` }
  }

  const flags = new Map<string, string | true>()
  const positionals: string[] = []
  const spec = FLAGS[command]
  let onlyPositionals = false
  for (let i = 1; i < argv.length; i++) {
    const word = argv[i]!
    if (onlyPositionals || !word.startsWith('-') || word === '-') {
      positionals.push(word)
      continue
    }
    if (word === '--') {
      onlyPositionals = true
      continue
    }
    const eq = word.indexOf('=')
    const name = word.startsWith('--') ? word.slice(2, eq === -1 ? undefined : eq) : ''
    const kind = Object.hasOwn(spec, name) ? spec[name] : undefined
    if (!kind) {
      const known = Object.keys(spec)
        .map((flag) => `--${flag}`)
        .join(', ')
      return {
        kind: 'usage',
        command,
        message: `unknown flag ${eq === -1 ? word : word.slice(0, eq)} for "dsh ${command}" (flags: ${known}, --help)`,
      }
    }
    if (flags.has(name)) return { kind: 'usage', command, message: `--${name} given twice` }
    if (kind === 'boolean') {
      if (eq !== -1) return { kind: 'usage', command, message: `--${name} takes no value` }
      flags.set(name, true)
      continue
    }
    const value = eq !== -1 ? word.slice(eq + 1) : argv[++i]
    if (value === undefined || value === '') {
      const what = VALUE_NAMES[name] ?? 'FILE'
      return { kind: 'usage', command, message: `--${name} needs a value: --${name} ${what}` }
    }
    flags.set(name, value)
  }

  if (positionals.length > POSITIONALS[command]) {
    return {
      kind: 'usage',
      command,
      message: `unexpected argument ${JSON.stringify(positionals[POSITIONALS[command]])}`,
    }
  }
  const value = (name: string) => {
    const v = flags.get(name)
    return typeof v === 'string' ? { [name]: v } : {}
  }
  const json = flags.get('json') === true
  const sandbox = flags.get('sandbox') === true
  const problem = remoteProblem(command, flags)
  if (problem) return { kind: 'usage', command, message: problem }
  const remote = {
    ...value('remote'),
    ...(typeof flags.get('token-file') === 'string' ? { tokenFile: flags.get('token-file') as string } : {}),
    ...(typeof flags.get('token-env') === 'string' ? { tokenEnv: flags.get('token-env') as string } : {}),
  }
  switch (command) {
    case 'tools':
      return { kind: 'tools', json, ...value('config'), ...remote }
    case 'prompt':
      return { kind: 'prompt', ...value('config'), ...remote }
    case 'mcp': {
      const port = flags.get('port')
      return {
        kind: 'mcp',
        ...value('cwd'),
        ...value('config'),
        sandbox,
        ...remote,
        ...(flags.get('http') === true ? { http: true as const } : {}),
        ...value('host'),
        ...(typeof port === 'string' ? { port: Number(port) } : {}),
      }
    }
    case 'call': {
      const [tool, text] = positionals
      if (tool === undefined) return { kind: 'usage', command, message: 'missing the tool name' }
      if (text === '-')
        return { kind: 'call', tool, args: 'stdin', json, ...value('cwd'), ...value('config'), sandbox, ...remote }
      const args = text === undefined ? {} : parseToolArgs(text)
      if (typeof args === 'string') return { kind: 'usage', command, message: args }
      return { kind: 'call', tool, args, json, ...value('cwd'), ...value('config'), sandbox, ...remote }
    }
  }
}

/** True for a `--remote` value that names a Streamable HTTP endpoint rather than a command. */
export function isRemoteUrl(remote: string): boolean {
  return /^https?:\/\//i.test(remote)
}

/** Flags that do not fit together, as a sentence (checked before anything is read or started). */
function remoteProblem(command: CommandName, flags: ReadonlyMap<string, string | true>): string | undefined {
  const remote = flags.get('remote')
  const http = flags.get('http') === true
  const token = flags.has('token-file') || flags.has('token-env')
  if (flags.has('token-file') && flags.has('token-env')) return 'give one of --token-file and --token-env, not both'
  if (typeof remote === 'string') {
    if (flags.has('sandbox')) {
      return "--sandbox confines local tools, which --remote replaces: start the remote dsh with --sandbox in its own command (--remote 'ssh -T host dsh mcp --sandbox --cwd /repo')"
    }
    if (flags.has('config'))
      return '--config sets local plugins, which --remote replaces: give the remote dsh its own --config in its command'
    if (flags.has('cwd')) {
      return "--cwd names a local directory, which --remote does not use: put it in the remote command (--remote 'ssh -T host dsh mcp --cwd /repo')"
    }
    if (isRemoteUrl(remote) && !token)
      return `--remote ${remote} needs the server's token: --token-file FILE or --token-env NAME`
  }
  if (token && !(typeof remote === 'string' && isRemoteUrl(remote)) && !http) {
    return command === 'mcp'
      ? 'a token (--token-file/--token-env) is for --http or --remote <url>'
      : 'a token (--token-file/--token-env) is for --remote <url>'
  }
  if ((flags.has('host') || flags.has('port')) && !http) return `--${flags.has('host') ? 'host' : 'port'} is for --http`
  if (http && !token)
    return 'dsh mcp --http needs a token: --token-file FILE or --token-env NAME (it never serves without one)'
  const port = flags.get('port')
  if (typeof port === 'string' && !(/^\d{1,5}$/.test(port) && Number(port) <= 65535)) {
    return `--port ${port}: not a port number (0-65535; 0 picks a free one)`
  }
  return undefined
}

/** The tool's arguments from one JSON word: an object, or the problem as a sentence. */
export function parseToolArgs(text: string): Record<string, unknown> | string {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (error) {
    return `the arguments are not valid JSON (${(error as Error).message}): pass one JSON object as one shell word, e.g. dsh call grep '{"pattern":"TODO"}'`
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    const got = parsed === null ? 'null' : Array.isArray(parsed) ? 'an array' : `a ${typeof parsed}`
    return `the arguments must be a JSON object, got ${got}: e.g. dsh call grep '{"pattern":"TODO"}'`
  }
  return parsed as Record<string, unknown>
}
