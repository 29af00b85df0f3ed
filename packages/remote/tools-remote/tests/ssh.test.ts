import { sessionFor } from '@deepseek-ai/dsh-testing'
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createDefaultContext, type DefaultContext } from 'dsh-agent-tools'
import type { ToolResult } from '@deepseek-ai/dsh-tools'
import { dshMcpArgv, processesWith, startSshd, SUITE, uniqueSleep, until, workspace, type Sshd } from './fixtures.ts'

// Real OpenSSH on loopback: sshd started by the test with throwaway keys, the ssh client carrying `dsh mcp`.
const facts = (result: ToolResult) => ({
  text: result.content[0].text,
  isError: result.isError,
  code: result.error?.code ?? null,
})

let ws: ReturnType<typeof workspace>
let sshd: Sshd
let local: DefaultContext

beforeAll(async () => {
  ws = workspace()
  sshd = await startSshd()
  local = await createDefaultContext()
}, 60_000)

afterAll(async () => {
  await local?.dispose()
  await sshd?.stop()
  ws?.cleanup()
})

function command(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim()
  } catch {
    return undefined
  }
}
/** The `dsh mcp` servers sshd started for this workspace (the ssh clients' argv holds the same words). */
const remotes = () => processesWith(`mcp\0--cwd\0${ws.dir}`).filter((pid) => command(pid) === 'node')
const sshClients = () => processesWith(sshd.clientMarker).filter((pid) => command(pid) === 'ssh')

