import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { processesWith, until } from '@deepseek-ai/dsh-testing'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { startChatModel, textOf, type ChatModelScript, type RecordedRequest, type ToolResult } from './chat-model.ts'
import { installedDsh } from '../../packages/host/cli/tests/helpers.ts'
import { agentCli, killLeftovers, runCli } from './clients.ts'

/**
 * The real opencode CLI (pinned) runs `opencode run` headless against the built `dsh mcp`, mounted as the root
 * README says; its model is a scripted stand-in (chat-model.ts) behind a custom OpenAI-compatible provider, so what
 * opencode offers the model and what it sends back as tool results is recorded.
 */

const _ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
/** The README's DSH: the installed copy of the packed tarball (`$(npm prefix -g)/bin/dsh`), run with node. */
const DSH = installedDsh().bin
const TIMEOUT = 120_000

interface Session {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
  project: string
  requests: RecordedRequest[]
  toolResults: ToolResult[]
}

/** One line of `opencode run --format json`, as far as these tests read it. */
interface RunEvent {
  type: string
  part?: { tool?: string; state?: { status: string; output?: string; error?: string } }
}

const temps: string[] = []
afterAll(() => {
  // A failed run must not leave its dsh server behind (its command line names the dir); a hung CLI is runCli's.
  for (const dir of temps) {
    killLeftovers(dir)
    rmSync(dir, { recursive: true, force: true })
  }
})

/**
 * `opencode run` in a fresh project with `files`, under a HOME and XDG directories of its own, the model scripted.
 * `config` is merged into the project's opencode.json. Resolves when opencode exited and the dsh mcp it started is gone.
 */
async function session(options: {
  files: Record<string, string>
  script: ChatModelScript
  config?: Record<string, unknown>
}): Promise<Session> {
  const base = mkdtempSync(join(tmpdir(), 'dsh-opencode-'))
  temps.push(base)
  const project = join(base, 'project')
  const home = join(base, 'home')
  for (const [path, content] of Object.entries(options.files)) {
    mkdirSync(dirname(join(project, path)), { recursive: true })
    writeFileSync(join(project, path), content)
  }
  // opencode installs @opencode-ai/plugin from the npm registry into each config directory, in the background,
  // unless its package-lock.json lists it and node_modules exists: this keeps the run off the network.
  const globalConfig = join(home, '.config', 'opencode')
  mkdirSync(join(globalConfig, 'node_modules'), { recursive: true })
  writeFileSync(
    join(globalConfig, 'package-lock.json'),
    JSON.stringify({ packages: { '': { dependencies: { '@opencode-ai/plugin': '*' } } } }),
  )

  await using model = await startChatModel(options.script)
  writeFileSync(
    join(project, 'opencode.json'),
    JSON.stringify(
      {
        $schema: 'https://opencode.ai/config.json',
        // The README's recipe, verbatim but for the paths.
        mcp: { dsh: { type: 'local', command: ['node', DSH, 'mcp', '--cwd', project], enabled: true } },
        provider: {
          standin: {
            npm: '@ai-sdk/openai-compatible',
            name: 'Scripted stand-in',
            options: { baseURL: model.baseURL, apiKey: 'unused' },
            models: { scripted: { name: 'Scripted', tool_call: true, limit: { context: 100_000, output: 4_096 } } },
          },
        },
        ...options.config,
      },
      null,
      2,
    ),
  )

  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_STATE_HOME: join(home, '.local', 'state'),
    // Else it fetches https://models.opencode.ai/api.json at start (and waits for the failure offline).
    OPENCODE_DISABLE_MODELS_FETCH: '1',
  }
  const { code, signal, stdout, stderr } = await runCli(
    agentCli('opencode'),
    ['run', '--model', 'standin/scripted', '--format', 'json', 'Look around this project.'],
    { cwd: project, env },
  )
  // dsh mcp is the only process with the project in its command line (`--cwd`).
  await until(() => processesWith(project).length === 0, `the dsh mcp that opencode started for ${project} exited`)
  return { code, signal, stdout, stderr, project, requests: model.requests, toolResults: model.toolResults }
}

const events = (run: Session) =>
  run.stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as RunEvent)
/** The requests of the agent itself, which offer tools (the others are opencode's side requests). */
const agentRequests = (run: Session) => run.requests.filter((r) => r.body?.tools?.length)

const FILES = {
  'src/a.ts': 'export const a = 1 // TODO: rename\n',
  'notes.txt': 'one\ntwo\nthree\n',
}
const SCRIPT: ChatModelScript = {
  steps: [
    { tool: 'dsh_glob', arguments: { pattern: '**/*.ts' } },
    { tool: 'dsh_grep', arguments: { pattern: 'TODO' } },
    { tool: 'dsh_read', arguments: { path: 'notes.txt' } },
    {
      tool: 'dsh_bash',
      arguments: {
        command: 'echo "$PWD"; echo made > made-by-bash.txt',
        description: 'Print the directory and write a file',
      },
    },
  ],
  reply: 'Looked around.',
  sideReply: 'Looking around',
}

