import { processesWith, until } from '@deepseek-ai/dsh-testing'
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { installedDsh } from '../../packages/host/cli/tests/helpers.ts'
import { agentCli, type CliRun, killLeftovers, runCli } from './clients.ts'
import { startMessagesModel, type MessagesModel, type OfferedTool, type ToolStep } from './messages-model.ts'

/**
 * The real Claude Code CLI (pinned, tests/clients/pinned) in print mode (`claude -p`) against the real `dsh mcp`,
 * mounted with the README's command, `claude mcp add dsh -- node DSH mcp --cwd /repo`. Its model is a scripted
 * stand-in (messages-model.ts) that makes the tool calls a model would; what Claude Code sent it is what the model
 * would have seen. Everything lives in a temp dir: HOME, Claude Code's config dir, the project.
 */

const _ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
/** The README's DSH: the installed copy of the packed tarball (`$(npm prefix -g)/bin/dsh`), run with node. */
const DSH = installedDsh().bin
const CLAUDE = agentCli('claude')
const TEST_TIMEOUT_MS = 120_000

const DSH_TOOLS = [
  'apply_patch',
  'bash',
  'bash_input',
  'bash_kill',
  'bash_output',
  'edit',
  'glob',
  'grep',
  'read',
  'write',
]
const READ_ONLY_ALLOW = {
  permissions: { allow: ['mcp__dsh__glob', 'mcp__dsh__grep', 'mcp__dsh__read', 'mcp__dsh__bash_output'] },
}

/** The one JSON object `claude -p --output-format json` prints, as far as these tests read it. */
interface PrintResult {
  type: string
  is_error: boolean
  result: string
  permission_denials: { tool_name: string; tool_use_id: string; tool_input: Record<string, unknown> }[]
}

interface DshTool {
  name: string
  description: string
  inputSchema: unknown
}

const cleanups: (() => Promise<void> | void)[] = []
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})

/** Runs `claude ARGS` (runCli: its own process group, a hang guard). */
const claude = (args: readonly string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<CliRun> =>
  runCli(CLAUDE, args, options)

interface Session {
  project: string
  model: MessagesModel
  add: CliRun
  run: CliRun
  output: PrintResult
  /** Claude Code's debug log of the `-p` run. */
  debug: string
}

interface SessionOptions {
  /** Written to the project's `.claude/settings.json`. */
  projectSettings?: unknown
  /** Written to the user's settings, `settings.json` in Claude Code's config dir. */
  userSettings?: unknown
  /**
   * Records the project as trusted the way accepting Claude Code's trust dialog does (`hasTrustDialogAccepted`
   * in the config dir's `.claude.json`): the dialog itself needs a terminal, and `-p` never shows it.
   */
  trusted: boolean
  steps: readonly ToolStep[]
}

/**
 * One user session: a fresh HOME and project with known files, `claude mcp add` as the README says, run in the
 * project (its default scope is that directory), then one `claude -p` whose model makes the scripted `steps`.
 */
async function session(options: SessionOptions): Promise<Session> {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-claude-code-'))
  // A failed run must not leave its dsh server behind (its command line names the dir); a hung CLI is runCli's.
  cleanups.push(() => {
    killLeftovers(dir)
    rmSync(dir, { recursive: true, force: true })
  })
  const home = join(dir, 'home')
  const config = join(home, '.claude')
  const project = join(dir, 'project')
  mkdirSync(join(project, 'src'), { recursive: true })
  mkdirSync(config, { recursive: true })
  writeFileSync(join(project, 'src/a.ts'), 'export const a = 1 // TODO: rename\n')
  writeFileSync(join(project, 'notes.txt'), 'one\ntwo\nthree\n')
  if (options.projectSettings !== undefined) {
    mkdirSync(join(project, '.claude'))
    writeFileSync(join(project, '.claude/settings.json'), JSON.stringify(options.projectSettings, null, 2))
  }
  if (options.userSettings !== undefined)
    writeFileSync(join(config, 'settings.json'), JSON.stringify(options.userSettings, null, 2))
  const model = await startMessagesModel({ steps: options.steps, finalText: 'Done.' })
  cleanups.push(() => model.close())
  // Nothing of the machine's own Claude Code setup: no inherited ANTHROPIC_* or CLAUDE_* variable, a temp HOME.
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH, // the README's server command is `node …`
    HOME: home,
    CLAUDE_CONFIG_DIR: config,
    ANTHROPIC_BASE_URL: model.url,
    ANTHROPIC_API_KEY: 'sk-ant-stand-in',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
  }
  const add = await claude(['mcp', 'add', 'dsh', '--', 'node', DSH, 'mcp', '--cwd', project], { cwd: project, env })
  if (add.code !== 0)
    throw new Error(`claude mcp add failed (exit ${add.code}, signal ${add.signal}): ${add.stderr}${add.stdout}`)
  if (options.trusted) {
    const state = join(config, '.claude.json')
    const recorded = JSON.parse(readFileSync(state, 'utf8')) as { projects: Record<string, Record<string, unknown>> }
    recorded.projects[project] = { ...recorded.projects[project], hasTrustDialogAccepted: true }
    writeFileSync(state, JSON.stringify(recorded, null, 2))
  }
  const debugFile = join(dir, 'debug.log')
  const run = await claude(
    ['-p', 'Use the dsh tools to look at this project.', '--output-format', 'json', '--debug-file', debugFile],
    { cwd: project, env },
  )
  // Claude Code stops its dsh server on the way out; the server's command line names the project.
  await until(() => processesWith(project).length === 0, `the dsh server for ${project} exited`)
  let output: PrintResult
  try {
    output = JSON.parse(run.stdout) as PrintResult
  } catch {
    throw new Error(
      `claude -p printed no JSON result (exit ${run.code}, signal ${run.signal}): ${run.stderr}${run.stdout}`,
    )
  }
  return { project, model, add, run, output, debug: readFileSync(debugFile, 'utf8') }
}

