import { sessionFor } from '@deepseek-ai/dsh-testing'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { join } from 'node:path'
import { afterEach, expect, test } from 'vitest'
import { fixture, processesWith, uniqueSleep, until, type Fixture } from './helpers.ts'

let f: Fixture | undefined
afterEach(async () => {
  await f?.cleanup()
  f = undefined
})

test('bash writes inside the session root; a write outside it fails and the outside file is untouched', async () => {
  f = await fixture()
  const text = await f.text(`echo made > made.txt; echo changed > ${f.outside}/keep.txt; touch /etc/dsh-sandbox-x`)
  expect(readFileSync(join(f.root, 'made.txt'), 'utf8')).toBe('made\n')
  expect(readFileSync(join(f.outside, 'keep.txt'), 'utf8')).toBe('original\n')
  expect(existsSync('/etc/dsh-sandbox-x')).toBe(false)
  expect(text).toContain(`${f.outside}/keep.txt: Read-only file system`)
  expect(text).toContain("touch: cannot touch '/etc/dsh-sandbox-x': Read-only file system")
})

test('configured roots and writable dirs are writable; a read-only root is readable but not writable', async () => {
  f = await fixture(({ base }) => {
    for (const dir of ['extra', 'more', 'spill']) mkdirSync(join(base, dir))
    writeFileSync(join(base, 'spill/saved.txt'), 'saved result\n')
    return {
      workspace: { roots: [join(base, 'extra')], readOnly: [join(base, 'spill')] },
      config: { writable: [join(base, 'more')] },
    }
  })
  const text = await f.text(
    `echo a > ${f.base}/extra/a; echo b > ${f.base}/more/b; cat ${f.base}/spill/saved.txt; echo c > ${f.base}/spill/c`,
  )
  expect(readFileSync(join(f.base, 'extra/a'), 'utf8')).toBe('a\n')
  expect(readFileSync(join(f.base, 'more/b'), 'utf8')).toBe('b\n')
  expect(existsSync(join(f.base, 'spill/c'))).toBe(false)
  expect(text).toMatch(/^saved result\n\[stderr\]\n.*spill\/c: Read-only file system/)
})

test("a fake HOME's .ssh/id_rsa is unreadable from bash, and so is a configured denyRead file inside the root", async () => {
  const realHome = process.env.HOME
  f = await fixture(({ root, home }) => {
    writeFileSync(join(root, 'token.txt'), 'TOKEN\n')
    process.env.HOME = home
    return { workspace: {}, config: { denyRead: [join(root, 'token.txt')] } }
  })
  try {
    const text = await f.text('cat ~/.ssh/id_rsa; ls -A ~/.ssh | wc -l; echo "[$(cat token.txt)]"')
    expect(text).not.toContain('PRIVATE KEY')
    expect(text).not.toContain('TOKEN')
    expect(text).toMatch(/^0\n\[\]\n/)
    expect(readFileSync(join(f.root, 'token.txt'), 'utf8')).toBe('TOKEN\n')
  } finally {
    process.env.HOME = realHome
  }
})

test('no network by default: a TCP listener on 127.0.0.1 is unreachable; with network "host" it answers', async () => {
  const server: Server = createServer((socket) => socket.end('hello from host\n'))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  const probe = `exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3 || echo unreachable`
  try {
    f = await fixture()
    expect(await f.text(probe)).toMatch(/^unreachable\n\[stderr\]\n.*(Network is unreachable|Connection refused)/)
    await f.cleanup()
    f = await fixture(() => ({ workspace: {}, config: { network: 'host' } }))
    expect(await f.text(probe)).toBe('hello from host')
  } finally {
    await new Promise((resolve) => server.close(resolve))
  }
})

test('/proc inside shows no host process, so no host environ (and no scrubbed secret) can be read through it', async () => {
  process.env.DSH_SANDBOX_TEST_SECRET_TOKEN = 'hunter2'
  try {
    f = await fixture()
    const text = await f.text(
      `ls /proc | grep -E '^[0-9]+$' | sort -n | tr '\\n' ' '; echo; cat /proc/${process.pid}/environ; cat /proc/*/environ | tr '\\0' '\\n' | grep -c hunter2`,
    )
    const pids = text.split('\n')[0]!.trim().split(' ').map(Number)
    expect(pids.every((pid) => pid < 50)).toBe(true)
    expect(pids).not.toContain(process.pid)
    expect(text).toContain(`/proc/${process.pid}/environ: No such file or directory`)
    expect(text).toMatch(/\n0\n/)
  } finally {
    delete process.env.DSH_SANDBOX_TEST_SECRET_TOKEN
  }
})

test('setsid daemons and double forks left by a call become a task of the session; killing it kills them all', async () => {
  f = await fixture()
  const daemon = uniqueSleep()
  const forked = uniqueSleep()
  const text = await f.text(
    `setsid ${daemon.command} > /dev/null 2>&1 & (${forked.command} > /dev/null 2>&1 &); echo started`,
  )
  const taskId = /\[background processes still running: task (bash-\d+)\]/.exec(text)?.[1]
  expect(text.startsWith('started\n'), text).toBe(true)
  expect(taskId).toBeDefined()
  expect(processesWith(daemon.marker)).toHaveLength(1)
  expect(processesWith(forked.marker)).toHaveLength(1)
  const killed = await f.t.ctx.tools.execute('bash_kill', { task_id: taskId }, { session: sessionFor('s1', f.root) })
  expect(killed.content[0].text).toBe(`killed background task ${taskId}`)
  await until(
    () => processesWith(daemon.marker).length === 0 && processesWith(forked.marker).length === 0,
    'every process of the namespace is gone',
  )
})

