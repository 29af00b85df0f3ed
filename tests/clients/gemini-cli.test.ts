import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { processesWith, until } from '@deepseek-ai/dsh-testing'
import { installedDsh } from '../../packages/host/cli/tests/helpers.ts'
import { agentCli, type CliRun, killLeftovers, runCli } from './clients.ts'
import { startGeminiModel, type GeminiModel, type ScriptedCall } from './gemini-model.ts'

/**
 * The real Gemini CLI (pinned) runs `gemini -p` headless against the real `dsh mcp`, mounted as the README's recipe
 * says, with its model API replaced by a scripted stand-in (tests/clients/gemini-model.ts) that makes the calls.
 */

/** The README's DSH: the installed copy of the packed tarball (`$(npm prefix -g)/bin/dsh`), run with node. */
const DSH = installedDsh().bin
const TIMEOUT = 120_000
const DSH_TOOLS = [
  'mcp_dsh_apply_patch',
  'mcp_dsh_bash',
  'mcp_dsh_bash_input',
  'mcp_dsh_bash_kill',
  'mcp_dsh_bash_output',
  'mcp_dsh_edit',
  'mcp_dsh_glob',
  'mcp_dsh_grep',
  'mcp_dsh_read',
  'mcp_dsh_write',
]
const FINAL_TEXT = 'Done: the stand-in model has finished.'

interface Setup {
  readonly root: string
  readonly home: string
  readonly project: string
}

const roots: string[] = []
afterEach(() => {
  // A failed run must not leave its dsh server behind (its command line names the root); a hung CLI is runCli's.
  for (const root of roots.splice(0)) {
    killLeftovers(root)
    rmSync(root, { recursive: true, force: true })
  }
})

/** A temp HOME whose `.gemini/settings.json` mounts dsh as the README says, and a project with known files. */
function setup(options: { trust: boolean; trustFolder: boolean }): Setup {
  const root = mkdtempSync(join(tmpdir(), 'dsh-gemini-cli-'))
  roots.push(root)
  const home = join(root, 'home')
  const project = join(root, 'project')
  mkdirSync(join(home, '.gemini'), { recursive: true })
  mkdirSync(join(project, 'src'), { recursive: true })
  writeFileSync(join(project, 'src/a.ts'), 'export const a = 1 // TODO: rename\n')
  writeFileSync(join(project, 'notes.txt'), 'one\ntwo\nthree\n')
  const settings = {
    // With only an API key and GOOGLE_GEMINI_BASE_URL the CLI picks the "gateway" auth type, which -p rejects.
    security: { auth: { selectedType: 'gemini-api-key' } },
    // Usage statistics go to play.googleapis.com (and probe the GPU with lspci, xrandr…); updates to npm.
    privacy: { usageStatisticsEnabled: false },
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
    mcpServers: {
      dsh: { command: 'node', args: [DSH, 'mcp', '--cwd', project], ...(options.trust ? { trust: true } : {}) },
    },
  }
  writeFileSync(join(home, '.gemini', 'settings.json'), JSON.stringify(settings, null, 2))
  // What "trust this folder" writes: folder trust is on by default, and -p refuses to start in an untrusted folder.
  if (options.trustFolder)
    writeFileSync(join(home, '.gemini', 'trustedFolders.json'), JSON.stringify({ [project]: 'TRUST_FOLDER' }))
  return { root, home, project }
}

/** `gemini -p … --output-format json` in the project, against the stand-in; resolves when it and dsh are gone. */
async function gemini(where: Setup, model: GeminiModel, extraArgs: readonly string[] = []): Promise<CliRun> {
  // A clean environment, as a user's shell has: the CLI turns folder trust off when it sees VITEST=true.
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: where.home,
    NO_COLOR: '1',
    GEMINI_API_KEY: 'dummy-key',
    GOOGLE_GEMINI_BASE_URL: model.url,
  }
  // The CLI relaunches itself as a child, which starts dsh: runCli's process group holds them all.
  const run = await runCli(
    agentCli('gemini'),
    ['-p', 'Find the TODO in this project.', '--output-format', 'json', ...extraArgs],
    { cwd: where.project, env },
  )
  // dsh mcp's command line names the temp dir; nothing may outlive the CLI.
  await until(() => processesWith(where.root).length === 0, `no process of ${where.root} is left`)
  return run
}

const script: ScriptedCall[] = [
  { name: 'mcp_dsh_glob', args: { pattern: '**/*.ts' } },
  { name: 'mcp_dsh_grep', args: { pattern: 'TODO' } },
  { name: 'mcp_dsh_read', args: { path: 'notes.txt' } },
  { name: 'mcp_dsh_bash', args: { command: 'echo "$PWD"; exit 3', description: 'Print the directory' } },
]