describe('tools-remote over ssh -T host dsh mcp', () => {
  let host: DefaultContext
  beforeAll(async () => {
    host = await createDefaultContext({ remote: { command: [...sshd.ssh, ...dshMcpArgv(ws.dir)] } })
  }, 60_000)
  afterAll(async () => {
    await host?.dispose()
  })

  test('mounts the same tools and instructions as the local composition', () => {
    expect(JSON.parse(JSON.stringify(host.ctx.tools.schemas()))).toEqual(
      JSON.parse(JSON.stringify(local.ctx.tools.schemas())),
    )
    expect(host.ctx.systemPrompt.assemble()).toBe(local.ctx.systemPrompt.assemble())
  })

  test('every call of the suite gives the text, error flag and code of the same call in-process', async () => {
    for (const [name, args] of SUITE) {
      const there = await host.ctx.tools.execute(name, args, { session: sessionFor('ssh-suite', ws.dir) })
      const here = await local.ctx.tools.execute(name, args, { session: sessionFor('local-suite', ws.dir) })
      expect({ name, args, ...facts(there) }).toEqual({ name, args, ...facts(here) })
    }
  })

  test('write and edit work over ssh with no special case: a read in the remote session lets its edit through; the bytes land on the remote side', async () => {
    const session = sessionFor('ssh-change', ws.dir)
    expect(
      facts(
        await host.ctx.tools.execute('edit', { path: 'a.txt', old_string: 'beta', new_string: 'BETA' }, { session }),
      ),
    ).toMatchObject({ code: 'FS_NOT_READ' })
    await host.ctx.tools.execute('read', { path: 'a.txt' }, { session })
    expect(
      facts(
        await host.ctx.tools.execute('edit', { path: 'a.txt', old_string: 'beta', new_string: 'BETA' }, { session }),
      ),
    ).toEqual({
      text: `Updated ${ws.dir}/a.txt: replaced 1 occurrence\n\n1: alpha\n2: BETA`,
      isError: false,
      code: null,
    })
    expect(
      facts(await host.ctx.tools.execute('write', { path: 'made/new.txt', content: 'one\r\ntwo\r\n' }, { session })),
    ).toEqual({ text: `Created ${ws.dir}/made/new.txt (2 lines)`, isError: false, code: null })
    expect(readFileSync(`${ws.dir}/a.txt`, 'utf8')).toBe('alpha\nBETA\n')
    expect(readFileSync(`${ws.dir}/made/new.txt`, 'utf8')).toBe('one\r\ntwo\r\n')
    // Another session (another connection, another remote dsh) has seen nothing.
    expect(
      facts(
        await host.ctx.tools.execute(
          'edit',
          { path: 'a.txt', old_string: 'BETA', new_string: 'b' },
          { session: sessionFor('ssh-other', ws.dir) },
        ),
      ),
    ).toMatchObject({ code: 'FS_NOT_READ' })
  })

  test('killing the ssh client mid-command leaves nothing running on the remote side', async () => {
    const session = sessionFor('ssh-kill', ws.dir)
    // This session's ssh client is the one its first call starts. (Not "the highest pid": pids wrap around at
    // pid_max, 32 768 here, and a full test run spawns that many, so the newest client may have the lower pid.)
    const others = new Set(sshClients())
    await host.ctx.tools.execute('read', { path: 'a.txt' }, { session })
    const mine = sshClients().filter((pid) => !others.has(pid))
    expect(mine).toHaveLength(1)
    const background = uniqueSleep()
    const started = await host.ctx.tools.execute(
      'bash',
      { command: background.command, description: 'Daemon', run_in_background: true },
      { session },
    )
    expect(started.isError).toBe(false)
    const sleep = uniqueSleep()
    const call = host.ctx.tools.execute('bash', { command: sleep.command, description: 'Long' }, { session })
    await until(
      () => processesWith(sleep.marker).length > 0 && processesWith(background.marker).length > 0,
      'both remote sleeps run',
    )
    const servers = remotes().length
    // Kill only the ssh client of this session's connection (the others serve other sessions).
    process.kill(mine[0]!, 'SIGKILL')
    const lost = await call
    expect(facts(lost)).toMatchObject({ isError: true, code: 'REMOTE_UNAVAILABLE' })
    expect(lost.content[0].text).toContain('was lost during the call')
    // sshd sees the connection drop and closes the session: the remote dsh reads EOF and stops everything it started.
    await until(() => processesWith(sleep.marker).length === 0, 'the foreground sleep is gone on the remote side')
    await until(() => processesWith(background.marker).length === 0, 'the background sleep is gone on the remote side')
    await until(() => remotes().length === servers - 1, 'the remote dsh mcp of that connection exited')
    // The next call reconnects through a new ssh connection.
    const again = await host.ctx.tools.execute('read', { path: 'a.txt' }, { session })
    expect(facts(again)).toEqual(facts(await local.ctx.tools.execute('read', { path: 'a.txt' }, { session })))
  })

  test('an interactive task over ssh: a Python REPL answers 42, a read -p prompt is answered, Ctrl-C stops sleep, EOF ends cat', async () => {
    const session = sessionFor('ssh-input', ws.dir)
    const text = async (name: string, args: Record<string, unknown>) => {
      const result = await host.ctx.tools.execute(name, args, { session })
      expect(result.isError, result.content[0].text).toBe(false)
      return result.content[0].text
    }
    const interactive = (command: string) =>
      text('bash', { command, description: 'interactive', run_in_background: true, interactive: true })
    const repl = /task (bash-\d+)/.exec(await interactive('/usr/bin/python3 -i -q'))![1]!
    await text('bash_output', { task_id: repl, wait_for: '>>> $' })
    expect(await text('bash_input', { task_id: repl, text: 'print(6*7)\n', wait_for: '^42$' })).toMatch(
      /^print\(6\*7\)\n42\n(>{1,3} ?\n)?\[wait_for matched\]/,
    )
    const prompt = /task (bash-\d+)/.exec(
      await interactive('read -p "Continue? [y/N] " a; printf "\\033[1manswer: %s\\033[0m\\n" "$a"; sleep 100'),
    )![1]!
    await text('bash_output', { task_id: prompt, wait_for: '\\[y/N\\] $' })
    expect(await text('bash_input', { task_id: prompt, text: 'y\n', wait_for: 'answer' })).toBe(
      'y\nanswer: y\n[wait_for matched]\n[status: running]',
    )
    const sleeper = /task (bash-\d+)/.exec(await interactive('echo ready; sleep 100; echo after'))![1]!
    await text('bash_output', { task_id: sleeper, wait_for: 'ready' })
    await text('bash_input', { task_id: sleeper, text: '\u0003' })
    expect(await text('bash_output', { task_id: sleeper, timeout_ms: 20_000 })).toMatch(
      /\[status: (completed, exit code: 130|killed by SIGINT)\]$/,
    )
    const cat = /task (bash-\d+)/.exec(await interactive('cat'))![1]!
    await text('bash_input', { task_id: cat, text: 'hello\n', wait_for: 'hello\\n(.|\\n)*hello' })
    await text('bash_input', { task_id: cat, text: '\u0004' })
    expect(await text('bash_output', { task_id: cat, timeout_ms: 20_000 })).toMatch(
      /\[status: completed, exit code: 0\]$/,
    )
    const plain = /task (bash-\d+)/.exec(
      await text('bash', { command: 'sleep 100', description: 'plain', run_in_background: true }),
    )![1]!
    expect((await host.ctx.tools.execute('bash_input', { task_id: plain, text: 'x' }, { session })).error?.code).toBe(
      'BASH_TASK_NOT_INTERACTIVE',
    )
    await text('bash_kill', { task_id: plain })
    await text('bash_kill', { task_id: prompt })
  })

  test('over ssh, a command sees no ssh session variables (bash would source ~/.bashrc for each) and Python output unbuffered', async () => {
    const result = await host.ctx.tools.execute(
      'bash',
      { command: 'echo "[${SSH_CLIENT-unset}] [${SSH_CONNECTION-unset}] [$PYTHONUNBUFFERED]"', description: 'env' },
      { session: sessionFor('ssh-env', ws.dir) },
    )
    expect(result.content[0].text).toBe('[unset] [unset] [1]')
  })

  test('disposal closes the ssh connections, and the remote side exits', async () => {
    const other = await createDefaultContext({ remote: { command: [...sshd.ssh, ...dshMcpArgv(ws.dir)] } })
    await other.ctx.tools.execute('read', { path: 'a.txt' }, { session: sessionFor('d1', ws.dir) })
    await other.ctx.tools.execute('read', { path: 'a.txt' }, { session: sessionFor('d2', ws.dir) })
    const before = remotes().length
    expect(before).toBeGreaterThanOrEqual(2)
    await other.dispose()
    await until(() => remotes().length <= before - 2, 'the two remote servers exited')
  })
})