test('the end of the session kills what its calls left running', async () => {
  f = await fixture()
  const daemon = uniqueSleep()
  expect(await f.text(`setsid ${daemon.command} > /dev/null 2>&1 & echo started`)).toMatch(
    /^started\n\[background processes still running: task bash-\d+\]/,
  )
  await sessionFor('s1', f.root).dispose()
  await until(() => processesWith(daemon.marker).length === 0, 'the daemon is gone')
})

test('bash_kill of a background task kills everything in its namespace, setsid daemons included', async () => {
  f = await fixture()
  const daemon = uniqueSleep()
  const main = uniqueSleep()
  const started = await f.text(`setsid ${daemon.command} > /dev/null 2>&1 & ${main.command}`, {
    run_in_background: true,
  })
  const taskId = /bash-\d+/.exec(started)![0]
  await until(
    () => processesWith(daemon.marker).length === 1 && processesWith(main.marker).length === 1,
    'both sleeps run',
  )
  const killed = await f.t.ctx.tools.execute('bash_kill', { task_id: taskId }, { session: sessionFor('s1', f.root) })
  expect(killed.content[0].text).toBe(`killed background task ${taskId}`)
  await until(
    () => processesWith(daemon.marker).length === 0 && processesWith(main.marker).length === 0,
    'the namespace is gone',
  )
})

test('disposing the executor kills every task and its daemons', async () => {
  f = await fixture()
  const daemon = uniqueSleep()
  await f.text(`setsid ${daemon.command} > /dev/null 2>&1 & sleep 1000`, { run_in_background: true })
  await until(() => processesWith(daemon.marker).length === 1, 'the daemon runs')
  await f.cleanup()
  f = undefined
  await until(() => processesWith(daemon.marker).length === 0, 'the daemon is gone')
})

test('a timeout kills the whole namespace and says so', async () => {
  f = await fixture()
  const daemon = uniqueSleep()
  const text = await f.text(`setsid ${daemon.command} > /dev/null 2>&1 & sleep 1000`, { timeoutMs: 300 })
  expect(text).toContain('[timed out after 300ms]')
  await until(() => processesWith(daemon.marker).length === 0, 'the daemon is gone')
})

test('exit codes and both streams come through as with the local executor', async () => {
  f = await fixture()
  expect(await f.text('echo out; echo err >&2; exit 3')).toBe('out\n[stderr]\nerr\n[exit code: 3]')
})

test('the private /tmp persists between calls of one executor, and is not the host /tmp; TMPDIR points at it', async () => {
  f = await fixture()
  await f.text('echo kept > /tmp/state')
  expect(await f.text('cat /tmp/state; ls /tmp; echo "$TMPDIR"')).toBe('kept\nstate\n/tmp')
})

test('a workdir under a hidden path is an argument error naming the hidden path', async () => {
  f = await fixture(({ root }) => {
    mkdirSync(join(root, 'secrets'))
    return { workspace: {}, config: { denyRead: [join(root, 'secrets')] } }
  })
  const result = await f.bash('ls', { workdir: 'secrets' })
  expect(result.isError).toBe(true)
  expect(result.error?.code).toBe('INVALID_ARGS')
  expect(result.content[0].text).toContain(`is hidden by the sandbox (denyRead: ${f.root}/secrets)`)
})

test('the host /run (docker, dbus, systemd sockets) is empty inside, and a Unix socket under a hidden path is unreachable', async () => {
  f = await fixture(({ base }) => {
    mkdirSync(join(base, 'sockets'))
    return { workspace: {}, config: { denyRead: [join(base, 'sockets')] } }
  })
  const path = join(f.base, 'sockets/agent.sock')
  const server = createServer((socket) => socket.end('secret agent\n'))
  await new Promise<void>((resolve) => server.listen(path, resolve))
  try {
    const connect = `require('net').connect(${JSON.stringify(path)}).on('data', (d) => process.stdout.write(d)).on('error', (e) => console.log(e.code))`
    const text = await f.text(`ls -A /run | wc -l; ${JSON.stringify(process.execPath)} -e ${JSON.stringify(connect)}`)
    const [count, outcome] = text.split('\n')
    // Empty, but for the resolver's directory when /etc/resolv.conf leads into /run.
    expect(Number(count)).toBeLessThanOrEqual(1)
    expect(outcome).toBe('ENOENT')
    expect(text).not.toContain('secret agent')
  } finally {
    await new Promise((resolve) => server.close(resolve))
  }
})

test('no capabilities inside, also when dsh runs as root: a mask cannot be unmounted, / cannot be remounted writable', async () => {
  f = await fixture(({ base }) => {
    mkdirSync(join(base, 'masked'))
    writeFileSync(join(base, 'masked/key'), 'MASKED SECRET\n')
    return { workspace: {}, config: { denyRead: [join(base, 'masked')] } }
  })
  const text = await f.text(
    `grep CapEff /proc/self/status; umount ${f.base}/masked; cat ${f.base}/masked/key; mount -o remount,bind,rw /; touch /etc/dsh-sandbox-cap`,
  )
  expect(text).toMatch(/^CapEff:\s+0000000000000000\n/)
  expect(text).not.toContain('MASKED SECRET')
  expect(existsSync('/etc/dsh-sandbox-cap')).toBe(false)
})
