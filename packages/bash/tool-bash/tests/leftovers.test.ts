import { sessionFor } from '@deepseek-ai/dsh-testing'
import { createServer, type Server } from 'node:http'
import { afterEach, expect, test } from 'vitest'
import { processesWith, straySleeps } from '@deepseek-ai/dsh-testing'
import { harness, type Harness } from './helpers.ts'

let h: Harness
const strays = straySleeps()
const servers: Server[] = []
afterEach(async () => {
  await h?.cleanup()
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve))
  // A process the test left outside every group on purpose (setsid) is stopped here; nothing else may survive.
  await strays.stopAll()
})

const sleeper = strays.sleeper
const run = (command: string, more: Record<string, unknown> = {}) => ({
  command,
  description: 'leftover test',
  ...more,
})

test('`cmd &` returns when the shell exits; the result names the task the leftover became, which bash_kill stops (no "finished" notice)', async () => {
  h = await harness()
  const sleep = sleeper()
  expect(await h.text('bash', run(`${sleep.command} & echo started`))).toBe(
    'started\n[background processes still running: task bash-1]',
  )
  expect(processesWith(sleep.marker)).toHaveLength(1)
  expect(await h.text('bash_output', {})).toMatch(
    /^1 background task in this session:\nbash-1 \[status: running\] \d+s: sleep 1000\.\d+"\d+" & echo started$/,
  )
  expect(await h.text('bash_kill', { task_id: 'bash-1' })).toBe('killed background task bash-1')
  expect(processesWith(sleep.marker)).toEqual([])
  expect(await h.text('bash_output', { task_id: 'bash-1' })).toBe('(no new output)\n[status: killed by SIGTERM]')
  expect(await h.text('bash', run('true'))).toBe('(no output)')
})

test('`setsid daemon & echo started` with timeoutMs 1000 returns at once and names the daemon it did not stop', async () => {
  h = await harness()
  const sleep = sleeper()
  const text = await h.text('bash', run(`setsid ${sleep.command} & echo started`, { timeoutMs: 1000 }))
  const [pid] = processesWith(sleep.marker)
  expect(text).toBe(
    `started\n[still running outside the command's process group, not stopped: pid ${pid} (sleep ${sleep.marker})]`,
  )
})

test('a dev server started with & is adopted, waited for with wait_for, reached, then killed by the model', async () => {
  h = await harness()
  const script =
    'const s=require("http").createServer((q,r)=>r.end("pong")).listen(0,"127.0.0.1",()=>console.log("listening on "+s.address().port))'
  // The server waits for a file, so that its first line arrives after the call returned (as a slow server's would).
  const started = await h.text(
    'bash',
    run(
      `(until [ -e go ]; do sleep 0.01; done; exec ${JSON.stringify(process.execPath)} -e '${script}') & echo starting`,
    ),
  )
  expect(started).toBe('starting\n[background processes still running: task bash-1]')
  const waiting = h.text('bash_output', { task_id: 'bash-1', wait_for: 'listening on \\d+' })
  await h.text('bash', run('touch go'))
  const ready = await waiting
  expect(ready).toMatch(/^listening on \d+\n\[wait_for matched\]\n\[status: running\]$/)
  const port = Number(/listening on (\d+)/.exec(ready)?.[1])
  expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe('pong')
  expect(await h.text('bash_kill', { task_id: 'bash-1' })).toBe('killed background task bash-1')
  await expect(fetch(`http://127.0.0.1:${port}/`)).rejects.toThrow()
  expect(await h.text('bash', run('true'))).toBe('(no output)')
})

test('a command reading stdin gets end of file at once', async () => {
  h = await harness()
  expect(await h.text('bash', run('if read -r line; then echo "got $line"; else echo eof; fi'))).toBe('eof')
})

test('git asking for credentials fails at once instead of waiting for a person (GIT_TERMINAL_PROMPT=0)', async () => {
  h = await harness()
  const server = createServer((_request, response) => {
    response.writeHead(401, { 'WWW-Authenticate': 'Basic realm="test"' })
    response.end()
  })
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  const text = await h.text(
    'bash',
    run(`GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null git ls-remote http://127.0.0.1:${port}/nowhere.git`, {
      timeoutMs: 60_000,
    }),
  )
  expect(text).toContain('terminal prompts disabled')
  // git's exit is the call's. Once in CI (a loaded machine) a process git had started was still in the group when
  // the drain ended, and was adopted as a task like any leftover; the line that says so may follow (not reproduced
  // in 15 runs under load since, so which child it was is not known).
  expect(text).toMatch(/\n\[exit code: 128\](\n\[background processes still running: task bash-\d+\])?$/)
})

test('a foreground command still running after backgroundAfterMs returns as a task with its output so far; wait_for reaches its end', async () => {
  h = await harness({}, { tool: { backgroundAfterMs: 2000 } })
  const text = await h.text('bash', { command: 'echo started; sleep 5; echo done', description: 'a long command' })
  expect(text).toBe(
    'started\n[still running after 2000ms: it continues as background task bash-1. Wait for it with bash_output {"task_id":"bash-1","wait_for":"<regex for a line it prints>"} (or timeout_ms alone to wait for its end); bash_kill stops it]',
  )
  expect(await h.text('bash_output', { task_id: 'bash-1', wait_for: '^done$' })).toMatch(
    /^done\n\[wait_for matched\]\n\[status: (running|completed, exit code: 0)\]$/,
  )
})

test('with an explicit timeoutMs the command stays in the foreground and is killed at its timeout', async () => {
  h = await harness({}, { tool: { backgroundAfterMs: 200 } })
  expect(await h.text('bash', { command: 'sleep 5', description: 'sleep', timeoutMs: 1000 })).toBe(
    '(no output)\n[timed out after 1000ms]\n[killed by signal: SIGTERM]',
  )
  expect(h.ctx.tasks.of(sessionFor('session-1', h.dir)).list()).toEqual([])
})
