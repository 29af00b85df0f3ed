import { existsSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { attack, leaked, processesWith, uniqueSleep, until, type Attack } from './helpers.ts'

/*
 * docs/security.md#boundary's attacks, played again against the real bwrap with a fake HOME (what held on 722ae4d must keep
 * holding): a read-only system, private /tmp and /dev/shm, no capabilities, no new privileges, masks that hold
 * through /proc/self/root, a PID namespace that takes setsid daemons and double forks down, no network, and no
 * unconfined fallback.
 */
let a: Attack
let server: Server
let port: number
const hostTmp = `/tmp/dsh-security-host-${process.pid}`
beforeAll(async () => {
  a = await attack()
  writeFileSync(hostTmp, 'CANARY-HOST-TMP\n')
  server = createServer((socket) => socket.end('CANARY-HOST-NET\n'))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  port = (server.address() as { port: number }).port
})
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve))
  await a?.cleanup()
  rmSync(hostTmp, { force: true })
})

test('the system is read-only and nothing outside the roots can be written', async () => {
  const text = await a.bash(
    `touch /etc/dsh-x 2>&1; echo x > ${a.outside}/x 2>&1; echo x >> ~/.bashrc 2>&1; echo ok > inside.txt; cat inside.txt`,
  )
  expect(text).toContain("touch: cannot touch '/etc/dsh-x': Read-only file system")
  expect(text).toContain(`${a.outside}/x: Read-only file system`)
  expect(existsSync('/etc/dsh-x') || existsSync(join(a.outside, 'x')) || existsSync(join(a.home, '.bashrc'))).toBe(
    false,
  )
  expect(text).toMatch(/^ok$/m)
})

test('the host /tmp and /dev/shm are not visible; masks hold through /proc/self/root', async () => {
  const text = await a.bash(
    `cat ${hostTmp} 2>&1; ls /dev/shm | wc -l; cat /proc/self/root${a.home}/.ssh/id_rsa 2>&1; cat /proc/1/root${a.home}/.aws/credentials 2>&1; true`,
  )
  expect(text).not.toContain('CANARY-HOST-TMP')
  expect(leaked(text)).toEqual([])
})

test('no capabilities and no new privileges', async () => {
  const text = await a.bash('grep -E "^(CapEff|CapPrm|NoNewPrivs|Seccomp):" /proc/self/status')
  expect(text).toContain('CapEff:\t0000000000000000')
  expect(text).toContain('CapPrm:\t0000000000000000')
  expect(text).toContain('NoNewPrivs:\t1')
  expect(text).toContain('Seccomp:\t2')
})

test('no network: the host loopback is unreachable', async () => {
  const text = await a.bash(`exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3 2>&1; echo "rc=$?"`)
  expect(text).not.toContain('CANARY-HOST-NET')
})

test('setsid daemons and double forks die with the task that started them', async () => {
  const daemon = uniqueSleep()
  const forked = uniqueSleep()
  const started = await a.call('bash', {
    command: `setsid ${daemon.command} & (${forked.command} &) ; sleep 600`,
    description: 'attack',
    run_in_background: true,
  })
  const id = /bash-\d+/.exec(started.text)?.[0] as string
  await until(() => processesWith(daemon.marker).length > 0 && processesWith(forked.marker).length > 0, 'both run')
  expect((await a.call('bash_kill', { task_id: id })).text).toContain(`killed background task ${id}`)
  await until(
    () => processesWith(daemon.marker).length === 0 && processesWith(forked.marker).length === 0,
    'both are gone',
  )
})
