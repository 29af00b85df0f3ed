import type { CommandName } from './args.ts'
import { TOOL_NAMES } from './tool-names.ts'

/** Every text the command prints about itself (the results it prints are the tools'). */

export const USAGE: Record<CommandName, string> = {
  call: 'dsh call <tool> [<json-args>] [--cwd DIR] [--json] [--sandbox] [--config FILE] [--remote REMOTE]',
  tools: 'dsh tools [--json] [--config FILE] [--remote REMOTE]',
  prompt: 'dsh prompt [--config FILE] [--remote REMOTE]',
  mcp: 'dsh mcp [--cwd DIR] [--sandbox] [--config FILE] [--remote REMOTE] [--http --token-file FILE]',
}

/** The lines every command that can front a remote workspace adds to its help. */
const REMOTE_LINES = `  --remote REMOTE  serve the tools of a dsh running elsewhere instead of the local ones: a command whose
                   stdin/stdout speak MCP, as one shell word ('ssh -T host dsh mcp --cwd /repo',
                   'kubectl exec -i pod -- dsh mcp', 'docker exec -i box dsh mcp'), or the URL of a
                   dsh mcp --http (http://host:8765/mcp) with its token:
  --token-file FILE  the bearer token, read from FILE (surrounding whitespace ignored)
  --token-env NAME   the bearer token, read from the environment variable NAME`

const SANDBOX_LINE =
  '  --sandbox      run bash inside bubblewrap (read-only system, only the workspace roots writable, no network)\n' +
  '                 and confine glob, grep and read to the workspace roots (with --remote, put --sandbox in the\n' +
  "                 remote dsh's own command instead)"

const CONFIG_LINE = '  --config FILE  per-plugin settings: a JSON object keyed by plugin short name (see the README)'

const EXIT_CODES =
  'Exit codes: 0 success, 1 tool error, 2 usage error (also an invalid --config), 3 the runtime could not start,\n130/143 interrupted by SIGINT/SIGTERM.'

export const HELP: Record<CommandName | 'main', string> = {
  main: `dsh: the dsh tools runtime as a command and an MCP server
${TOOL_NAMES.length > 0 ? `Tools: ${TOOL_NAMES.join(', ')}\n` : ''}
Usage:
  ${USAGE.call}
  ${USAGE.tools}
  ${USAGE.prompt}
  ${USAGE.mcp}
  dsh --help | dsh <command> --help | dsh --version

Commands:
  call    run one tool call and print its result text
  tools   list the tools the model sees
  prompt  print the assembled system prompt
  mcp     serve every tool over MCP on stdin/stdout (or Streamable HTTP with --http)

Example:
  dsh call grep '{"pattern":"TODO","include":"*.ts"}'

${EXIT_CODES}
`,
  call: `Usage: ${USAGE.call}

Runs one call of <tool> through the tool pipeline (argument check, timeout policy, spill policy) and prints its
result text to stdout, exactly as the model would see it. <json-args> is one JSON object, quoted as one shell
word; "-" reads it from stdin; omitted means {}.

  --cwd DIR      directory that relative paths resolve against (default: the current directory)
  --json         print {"text", "isError", "error"} as one JSON line instead of the text
${SANDBOX_LINE}
${CONFIG_LINE}
${REMOTE_LINES}

Examples:
  dsh call glob '{"pattern":"**/*.ts"}'
  dsh call read '{"path":"package.json","limit":20}' --cwd ~/project
  echo '{"command":"git status","description":"Show status"}' | dsh call bash -

Every bash command stays in the foreground until it ends or times out (tool-bash's backgroundAfterMs is off: no
later call could wait for a task). A background bash task does not outlive the command: it is stopped when dsh exits.
edit and write change an existing file without a read first: the guard that refuses a file not seen (FS_NOT_READ)
or changed since (FS_STALE) applies to model sessions (dsh mcp), not to the person or script running dsh call.
${EXIT_CODES}
`,
  tools: `Usage: ${USAGE.tools}

Lists the registered tools, one per line with the first line of its description; with --json, an array of
{"name", "title", "description", "inputSchema", "annotations"}: what MCP's tools/list carries (inputSchema is
the JSON Schema the model sees, annotations the approval hints clients act on).

  --json         print JSON
${CONFIG_LINE}
${REMOTE_LINES}
`,
  prompt: `Usage: ${USAGE.prompt}

Prints the assembled system prompt: every tool's guidance, in order. The text is the same on every run.

${CONFIG_LINE}
${REMOTE_LINES}
`,
  mcp: `Usage: ${USAGE.mcp}

Serves every tool over the Model Context Protocol on stdin/stdout, one session for the connection. Mount it in an
MCP client as the command "dsh" with the arguments ["mcp"]. Diagnostics go to stderr. The server stops, and stops
every process it started, when stdin closes or on SIGTERM.

  --cwd DIR      session directory (default: the client's first file:// root, else the current directory)
${SANDBOX_LINE}
${CONFIG_LINE}
${REMOTE_LINES}
  --http         serve MCP's Streamable HTTP at http://ADDRESS:PORT/mcp instead of stdin/stdout, one session
                 per MCP session; every request needs the token (--token-file/--token-env: at least 32 bytes, a
                 file only its owner may access; make one: umask 077; openssl rand -hex 32 > FILE), and a Host or
                 Origin that names another server is refused (DNS rebinding). Stops on SIGTERM/SIGINT.
  --host ADDRESS  address to listen on (default 127.0.0.1; anything else is reachable from the network)
  --port PORT     port to listen on (default 8765; 0 picks a free one; the URL is printed to stderr)
`,
}

/** Exit 2's text: what went wrong, the usage line, and where to read more. */
export function usageText(command: CommandName | undefined, message: string): string {
  if (!command) return `dsh: ${message}\nUsage: dsh <call|tools|prompt|mcp> ...\nRun "dsh --help" for details.\n`
  return `dsh: ${message}\nUsage: ${USAGE[command]}\nRun "dsh ${command} --help" for details.\n`
}
