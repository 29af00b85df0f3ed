import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { processRuns, procStat, runningState } from '@deepseek-ai/dsh-subprocess'
import { BIN, processesWith, startDsh, uniqueSleep, until } from './helpers.ts'

/*
 * Attack #12 in docs/security.md#attacks (docs/security.md#boundary, the sandbox dies with dsh): SIGKILL of dsh — no handler runs — while a
 * sandboxed command runs, while a command's leftovers run as an adopted task, and while a background task runs:
 * afterwards nothing of it is alive, neither the commands, nor their `setsid` daemons, nor bwrap or its init.
 */
let dir: string
beforeAll(() => {
  dir = realpathSync(mkdtempSync('/var/tmp/dsh-security-life-'))
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** Live (not zombie) descendants of `root`, found through /proc. */
function descendants(root: number): number[] {
  const parents = new Map<number, number>()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    const stat = procStat(entry)
    if (stat && runningState(stat.state)) parents.set(stat.pid, stat.ppid)
  }
  const found: number[] = []
  const walk = (pid: number) => {
    for (const [child, parent] of parents)
      if (parent === pid) {
        found.push(child)
        walk(child)
      }
  }
  walk(root)
  return found
}

/** The sandbox's state directory, from a bwrap command line among `pids` (`--bind <state>/tmp/<session> /tmp`). */
function stateDir(pids: readonly number[]): string {
  for (const pid of pids) {
    try {
      const match = /\0--bind\0(\/[^\0]*\/dsh-sandbox-[^/\0]+)\/tmp\//.exec(
        readFileSync(`/proc/${pid}/cmdline`, 'latin1'),
      )
      if (match) return match[1] as string
    } catch {
      // gone meanwhile
    }
  }
  throw new Error('no bwrap among the processes')
}

test('SIGKILL of `dsh call --sandbox` during a command leaves nothing behind', async () => {
  const daemon = uniqueSleep()
  const foreground = uniqueSleep()
  const started = startDsh(
    [
      'call',
      '--sandbox',
      '--cwd',
      dir,
      'bash',
      JSON.stringify({
        command: `setsid ${daemon.command} > /dev/null 2>&1 & ${foreground.command}`,
        description: 'run',
      }),
    ],
    { cwd: dir },
  )
  await until(
    () => processesWith(daemon.marker).length > 0 && processesWith(foreground.marker).length > 0,
    'both sleeps run',
  )
  const tree = descendants(started.child.pid as number)
  expect(tree.length).toBeGreaterThan(3)
  const state = stateDir(tree)
  expect(existsSync(state)).toBe(true)
  started.child.kill('SIGKILL')
  await started.exited
  await until(() => tree.every((pid) => !processRuns(pid)), 'every process dsh started is gone')
  // The reaper also removed the sandbox's state directory (the sessions' /tmp).
  await until(() => !existsSync(state), 'the state directory is gone')
  await until(
    () => processesWith(daemon.marker).length === 0 && processesWith(foreground.marker).length === 0,
    'both sleeps are gone',
  )
}, 60_000)

test('SIGKILL of `dsh mcp --sandbox` with an adopted leftover and a background task leaves nothing behind', async () => {
  const leftover = uniqueSleep()
  const task = uniqueSleep()
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp', '--sandbox', '--cwd', dir],
    cwd: dir,
    stderr: 'ignore',
  })
  const client = new Client({ name: 'test', version: '1.0.0' })
  await client.connect(transport)
  const adopted = (await client.callTool({
    name: 'bash',
    arguments: { command: `setsid ${leftover.command} > /dev/null 2>&1 & echo started`, description: 'leave a daemon' },
  })) as CallToolResult
  expect((adopted.content[0] as { text: string }).text).toContain('started')
  await client.callTool({
    name: 'bash',
    arguments: { command: task.command, description: 'task', run_in_background: true },
  })
  await until(
    () => processesWith(leftover.marker).length > 0 && processesWith(task.marker).length > 0,
    'both sleeps run',
  )
  const pid = transport.pid as number
  const tree = descendants(pid)
  process.kill(pid, 'SIGKILL')
  await until(() => !processRuns(pid), 'dsh is gone')
  await until(() => tree.every((child) => !processRuns(child)), 'every process dsh started is gone')
  // An adopted leftover's namespace is no descendant of dsh any more (its bwrap exited): the sleeps say it is gone.
  await until(
    () => processesWith(leftover.marker).length === 0 && processesWith(task.marker).length === 0,
    'both sleeps are gone',
  )
  await client.close().catch(() => {})
}, 60_000)