/** What the CLI hands the model for an MCP tool's text result: the text, fenced as untrusted. */
const untrusted = (text: string) => ({ output: `<untrusted_context>\n${text}\n</untrusted_context>` })

const mcpNames = (model: GeminiModel) =>
  model
    .declarations()
    .map((declaration) => declaration.name)
    .filter((name) => name.startsWith('mcp_'))
    .sort()

describe('the Gemini CLI (gemini -p) against dsh mcp', () => {
  test(
    'a server with "trust": true is offered as mcp_dsh_<tool>, and glob, grep, read and bash run through dsh unattended with their exact text',
    async () => {
      const where = setup({ trust: true, trustFolder: true })
      await using model = await startGeminiModel({ calls: script, finalText: FINAL_TEXT })
      const run = await gemini(where, model)
      expect(run.code, run.stderr).toBe(0)
      expect((JSON.parse(run.stdout) as { response: string }).response).toBe(FINAL_TEXT)

      expect(mcpNames(model)).toEqual(DSH_TOOLS)
      expect(model.functionResponses).toEqual([
        { id: expect.any(String), name: 'mcp_dsh_glob', response: untrusted('src/a.ts') },
        {
          id: expect.any(String),
          name: 'mcp_dsh_grep',
          response: untrusted('Found 1 match\n\nsrc/a.ts\nLine 1: export const a = 1 // TODO: rename'),
        },
        {
          id: expect.any(String),
          name: 'mcp_dsh_read',
          response: untrusted('1: one\n2: two\n3: three\n\n[end of file: 3 lines]'),
        },
        { id: expect.any(String), name: 'mcp_dsh_bash', response: untrusted(`${where.project}\n[exit code: 3]`) },
      ])
      // Every request reached the stand-in with the key; the first is the router's complexity rating (JSON).
      expect(model.requests.every((request) => request.headers['x-goog-api-key'] === 'dummy-key')).toBe(true)
      expect(model.requests.map((request) => `${request.action} ${request.answer}`)).toEqual([
        'generateContent json',
        ...script.map((call) => `streamGenerateContent call ${call.name}`),
        'streamGenerateContent text',
      ])
    },
    TIMEOUT,
  )

  test(
    'without "trust", -p leaves dsh out of the declarations and answers a call of it "not found", without running it',
    async () => {
      const where = setup({ trust: false, trustFolder: true })
      await using model = await startGeminiModel({
        calls: [{ name: 'mcp_dsh_grep', args: { pattern: 'TODO' } }],
        finalText: FINAL_TEXT,
      })
      const run = await gemini(where, model)
      expect(run.code, run.stderr).toBe(0)

      // Headless, a tool that would ask is denied by policy, and denied tools are not declared at all.
      expect(model.declarations().length).toBeGreaterThan(0)
      expect(mcpNames(model)).toEqual([])
      expect(model.functionResponses).toEqual([
        {
          id: expect.any(String),
          name: 'mcp_dsh_grep',
          response: { error: expect.stringMatching(/^Tool "mcp_dsh_grep" not found\./) },
        },
      ])
    },
    TIMEOUT,
  )

  test(
    'without "trust", --approval-mode yolo offers dsh and runs its calls',
    async () => {
      const where = setup({ trust: false, trustFolder: true })
      await using model = await startGeminiModel({ calls: [script[1]!], finalText: FINAL_TEXT })
      const run = await gemini(where, model, ['--approval-mode', 'yolo'])
      expect(run.code, run.stderr).toBe(0)

      expect(mcpNames(model)).toEqual(DSH_TOOLS)
      expect(model.functionResponses).toEqual([
        {
          id: expect.any(String),
          name: 'mcp_dsh_grep',
          response: untrusted('Found 1 match\n\nsrc/a.ts\nLine 1: export const a = 1 // TODO: rename'),
        },
      ])
    },
    TIMEOUT,
  )

  test(
    'in a folder not trusted, -p exits 55 before asking the model anything, even with the server in ~/.gemini and "trust": true',
    async () => {
      const where = setup({ trust: true, trustFolder: false })
      await using model = await startGeminiModel({ calls: script, finalText: FINAL_TEXT })
      const run = await gemini(where, model)
      expect(run.code).toBe(55)
      expect(run.stderr).toContain(
        'Gemini CLI is not running in a trusted directory. To proceed, either use `--skip-trust`, set the `GEMINI_CLI_TRUST_WORKSPACE=true` environment variable, or trust this directory in interactive mode.',
      )
      expect(model.requests).toEqual([])
    },
    TIMEOUT,
  )
})