describe('opencode run against dsh mcp, mounted as the README says', () => {
  let run: Session
  beforeAll(async () => {
    run = await session({ files: FILES, script: SCRIPT })
  }, TIMEOUT)

  test('opencode offers dsh tools as dsh_<name>, descriptions and schemas verbatim, beside its own built-ins; the server instructions reach the system prompt', () => {
    const offered = agentRequests(run)[0]?.body?.tools ?? []
    expect(offered.map((t) => t.function.name).sort()).toEqual([
      'bash',
      'dsh_apply_patch',
      'dsh_bash',
      'dsh_bash_input',
      'dsh_bash_kill',
      'dsh_bash_output',
      'dsh_edit',
      'dsh_glob',
      'dsh_grep',
      'dsh_read',
      'dsh_write',
      'edit',
      'glob',
      'grep',
      'read',
      'skill',
      'task',
      'todowrite',
      'webfetch',
      'write',
    ])
    const listed = JSON.parse(execFileSync(process.execPath, [DSH, 'tools', '--json'], { encoding: 'utf8' })) as {
      name: string
      description: string
      inputSchema: unknown
    }[]
    for (const tool of listed) {
      expect(offered.find((t) => t.function.name === `dsh_${tool.name}`)?.function, tool.name).toEqual({
        name: `dsh_${tool.name}`,
        description: tool.description,
        parameters: tool.inputSchema,
      })
    }
    const system = agentRequests(run)[0]
      ?.body?.messages.filter((m) => m.role === 'system')
      .map((m) => textOf(m.content))
      .join('\n')
    expect(system).toContain(
      'These instructions are about the tools of the MCP server dsh: apply_patch, bash, bash_input, bash_kill, bash_output, edit, glob, grep, read, write.',
    )
  })

  test('glob, grep and read run through dsh mcp; the tool messages carry dsh text exactly, and opencode run exits 0', () => {
    expect(run.code, run.stderr).toBe(0)
    expect(run.toolResults.map((r) => [r.step.tool, r.content])).toEqual([
      ['dsh_glob', 'src/a.ts'],
      ['dsh_grep', 'Found 1 match\n\nsrc/a.ts\nLine 1: export const a = 1 // TODO: rename'],
      ['dsh_read', '1: one\n2: two\n3: three\n\n[end of file: 3 lines]'],
      ['dsh_bash', run.project],
    ])
    expect(
      events(run)
        .filter((e) => e.type === 'text')
        .map((e) => e.part),
    ).toMatchObject([{ text: 'Looked around.' }])
  })

  test('under default permissions, headless opencode runs dsh_bash (annotated destructive) without asking', () => {
    expect(existsSync(join(run.project, 'made-by-bash.txt'))).toBe(true)
    expect(run.stderr).not.toContain('permission requested')
    expect(
      events(run)
        .filter((e) => e.type === 'tool_use')
        .map((e) => [e.part?.tool, e.part?.state?.status]),
    ).toEqual([
      ['dsh_glob', 'completed'],
      ['dsh_grep', 'completed'],
      ['dsh_read', 'completed'],
      ['dsh_bash', 'completed'],
    ])
  })

  test('besides the agent turns, opencode asks the same model only for a session title, without tools', () => {
    expect(
      run.requests.every((r) => r.method === 'POST' && r.path === '/v1/chat/completions' && r.body?.stream === true),
    ).toBe(true)
    // One turn per step, then the reply.
    expect(agentRequests(run).map((r) => r.answer.kind)).toEqual([
      'tool-call',
      'tool-call',
      'tool-call',
      'tool-call',
      'reply',
    ])
    const side = run.requests.filter((r) => !r.body?.tools?.length)
    expect(side.length).toBeLessThanOrEqual(1)
    for (const request of side) {
      expect(request.body?.model).toBe('scripted')
      expect(textOf(request.body?.messages[0]?.content)).toMatch(/^You are a title generator\./)
    }
  })
})

describe('opencode run with "permission": { "dsh_bash": "ask" }', () => {
  test(
    'headless, opencode auto-rejects the dsh_bash call, never runs it, ends the turn there and exits 0',
    async () => {
      const run = await session({
        files: FILES,
        script: { steps: [SCRIPT.steps[3]!], reply: 'Unreachable.', sideReply: 'Looking around' },
        config: { permission: { dsh_bash: 'ask' } },
      })
      expect(run.code, run.stderr).toBe(0)
      expect(run.stderr).toContain('permission requested: dsh_bash (*); auto-rejecting')
      expect(existsSync(join(run.project, 'made-by-bash.txt'))).toBe(false)
      expect(
        events(run)
          .filter((e) => e.type === 'tool_use')
          .map((e) => e.part?.state),
      ).toMatchObject([{ status: 'error', error: 'The user rejected permission to use this specific tool call.' }])
      // The rejection is not sent back to the model: no request after the call.
      expect(agentRequests(run).map((r) => r.answer.kind)).toEqual(['tool-call'])
      expect(run.toolResults).toEqual([])
    },
    TIMEOUT,
  )
})
