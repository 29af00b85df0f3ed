import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, expect, test } from 'vitest'
import { createTestContext, type TestContext } from '@deepseek-ai/dsh-testing'
import SandboxBashExecutor from '@deepseek-ai/dsh-bash-sandbox'
import LocalSpillStore from '@deepseek-ai/dsh-spill-local'
import LocalSubprocess from '@deepseek-ai/dsh-subprocess-local'
import { SystemPromptService } from '@deepseek-ai/dsh-system-prompt'
import LocalTaskService from '@deepseek-ai/dsh-tasks-local'
import ToolBash from '@deepseek-ai/dsh-tool-bash'
import { createSession, type ToolSession } from '@deepseek-ai/dsh-tools'
import Workspace, { hiddenBy } from '@deepseek-ai/dsh-workspace'

/*
 * Sessions apart (docs/seams.md#sessions) whatever the order the services come in: the workspace keeps each session's
 * rules for the spill store it knows, and learns of a store loaded after it, or swapped for another, when that happens.
 */

let t: TestContext | undefined
let base: string | undefined
const sessions: ToolSession[] = []
afterEach(async () => {
  for (const session of sessions.splice(0)) await session.dispose()
  await t?.dispose()
  if (base) rmSync(base, { recursive: true, force: true })
  t = undefined
  base = undefined
})

async function saved(store: LocalSpillStore | undefined, owner: ToolSession): Promise<string> {
  const result = await store?.saveText({
    owner,
    source: { toolName: 'grep', callId: 'call-1' },
    suggestedName: 'grep-output.txt',
    content: 'A-SAVED\n',
  })
  return realpathSync(result?.locator ?? '')
}

test("a spill store loaded after the workspace, then swapped for another: B never sees A's saved results", async () => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-spill-order-')))
  t = await createTestContext()
  await t.active(t.ctx.plugin(Workspace, {}))
  const a = createSession({ id: 'A', cwd: base })
  const b = createSession({ id: 'B', cwd: base })
  sessions.push(a, b)
  const rules = () => t?.ctx.get('workspace')?.policy(b, 'read').rules ?? []
  // B asks before any store exists: nothing to hide yet, and nothing of that answer may stick.
  expect(rules().some((rule) => rule.shown.includes('another session'))).toBe(false)

  const first = t.ctx.plugin(LocalSpillStore, { root: join(base, 'one') })
  await t.active(first)
  const one = await saved(t.ctx.get('spillStore') as LocalSpillStore | undefined, a)
  expect(hiddenBy(one, rules())?.shown).toBe("another session's saved results or command output")

  await first.dispose()
  await t.active(t.ctx.plugin(LocalSpillStore, { root: join(base, 'two') }))
  const two = await saved(t.ctx.get('spillStore') as LocalSpillStore | undefined, a)
  expect(hiddenBy(two, rules())?.shown).toBe("another session's saved results or command output")
  // A's own stay A's.
  expect(hiddenBy(two, t.ctx.get('workspace')?.policy(a, 'read').rules ?? [])).toBeUndefined()
})

test("the sandbox too: with the store loaded after it, then swapped, B's commands never read A's saved results", async () => {
  // Under /var/tmp: inside the sandbox the host's /tmp is the session's own.
  base = realpathSync(mkdtempSync('/var/tmp/dsh-spill-order-'))
  t = await createTestContext()
  await t.ctx.plugin(SystemPromptService)
  await t.active(t.ctx.plugin(LocalSubprocess, { spillDir: join(base, '.spill') }))
  await t.active(t.ctx.plugin(LocalTaskService))
  await t.active(t.ctx.plugin(SandboxBashExecutor, { graceMs: 200 }))
  await t.active(t.ctx.plugin(ToolBash))
  const a = createSession({ id: 'A', cwd: base })
  const b = createSession({ id: 'B', cwd: base })
  sessions.push(a, b)
  const cat = async (session: ToolSession, path: string) =>
    (await t?.ctx.tools.execute('bash', { command: `cat ${path} 2>&1; true`, description: 'read' }, { session }))
      ?.content[0].text ?? ''
  // B runs a command before any store exists (nothing to mask yet; nothing of that may stick).
  expect(await cat(b, '/dev/null')).toBe('(no output)')
  const first = t.ctx.plugin(LocalSpillStore, { root: join(base, 'one') })
  await t.active(first)
  const one = await saved(t.ctx.get('spillStore') as LocalSpillStore | undefined, a)
  expect(await cat(a, one)).toBe('A-SAVED')
  expect(await cat(b, one)).not.toContain('A-SAVED')
  await first.dispose()
  await t.active(t.ctx.plugin(LocalSpillStore, { root: join(base, 'two') }))
  const two = await saved(t.ctx.get('spillStore') as LocalSpillStore | undefined, a)
  expect(await cat(a, two)).toBe('A-SAVED')
  expect(await cat(b, two)).not.toContain('A-SAVED')
})

test('a workspace loaded after the sandbox, then swapped for another: its hidden paths are masked for commands', async () => {
  base = realpathSync(mkdtempSync('/var/tmp/dsh-workspace-order-'))
  writeFileSync(join(base, 'first.key'), 'FIRST-CANARY\n')
  writeFileSync(join(base, 'second.key'), 'SECOND-CANARY\n')
  t = await createTestContext()
  await t.ctx.plugin(SystemPromptService)
  await t.active(t.ctx.plugin(LocalSubprocess, { spillDir: join(base, '.spill') }))
  await t.active(t.ctx.plugin(LocalTaskService))
  await t.active(t.ctx.plugin(SandboxBashExecutor, { graceMs: 200 }))
  await t.active(t.ctx.plugin(ToolBash))
  const b = createSession({ id: 'B', cwd: base })
  sessions.push(b)
  const cat = async (path: string) =>
    (await t?.ctx.tools.execute('bash', { command: `cat ${path} 2>&1; true`, description: 'read' }, { session: b }))
      ?.content[0].text ?? ''
  // Before any workspace: nothing is hidden by one (nothing of that answer may stick).
  expect(await cat(join(base, 'first.key'))).toBe('FIRST-CANARY')
  const first = t.ctx.plugin(Workspace, { denyRead: [join(base, 'first.key')] })
  await t.active(first)
  expect(await cat(join(base, 'first.key'))).not.toContain('CANARY')
  await first.dispose()
  await t.active(t.ctx.plugin(Workspace, { denyRead: [join(base, 'second.key')] }))
  expect(await cat(join(base, 'second.key'))).not.toContain('CANARY')
})
