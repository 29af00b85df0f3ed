import { sessionFor } from '@deepseek-ai/dsh-testing'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createDefaultContext } from 'dsh-agent-tools'
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest'
import { BIN, processesWith, uniqueSleep, until } from './helpers.ts'

/*
 * Issue 33 row 1 (docs/security.md#boundary): without --sandbox, nothing a call started outlives dsh, not even what left the call's
 * process group (setsid -f, a double fork, nohup) or ignores SIGTERM; a kill or the session's end stops it too.
 */
let dir: string
const markers: string[] = []
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'dsh-harden-reaper-'))
})
afterEach(() => {
  // A failed case must not leave its sleeps behind for the next.
  for (const marker of markers.splice(0))
    for (const pid of processesWith(marker)) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {}
    }
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function sleeps(count: number) {
  const made = Array.from({ length: count }, () => uniqueSleep())
  markers.push(...made.map((s) => s.marker))
  return { commands: made.map((s) => s.command), running: () => made.filter((s) => processesWith(s.marker).length) }
}

test('kill -9 of dsh leaves none of a setsid -f, a TERM-ignoring double fork, a nohup and a plain sleep', async () => {
  const s = sleeps(4)
  const [a, b, c, d] = s.commands
  const command = `setsid -f ${a}; (trap "" TERM; ${b} &); nohup ${c} >/dev/null 2>&1 & ${d}`
  const dsh = spawn(
    process.execPath,
    [BIN, 'call', 'bash', JSON.stringify({ command, description: 'escape' }), '--cwd', dir],
    { stdio: 'ignore' },
  )
  const exited = new Promise((resolve) => dsh.on('close', resolve))
  await until(() => s.running().length === 4, 'all four sleeps run')
  dsh.kill('SIGKILL')
  await exited
  await until(() => s.running().length === 0, 'no sleep survives dsh')
  expect(s.running()).toEqual([])
}, 60_000)

test('bash_kill stops a task and its setsid, TERM-ignoring descendant; the kill text and the status agree', async () => {
  const host = await createDefaultContext({ config: { 'bash-local': { graceMs: 300 } }, log: () => {} })
  const session = sessionFor('kill', dir)
  const call = async (tool: string, args: Record<string, unknown>) =>
    (await host.ctx.tools.execute(tool, args, { session })).content.map((p) => ('text' in p ? p.text : '')).join('')
  try {
    const s = sleeps(2)
    const [a, b] = s.commands
    const started = await call('bash', {
      command: `setsid -f bash -c 'trap "" TERM; ${a}'; ${b}`,
      description: 'task',
      run_in_background: true,
    })
    const id = /bash-\d+/.exec(started)?.[0] as string
    expect(id).toBeDefined()
    await until(() => s.running().length === 2, 'both sleeps run')
    const killed = await call('bash_kill', { task_id: id })
    expect(killed).toContain(`killed background task ${id}`)
    expect(killed).not.toContain('not stopped')
    expect(s.running()).toEqual([])
    const status = await call('bash_output', { task_id: id })
    expect(status).toMatch(/killed/)
    expect(status).not.toContain('not stopped')
  } finally {
    await host.dispose()
  }
}, 60_000)

test("the host's end stops what a finished foreground call left outside its group", async () => {
  const host = await createDefaultContext({ config: { 'bash-local': { graceMs: 300 } }, log: () => {} })
  const s = sleeps(1)
  try {
    const result = await host.ctx.tools.execute(
      'bash',
      { command: `setsid -f ${s.commands[0]} >/dev/null 2>&1; echo left`, description: 'daemon' },
      { session: sessionFor('end', dir) },
    )
    expect(result.content[0]).toMatchObject({ text: expect.stringContaining('left') })
    await until(() => s.running().length === 1, 'the daemon runs')
  } finally {
    await host.dispose()
  }
  expect(s.running()).toEqual([])
}, 60_000)
