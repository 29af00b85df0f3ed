import { processesWith, until } from '@deepseek-ai/dsh-testing'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, test } from 'vitest'
import { installedDsh } from '../../packages/host/cli/tests/helpers.ts'
import { agentCli, type CliRun, killLeftovers, runCli } from './clients.ts'
import { offeredTools, startResponsesModel, type ResponsesModel, type ToolCall } from './responses-model.ts'

/**
 * The real Codex CLI (pinned) runs `codex exec` against the real `dsh mcp`, mounted as the README's "Mount it in an
 * MCP client" says; a scripted stand-in answers Codex's Responses API requests with tool calls, and records what
 * Codex offered the model and sent back.
 */

const _ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
/** The README's DSH: the installed copy of the packed tarball (`$(npm prefix -g)/bin/dsh`), run with node. */
const DSH = installedDsh().bin
const TIMEOUT = 120_000
const FINAL = 'Done.'
const dsh = (name: string, args: Record<string, unknown>): ToolCall => ({
  namespace: 'mcp__dsh',
  name,
  arguments: args,
})
/** Codex puts this before every tool output it sends back: `outputs[i]` is [this, the tool's text]. */
const WALL_TIME = expect.stringMatching(/^Wall time: \d+(\.\d+)? seconds\nOutput:$/)

interface Fixture {
  base: string
  home: string
  project: string
}

const fixtures: Fixture[] = []

afterEach(() => {
  // A failed test may leave dsh behind (its argv names the fixture); a hung Codex is killed by runCli's guard.
  for (const { base } of fixtures.splice(0)) {
    killLeftovers(base)
    rmSync(base, { recursive: true, force: true })
  }
})

/** A temp HOME (Codex's home is its .codex) and a project with one known file. */
function fixture(): Fixture {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-codex-')))
  const made = { base, home: join(base, 'home'), project: join(base, 'project') }
  fixtures.push(made)
  mkdirSync(join(made.home, '.codex'), { recursive: true })
  mkdirSync(join(made.project, 'src'), { recursive: true })
  writeFileSync(join(made.project, 'src/a.ts'), 'export const a = 1\nexport const marker = "zebrafish"\n')
  return made
}

/** ~/.codex/config.toml: the stand-in as model provider, then `[mcp_servers.dsh]` exactly as the README has it. */
function writeConfig(at: Fixture, model: ResponsesModel, options: { approveTools: boolean; dshArgs?: string[] }): void {
  const str = (value: string) => JSON.stringify(value)
  const lines = [
    'model = "stand-in"',
    'model_provider = "stand-in"',
    'check_for_update_on_startup = false',
    '',
    // Both on by default, and each resolves chatgpt.com or github.com at startup (metrics; the plugin marketplace).
    '[analytics]',
    'enabled = false',
    '',
    '[features]',
    'plugins = false',
    '',
    '[model_providers.stand-in]',
    'name = "stand-in"',
    `base_url = ${str(model.baseUrl)}`,
    'wire_api = "responses"',
    'env_key = "DSH_TEST_MODEL_KEY"',
    '',
    '[mcp_servers.dsh]',
    'command = "node"',
    `args = [${[DSH, 'mcp', '--cwd', at.project, ...(options.dshArgs ?? [])].map(str).join(', ')}]`,
    ...(options.approveTools ? ['default_tools_approval_mode = "approve"'] : []),
  ]
  writeFileSync(join(at.home, '.codex', 'config.toml'), `${lines.join('\n')}\n`)
}

/** `codex exec` in the project, with no approval_policy set (exec's own default); resolves when it exited. */
function codexExec(at: Fixture, prompt: string): Promise<CliRun> {
  // --strict-config: a key this Codex does not know fails the run instead of being ignored.
  return runCli(agentCli('codex'), ['exec', '--strict-config', '--skip-git-repo-check', prompt], {
    cwd: at.project,
    // Only what Codex needs: none of the user's OPENAI_* / CODEX_* settings, a dummy key for env_key.
    env: {
      PATH: process.env.PATH ?? '',
      HOME: at.home,
      CODEX_HOME: join(at.home, '.codex'),
      LANG: 'C.UTF-8',
      DSH_TEST_MODEL_KEY: 'dummy-key',
    },
  })
}