/** `dsh tools --json`: every tool as dsh declares it. */
function dshTools(): DshTool[] {
  return JSON.parse(execFileSync(process.execPath, [DSH, 'tools', '--json'], { encoding: 'utf8' })) as DshTool[]
}

function loaded(model: MessagesModel, name: string): OfferedTool | undefined {
  return model
    .offeredTools()
    .flat()
    .find((tool) => tool.name === name)
}

/** What Claude Code sends back, as the tool result, for a call it did not run. */
const refusal = (tool: string) => `Claude requested permissions to use ${tool}, but you haven't granted it yet.`

const LOAD_READ_ONLY: ToolStep = {
  tool: 'ToolSearch',
  input: { query: 'select:mcp__dsh__grep,mcp__dsh__glob,mcp__dsh__read' },
}
const GREP: ToolStep = { tool: 'mcp__dsh__grep', input: { pattern: 'TODO' } }
const BASH: ToolStep = { tool: 'mcp__dsh__bash', input: { command: 'echo "$PWD"', description: 'Print the directory' } }
const GREP_TEXT = 'Found 1 match\n\nsrc/a.ts\nLine 1: export const a = 1 // TODO: rename'

describe('Claude Code 2.1.332, claude -p: dsh mounted by `claude mcp add`, the README allow rule in .claude/settings.json of a trusted project', () => {
  let s: Session
  beforeAll(async () => {
    s = await session({
      projectSettings: READ_ONLY_ALLOW,
      trusted: true,
      steps: [
        LOAD_READ_ONLY,
        GREP,
        { tool: 'mcp__dsh__glob', input: { pattern: '**/*.ts' } },
        { tool: 'mcp__dsh__read', input: { path: 'notes.txt' } },
        { tool: 'ToolSearch', input: { query: 'select:mcp__dsh__bash' } },
        BASH,
      ],
    })
  }, TEST_TIMEOUT_MS)

  test('`claude mcp add dsh -- node DSH mcp --cwd /repo` works headless and both commands exit 0', () => {
    expect(s.add.code, s.add.stderr).toBe(0)
    expect(s.add.stdout).toContain('Added stdio MCP server dsh')
    expect(s.run.code, s.run.stderr).toBe(0)
    expect(s.output).toMatchObject({ type: 'result', is_error: false, result: 'Done.' })
  })

  test('Claude Code talks to the stand-in only by streamed POST /v1/messages, one request per model turn', () => {
    expect(
      s.model.requests.map(
        ({ method, url, body }) => `${method} ${url} stream=${String((body as { stream?: unknown }).stream)}`,
      ),
    ).toEqual(Array.from({ length: 7 }, () => 'POST /v1/messages?beta=true stream=true'))
  })

  test('the model sees every dsh tool as mcp__dsh__<tool>, deferred: only named until ToolSearch loads it, then with dsh’s exact description and schema', () => {
    const first = s.model.offeredTools()[0]!.map((tool) => tool.name)
    expect(first).toContain('ToolSearch')
    expect(first.filter((name) => name.startsWith('mcp__'))).toEqual([])
    const deferredList = s.model
      .messageTexts()
      .find((text) => text.includes('The following deferred tools are now available via ToolSearch'))
    expect(deferredList).toBeDefined()
    for (const tool of DSH_TOOLS) expect(deferredList!.split('\n')).toContain(`mcp__dsh__${tool}`)
    // ToolSearch answers with references; the next request carries the loaded tools' definitions.
    expect(s.model.results[0]!.content).toEqual(
      ['grep', 'glob', 'read'].map((tool) => ({ type: 'tool_reference', tool_name: `mcp__dsh__${tool}` })),
    )
    for (const tool of dshTools().filter(({ name }) => ['glob', 'grep', 'read', 'bash'].includes(name))) {
      expect(loaded(s.model, `mcp__dsh__${tool.name}`), tool.name).toEqual({
        name: `mcp__dsh__${tool.name}`,
        description: tool.description,
        input_schema: tool.inputSchema,
        defer_loading: true,
      })
    }
    // dsh's MCP instructions reach the model too.
    expect(
      s.model
        .messageTexts()
        .some((text) => text.includes('These instructions are about the tools of the MCP server dsh')),
    ).toBe(true)
  })

  test('grep, glob and read run through dsh without a prompt, and the model gets dsh’s exact result text', () => {
    const byTool = Object.fromEntries(s.model.results.map((result) => [result.tool, result]))
    expect(byTool.mcp__dsh__grep).toMatchObject({ isError: false, text: GREP_TEXT })
    expect(byTool.mcp__dsh__glob).toMatchObject({ isError: false, text: 'src/a.ts' })
    expect(byTool.mcp__dsh__read).toMatchObject({
      isError: false,
      text: '1: one\n2: two\n3: three\n\n[end of file: 3 lines]',
    })
  })

  test('bash, not in that allow rule, is not run: with nobody to ask in -p, Claude Code answers the call with a refusal', () => {
    const bash = s.model.results.find((result) => result.tool === 'mcp__dsh__bash')
    expect(bash).toMatchObject({ isError: true, text: refusal('mcp__dsh__bash') })
    expect(s.output.permission_denials).toEqual([
      { tool_name: 'mcp__dsh__bash', tool_use_id: bash!.toolUseId, tool_input: BASH.input },
    ])
  })
})

