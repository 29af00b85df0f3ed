/** The command line, parsed. Pure: no I/O, no heavy imports (it runs before anything is loaded). */

export const COMMANDS = ['call', 'tools', 'prompt', 'mcp'] as const
export type CommandName = (typeof COMMANDS)[number]

export type Invocation =
  | { kind: 'help'; command: CommandName | undefined }
  | { kind: 'version' }
  | { kind: 'call'; tool: string; args: Record<string, unknown> | 'stdin'; cwd?: string; json: boolean; config?: string; sandbox: boolean }
  | { kind: 'tools'; json: boolean; config?: string }
  | { kind: 'prompt'; config?: string }
  | { kind: 'mcp'; cwd?: string; config?: string; sandbox: boolean }
  /** Exit 2: `message` says what is wrong; the caller adds the command's usage line. */
  | { kind: 'usage'; command: CommandName | undefined; message: string }

type FlagKind = 'value' | 'boolean'
const FLAGS: Record<CommandName, Record<string, FlagKind>> = {
  call: { cwd: 'value', json: 'boolean', config: 'value', sandbox: 'boolean' },
  tools: { json: 'boolean', config: 'value' },
  prompt: { config: 'value' },
  mcp: { cwd: 'value', config: 'value', sandbox: 'boolean' },
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
      const known = Object.keys(spec).map((flag) => `--${flag}`).join(', ')
      return { kind: 'usage', command, message: `unknown flag ${eq === -1 ? word : word.slice(0, eq)} for "dsh ${command}" (flags: ${known}, --help)` }
    }
    if (flags.has(name)) return { kind: 'usage', command, message: `--${name} given twice` }
    if (kind === 'boolean') {
      if (eq !== -1) return { kind: 'usage', command, message: `--${name} takes no value` }
      flags.set(name, true)
      continue
    }
    const value = eq !== -1 ? word.slice(eq + 1) : argv[++i]
    if (value === undefined || value === '') {
      const what = name === 'cwd' ? 'DIR' : 'FILE'
      return { kind: 'usage', command, message: `--${name} needs a value: --${name} ${what}` }
    }
    flags.set(name, value)
  }

  if (positionals.length > POSITIONALS[command]) {
    return { kind: 'usage', command, message: `unexpected argument ${JSON.stringify(positionals[POSITIONALS[command]])}` }
  }
  const value = (name: string) => {
    const v = flags.get(name)
    return typeof v === 'string' ? { [name]: v } : {}
  }
  const json = flags.get('json') === true
  const sandbox = flags.get('sandbox') === true
  switch (command) {
    case 'tools':
      return { kind: 'tools', json, ...value('config') }
    case 'prompt':
      return { kind: 'prompt', ...value('config') }
    case 'mcp':
      return { kind: 'mcp', ...value('cwd'), ...value('config'), sandbox }
    case 'call': {
      const [tool, text] = positionals
      if (tool === undefined) return { kind: 'usage', command, message: 'missing the tool name' }
      if (text === '-') return { kind: 'call', tool, args: 'stdin', json, ...value('cwd'), ...value('config'), sandbox }
      const args = text === undefined ? {} : parseToolArgs(text)
      if (typeof args === 'string') return { kind: 'usage', command, message: args }
      return { kind: 'call', tool, args, json, ...value('cwd'), ...value('config'), sandbox }
    }
  }
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