/** Codex exited 0 with the stand-in's last message, every request was a turn with the dummy key, dsh is gone. */
async function expectCleanRun(at: Fixture, model: ResponsesModel, run: CliRun): Promise<void> {
  expect(run.code, run.stderr).toBe(0)
  expect(run.stdout.trim()).toBe(FINAL)
  expect(run.stderr).toContain('approval: never')
  expect(model.requests.map(({ method, path, authorization }) => ({ method, path, authorization }))).toEqual(
    model.requests.map(() => ({ method: 'POST', path: '/v1/responses', authorization: 'Bearer dummy-key' })),
  )
  await until(() => processesWith(at.base).length === 0, 'Codex stopped the dsh mcp it started')
}

describe('Codex CLI (codex exec) with dsh mcp', () => {
  test(
    "offers dsh's tools in the namespace mcp__dsh, and runs the read-only ones (grep, glob, read, bash_output) without approval under exec's approval_policy never",
    async () => {
      const at = fixture()
      await using model = await startResponsesModel({
        calls: [
          dsh('grep', { pattern: 'zebrafish' }),
          dsh('glob', { pattern: '**/*.ts' }),
          dsh('read', { path: 'src/a.ts' }),
          dsh('bash_output', { task_id: 'bash-1' }),
        ],
        finalText: FINAL,
      })
      writeConfig(at, model, { approveTools: false })
      const run = await codexExec(at, 'Find the word zebrafish.')
      await expectCleanRun(at, model, run)

      const first = model.requests[0]?.body
      expect(first).toBeDefined()
      expect(offeredTools(first!).filter((tool) => tool.namespace === 'mcp__dsh')).toEqual(
        ['apply_patch', 'bash', 'bash_input', 'bash_kill', 'bash_output', 'edit', 'glob', 'grep', 'read', 'write'].map(
          (name) => ({
            namespace: 'mcp__dsh',
            name,
          }),
        ),
      )
      // The namespace's description is dsh's MCP `instructions`.
      expect(first!.tools?.find((tool) => tool.name === 'mcp__dsh')?.description).toMatch(
        /^These instructions are about the tools of the MCP server dsh: apply_patch, bash, bash_input, bash_kill, bash_output, edit, glob, grep, read, write\./,
      )
      expect(model.outputs).toEqual([
        [WALL_TIME, 'Found 1 match\n\nsrc/a.ts\nLine 2: export const marker = "zebrafish"'],
        [WALL_TIME, 'src/a.ts'],
        [WALL_TIME, '1: export const a = 1\n2: export const marker = "zebrafish"\n\n[end of file: 2 lines]'],
        // No task was started: dsh's error result proves the call reached it.
        [WALL_TIME, expect.stringMatching(/^Error: .*bash-1/)],
      ])
    },
    TIMEOUT,
  )

  test(
    "refuses bash and bash_kill under approval_policy never: the model gets Codex's refusal and the command never runs",
    async () => {
      const at = fixture()
      await using model = await startResponsesModel({
        calls: [
          dsh('bash', { command: 'touch ran.txt', description: 'Leave a mark' }),
          dsh('bash_kill', { task_id: 'bash-1' }),
        ],
        finalText: FINAL,
      })
      writeConfig(at, model, { approveTools: false })
      const run = await codexExec(at, 'Leave a mark.')
      await expectCleanRun(at, model, run)

      const refusal = [WALL_TIME, 'MCP tool call requires approval, but approval policy is never']
      expect(model.outputs).toEqual([refusal, refusal])
      expect(existsSync(join(at.project, 'ran.txt'))).toBe(false)
    },
    TIMEOUT,
  )

  test(
    'runs bash unattended with default_tools_approval_mode = "approve", outside Codex\'s read-only sandbox',
    async () => {
      const at = fixture()
      await using model = await startResponsesModel({
        calls: [
          dsh('bash', { command: 'echo "$PWD" && touch ran.txt', description: 'Print the directory and leave a mark' }),
        ],
        finalText: FINAL,
      })
      writeConfig(at, model, { approveTools: true })
      const run = await codexExec(at, 'Print the directory and leave a mark.')
      await expectCleanRun(at, model, run)

      expect(model.outputs).toEqual([[WALL_TIME, at.project]])
      // Codex's sandbox confines its own shell tool, not an MCP server: dsh's bash wrote into the project.
      expect(run.stderr).toContain('sandbox: read-only')
      expect(existsSync(join(at.project, 'ran.txt'))).toBe(true)
    },
    TIMEOUT,
  )

  test(
    'runs apply_patch unattended with default_tools_approval_mode = "approve": a Codex-format patch changes the project',
    async () => {
      const at = fixture()
      const patch = [
        '*** Begin Patch',
        '*** Update File: src/a.ts',
        '@@',
        ' export const a = 1',
        '-export const marker = "zebrafish"',
        '+export const marker = "salmon"',
        '*** Add File: src/b.ts',
        '+export const b = 2',
        '*** End Patch',
      ].join('\n')
      await using model = await startResponsesModel({
        calls: [dsh('read', { path: 'src/a.ts' }), dsh('apply_patch', { patch })],
        finalText: FINAL,
      })
      writeConfig(at, model, { approveTools: true })
      const run = await codexExec(at, 'Rename the marker to salmon and add src/b.ts.')
      await expectCleanRun(at, model, run)

      expect(model.outputs[1]).toEqual([
        WALL_TIME,
        `Applied the patch: 2 files changed\n\nUpdated ${at.project}/src/a.ts\n1: export const a = 1\n2: export const marker = "salmon"\n\nCreated ${at.project}/src/b.ts (1 line)`,
      ])
      expect(readFileSync(join(at.project, 'src/a.ts'), 'utf8')).toBe(
        'export const a = 1\nexport const marker = "salmon"\n',
      )
      expect(readFileSync(join(at.project, 'src/b.ts'), 'utf8')).toBe('export const b = 2\n')
    },
    TIMEOUT,
  )

  test(
    "a background task's completion notice reaches the model once, on a later tool result, though Codex drops logging notifications",
    async () => {
      const at = fixture()
      const notice =
        'background task bash-1 finished [status: completed, exit code: 0]. Read its output with bash_output.'
      // The task ends at once; the later calls are the results it can ride on (the first that comes after its end).
      await using model = await startResponsesModel({
        calls: [
          dsh('bash', { command: 'true', description: 'Finish at once', run_in_background: true }),
          ...[1, 2, 3].map(() => dsh('glob', { pattern: '**/*.ts' })),
        ],
        finalText: FINAL,
      })
      writeConfig(at, model, { approveTools: true })
      const run = await codexExec(at, 'Start a task.')
      await expectCleanRun(at, model, run)

      expect(model.outputs[0]).toEqual([WALL_TIME, 'started background task bash-1'])
      const globs = model.outputs.slice(1).map((output) => output?.[1])
      expect(globs.filter((text) => text === `src/a.ts\n\n${notice}`)).toHaveLength(1)
      expect(globs.filter((text) => text === 'src/a.ts')).toHaveLength(2)
      // Nowhere else in what Codex sent the model: not as a logging notification turned into a message.
      const mentions = model.requests.map(
        (request) => JSON.stringify(request.body ?? {}).split('finished [status: completed').length - 1,
      )
      expect(mentions.at(-1)).toBe(1)
    },
    TIMEOUT,
  )

  test(
    'a long bash call returns as a task with its output so far, and bash_output wait_for reaches its end (docs/seams.md#tasks)',
    async () => {
      const at = fixture()
      // The default is 45 000 ms; a shorter one keeps the test short, the flow is the same.
      const config = join(at.base, 'dsh.json')
      writeFileSync(config, JSON.stringify({ 'tool-bash': { backgroundAfterMs: 1500 } }))
      await using model = await startResponsesModel({
        calls: [
          dsh('bash', { command: 'echo building; sleep 4; echo built', description: 'A long build' }),
          dsh('bash_output', { task_id: 'bash-1', wait_for: '^built$' }),
        ],
        finalText: FINAL,
      })
      writeConfig(at, model, { approveTools: true, dshArgs: ['--config', config] })
      const run = await codexExec(at, 'Build.')
      await expectCleanRun(at, model, run)

      expect(model.outputs[0]).toEqual([
        WALL_TIME,
        'building\n[still running after 1500ms: it continues as background task bash-1. Wait for it with bash_output {"task_id":"bash-1","wait_for":"<regex for a line it prints>"} (or timeout_ms alone to wait for its end); bash_kill stops it]',
      ])
      expect(model.outputs[1]?.[1]).toMatch(
        /^built\n\[wait_for matched\]\n\[status: (running|completed, exit code: 0)\]/,
      )
    },
    TIMEOUT,
  )
})