describe('Claude Code 2.1.332, claude -p: calls that are not allowed are refused, not run', () => {
  test(
    'a trusted project without an allow rule: the grep call gets Claude Code’s refusal, not dsh’s text, and claude still exits 0',
    async () => {
      const s = await session({ trusted: true, steps: [LOAD_READ_ONLY, GREP] })
      expect(s.add.code, s.add.stderr).toBe(0)
      expect(s.run.code, s.run.stderr).toBe(0)
      expect(s.model.results.map(({ tool, isError, text }) => ({ tool, isError, text }))).toEqual([
        { tool: 'ToolSearch', isError: false, text: '' },
        { tool: 'mcp__dsh__grep', isError: true, text: refusal('mcp__dsh__grep') },
      ])
      expect(s.output).toMatchObject({
        is_error: false,
        permission_denials: [{ tool_name: 'mcp__dsh__grep', tool_input: GREP.input }],
      })
    },
    TEST_TIMEOUT_MS,
  )

  test(
    'the README allow rule in .claude/settings.json of a project never trusted is dropped, so grep is refused too',
    async () => {
      const s = await session({ projectSettings: READ_ONLY_ALLOW, trusted: false, steps: [LOAD_READ_ONLY, GREP] })
      expect(s.run.code, s.run.stderr).toBe(0)
      expect(s.model.results.find((result) => result.tool === 'mcp__dsh__grep')).toMatchObject({
        isError: true,
        text: refusal('mcp__dsh__grep'),
      })
      // Why, in Claude Code's own words (the -p help says it skips the trust dialog, not that it trusts).
      expect(s.debug).toContain('Dropped 4 project-scoped permissions.allow entries — workspace not yet trusted')
    },
    TEST_TIMEOUT_MS,
  )
})

describe('Claude Code 2.1.332, claude -p: "mcp__dsh" in the user settings', () => {
  test(
    'allows the whole server, bash included, with no trust needed: bash runs in the --cwd directory',
    async () => {
      const s = await session({
        userSettings: { permissions: { allow: ['mcp__dsh'] } },
        trusted: false,
        steps: [{ tool: 'ToolSearch', input: { query: 'select:mcp__dsh__bash' } }, BASH],
      })
      expect(s.run.code, s.run.stderr).toBe(0)
      expect(s.model.results.find((result) => result.tool === 'mcp__dsh__bash')).toMatchObject({
        isError: false,
        text: s.project,
      })
      expect(s.output.permission_denials).toEqual([])
    },
    TEST_TIMEOUT_MS,
  )
})
