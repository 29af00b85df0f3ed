import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { BIN, processesWith, straySleeps, temp, until, type Temp } from './helpers.ts'

// What a command leaves behind, through the built hosts (docs/seams.md#tasks, docs/security.md#boundary): nothing may hold a call past its grace,
// and nothing a one-shot `dsh call` started outlives it, except a process that left every group (named, then
// killed here by the test).
let ws: Temp
beforeAll(() => {
  ws = temp('bash-leftovers', { 'config.json': JSON.stringify({ 'bash-local': { graceMs: 300 } }) })
}, 120_000)
afterAll(() => ws?.cleanup())

const strays = straySleeps()
afterEach(() => strays.stopAll())
const sleeper = strays.sleeper

function dshCall(tool: string, args: unknown) {
  const child = spawn(
    process.execPath,
    [BIN, 'call', tool, JSON.stringify(args), '--cwd', ws.dir, '--config', join(ws.dir, 'config.json')],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  )
  let stdout = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk
  })
  child.stderr.resume()
  const exited = new Promise<{ code: number | null; stdout: string }>((done) =>
    child.on('close', (code) => done({ code, stdout })),
  )
  return { child, exited }
}

test('dsh call: `cmd &` prints the adopted task and returns; the leftover dies with the one-shot process', async () => {
  const sleep = sleeper()
  const run = await dshCall('bash', { command: `${sleep.command} & echo started`, description: 'leftover' }).exited
  expect(run.code).toBe(0)
  expect(run.stdout).toBe('started\n[background processes still running: task bash-1]\n')
  expect(processesWith(sleep.marker)).toEqual([])
}, 60_000)

test('dsh call: SIGTERM ends the call and stops the setsid daemon that holds its output, too', async () => {
  const daemon = sleeper()
  const inGroup = sleeper()
  const { child, exited } = dshCall('bash', {
    command: `setsid ${daemon.command} & ${inGroup.command}`,
    description: 'stray',
  })
  await until(
    () => processesWith(daemon.marker).length === 1 && processesWith(inGroup.marker).length === 1,
    'both sleeps run',
  )
  child.kill('SIGTERM')
  const run = await exited
  expect(run.code).toBe(143)
  // The daemon carries the call's mark: the abort stops it with the group, so nothing is named as left running.
  expect(run.stdout).toBe('Error: bash command aborted: the call was cancelled and the command was killed\n')
  expect(processesWith(inGroup.marker)).toEqual([])
  expect(processesWith(daemon.marker)).toEqual([])
}, 60_000)

test('dsh call: bash_output of a task says that background tasks do not outlive a dsh call', async () => {
  const run = await dshCall('bash_output', { task_id: 'bash-1' }).exited
  expect(run.code).toBe(1)
  expect(run.stdout).toContain(
    'Background tasks do not outlive the process that started them: a one-shot `dsh call` stops its tasks when it exits.',
  )
}, 60_000)

test('dsh mcp: a cancelled call ends although a setsid daemon holds its output; the server serves on', async () => {
  const daemon = sleeper()
  const inGroup = sleeper()
  const client = new Client({ name: 'dsh-leftovers', version: '1.0.0' })
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp', '--cwd', ws.dir, '--config', join(ws.dir, 'config.json')],
      stderr: 'pipe',
    }),
  )
  try {
    const controller = new AbortController()
    const cancelled = client
      .callTool(
        { name: 'bash', arguments: { command: `setsid ${daemon.command} & ${inGroup.command}`, description: 'stray' } },
        undefined,
        { signal: controller.signal },
      )
      .catch((error: Error) => error)
    await until(
      () => processesWith(daemon.marker).length === 1 && processesWith(inGroup.marker).length === 1,
      'both sleeps run',
    )
    controller.abort()
    expect(await cancelled).toBeInstanceOf(Error)
    await until(() => processesWith(inGroup.marker).length === 0, "the cancelled command's group is gone", 600)
    const next = (await client.callTool({
      name: 'bash',
      arguments: { command: 'echo still serving', description: 'echo' },
    })) as CallToolResult
    expect(next.content).toEqual([{ type: 'text', text: 'still serving' }])
  } finally {
    await client.close()
  }
}, 60_000)
