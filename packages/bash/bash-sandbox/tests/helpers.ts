export { processesWith, rejection, uniqueSleep, until } from '@deepseek-ai/dsh-testing'
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createTestContext, type TestContext, sessionFor } from '@deepseek-ai/dsh-testing'
import { SystemPromptService } from '@deepseek-ai/dsh-system-prompt'
import LocalSubprocess from '@deepseek-ai/dsh-subprocess-local'
import LocalTaskService from '@deepseek-ai/dsh-tasks-local'
import ToolBash from '@deepseek-ai/dsh-tool-bash'
import type { ToolResult, ToolSession } from '@deepseek-ai/dsh-tools'
import type { ConfinedProcess, ConfineRequest, Confinement } from '@deepseek-ai/dsh-confinement'
import type { SubprocessService } from '@deepseek-ai/dsh-subprocess'
import Workspace, { type Config as WorkspaceConfig } from '@deepseek-ai/dsh-workspace'
import SandboxBashExecutor, { type Config } from '../src/index.ts'

/**
 * Fixtures live under /var/tmp: inside the sandbox the host's /tmp is replaced by the private one.
 *   base/root      the session cwd (the workspace root)
 *   base/outside   outside every root, with keep.txt
 *   base/home      a fake HOME with .ssh/id_rsa
 */
export interface Paths {
  base: string
  root: string
  outside: string
  home: string
}

export interface Fixture extends Paths {
  t: TestContext
  /** One bash tool call of session s1 (cwd: root). */
  bash(command: string, extra?: Record<string, unknown>): Promise<ToolResult>
  text(command: string, extra?: Record<string, unknown>): Promise<string>
  cleanup(): Promise<void>
}

export interface FixtureOptions {
  config?: Partial<Config>
  /** undefined: no workspace service at all. */
  workspace?: Partial<WorkspaceConfig> | undefined
}

/** `options` sees the fixture's paths (already created), so a config can name them. */
export async function fixture(options: (paths: Paths) => FixtureOptions = () => ({ workspace: {} })): Promise<Fixture> {
  const base = realpathSync(mkdtempSync('/var/tmp/dsh-sandbox-test-'))
  const root = join(base, 'root')
  const outside = join(base, 'outside')
  const home = join(base, 'home')
  for (const dir of [root, outside, join(home, '.ssh')]) mkdirSync(dir, { recursive: true })
  writeFileSync(join(outside, 'keep.txt'), 'original\n')
  writeFileSync(join(home, '.ssh/id_rsa'), 'PRIVATE KEY\n')
  const chosen = options({ base, root, outside, home })
  const t = await createTestContext()
  await t.ctx.plugin(SystemPromptService)
  await t.active(t.ctx.plugin(LocalSubprocess, { spillDir: join(base, '.spill') }))
  if (chosen.workspace) await t.active(t.ctx.plugin(Workspace, chosen.workspace))
  await t.active(t.ctx.plugin(LocalTaskService))
  await t.active(t.ctx.plugin(SandboxBashExecutor, { graceMs: 200, ...chosen.config }))
  await t.active(t.ctx.plugin(ToolBash))
  const bash = (command: string, extra: Record<string, unknown> = {}) =>
    t.ctx.tools.execute('bash', { command, description: 'test', ...extra }, { session: sessionFor('s1', root) })
  return {
    t,
    base,
    root,
    outside,
    home,
    bash,
    text: async (command, extra) => (await bash(command, extra)).content[0].text,
    async cleanup() {
      try {
        await t.dispose()
      } finally {
        rmSync(base, { recursive: true, force: true })
      }
    },
  }
}

/** The process groups the sandbox spawns from now on (its launchers), recorded around the real subprocess provider. */
export function recordGroups(t: TestContext): number[] {
  const service = t.ctx.get('subprocess') as SubprocessService
  const spawn = service.spawn.bind(service)
  const groups: number[] = []
  service.spawn = async (request) => {
    const handle = await spawn(request)
    groups.push(handle.pid)
    return handle
  }
  return groups
}

/** What the search tools ask ctx.confinement for, for `program args` in `cwd`. */
export function confineRequest(
  cwd: string,
  program: string,
  args: string[],
  session?: ToolSession,
  signal?: AbortSignal,
): ConfineRequest {
  return { argv: [program, ...args], cwd, session, access: 'read', graceMs: 60_000, ...(signal ? { signal } : {}) }
}

/** Starts a program confined as the search tools do, its output read to the end: `output()` once it ended. */
export async function startConfined(
  confinement: Confinement,
  request: ConfineRequest,
): Promise<{ run: ConfinedProcess; output: () => Promise<string> }> {
  const run = await confinement.start(request)
  const chunks: Buffer[] = []
  run.stdout.on('data', (chunk: Buffer) => chunks.push(chunk))
  run.stderr.resume()
  const output = async (): Promise<string> => {
    await run.done
    return Buffer.concat(chunks).toString()
  }
  return { run, output }
}
