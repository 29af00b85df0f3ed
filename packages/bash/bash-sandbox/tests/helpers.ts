export { processesWith, rejection, uniqueSleep, until } from '@deepseek-ai/dsh-testing'
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createTestContext, type TestContext, sessionFor } from '@deepseek-ai/dsh-testing'
import { SystemPromptService } from '@deepseek-ai/dsh-system-prompt'
import LocalSubprocess from '@deepseek-ai/dsh-subprocess-local'
import LocalTaskService from '@deepseek-ai/dsh-tasks-local'
import ToolBash from '@deepseek-ai/dsh-tool-bash'
import type { ToolResult } from '@deepseek-ai/dsh-tools'
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
