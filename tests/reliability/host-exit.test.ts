import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { BIN, processesWith, temp, uniqueSleep, until, type Temp } from './helpers.ts'

let ws: Temp
beforeAll(() => {
  ws = temp('host-exit', { 'config.json': JSON.stringify({ 'bash-local': { graceMs: 300 } }) })
}, 120_000)
afterAll(() => ws?.cleanup())

/** A tree in which every process ignores SIGTERM: only SIGKILL ends it. Three sleeps carry the marker. */
const trapTree = (sleep: string) =>
  `trap '' TERM; (trap '' TERM; ${sleep}) & (trap '' TERM; ${sleep} & wait) & ${sleep}; wait`

/** `dsh call bash <trap tree>` under the built host; resolves once the whole tree is up. */
async function callTrapTree() {
  const { command, marker } = uniqueSleep()
  const args = JSON.stringify({ command: trapTree(command), description: 'trap tree' })
  const child = spawn(
    process.execPath,
    [BIN, 'call', 'bash', args, '--cwd', ws.dir, '--config', join(ws.dir, 'config.json')],
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
  await until(() => processesWith(marker).length === 3, 'the trap tree is up')
  return { child, exited, marker }
}

test('host exit: SIGTERM to dsh call kills a TERM-trapping tree, prints the aborted result and exits 143', async () => {
  const { child, exited, marker } = await callTrapTree()
  child.kill('SIGTERM')
  const run = await exited
  expect(run.code).toBe(143)
  expect(run.stdout).toMatch(/^Error: bash command aborted/)
  expect(processesWith(marker)).toEqual([])
}, 60_000)

test('host exit: after a second SIGTERM (immediate exit) the TERM-trapping tree is still gone', async () => {
  const { child, exited, marker } = await callTrapTree()
  child.kill('SIGTERM')
  child.kill('SIGTERM')
  await exited
  await until(() => processesWith(marker).length === 0, 'the tree is gone')
  expect(processesWith(marker)).toEqual([])
}, 60_000)

test('host exit: after a SIGKILL of dsh call (no handler runs) the reaper still takes the TERM-trapping tree down', async () => {
  const { child, exited, marker } = await callTrapTree()
  child.kill('SIGKILL')
  await exited
  // The reaper reads EOF on its pipe from dsh and SIGKILLs every process that carries the provider's mark.
  await until(() => processesWith(marker).length === 0, 'the reaper killed the tree')
  expect(processesWith(marker)).toEqual([])
}, 60_000)
