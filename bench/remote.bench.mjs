// Remote workspaces: a trivial call and a grep made in-process, and through tools-remote over a local command
// (`dsh mcp` on a pipe), real OpenSSH on loopback (sshd started here with throwaway keys) and Streamable HTTP
// (`dsh mcp --http`). Paired: every round makes the call every way in turn; figures are medians of the per-round
// ratios against the in-process call of the same round. Run `npx tsc -b` first (it imports the built packages).
import { createSession } from '@deepseek-ai/dsh-tools'
import { execFileSync, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { connect, createServer } from 'node:net'
import { loadavg, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { createDefaultContext } from 'dsh-agent-tools'
import { median, row, summaryRow } from './lib.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const bin = join(root, 'packages/host/cli/dist/bin.js')
const cwd = join(root, 'packages')
const ROUNDS = Number(process.env.DSH_BENCH_ROUNDS ?? 200)
const GREP_ROUNDS = Math.max(20, Math.round(ROUNDS / 5))

const freePort = () =>
  new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })

async function startSshd() {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-bench-sshd-'))
  chmodSync(dir, 0o700)
  for (const name of ['host_key', 'client_key'])
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, name)])
  copyFileSync(join(dir, 'client_key.pub'), join(dir, 'authorized_keys'))
  mkdirSync('/run/sshd', { recursive: true })
  const port = await freePort()
  writeFileSync(
    join(dir, 'sshd_config'),
    [
      'ListenAddress 127.0.0.1',
      `Port ${port}`,
      `HostKey ${join(dir, 'host_key')}`,
      `PidFile ${join(dir, 'sshd.pid')}`,
      `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
      'PermitRootLogin prohibit-password',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'UsePAM no',
      'StrictModes no',
      'PrintMotd no',
      'LogLevel ERROR',
      '',
    ].join('\n'),
  )
  const child = spawn('/usr/sbin/sshd', ['-D', '-e', '-f', join(dir, 'sshd_config')], { stdio: 'ignore' }) // sshd logs every probe connection that closes without a banner
  for (let turn = 0; ; turn++) {
    const open = await new Promise((resolve) => {
      const socket = connect(port, '127.0.0.1')
      socket.once('connect', () => {
        socket.destroy()
        resolve(true)
      })
      socket.once('error', () => resolve(false))
    })
    if (open) break
    if (turn > 500 || child.exitCode !== null) throw new Error('sshd did not start')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  const ssh = [
    'ssh',
    '-T',
    '-p',
    String(port),
    '-i',
    join(dir, 'client_key'),
    '-o',
    'StrictHostKeyChecking=no',
    '-o',
    `UserKnownHostsFile=${join(dir, 'known_hosts')}`,
    '-o',
    'BatchMode=yes',
    '-o',
    'LogLevel=ERROR',
    'root@127.0.0.1',
  ]
  return {
    ssh,
    stop: () => {
      child.kill('SIGTERM')
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

async function startHttp() {
  const token = randomBytes(32).toString('hex') // dsh mcp --http serves with no shorter token
  const child = spawn(
    process.execPath,
    [bin, 'mcp', '--http', '--port', '0', '--token-env', 'DSH_BENCH_TOKEN', '--cwd', cwd],
    {
      env: { ...process.env, DSH_BENCH_TOKEN: token },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  )
  let stderr = ''
  const url = await new Promise((resolve, reject) => {
    child.stderr.on('data', (chunk) => {
      stderr += chunk
      const match = /listening on (\S+)/.exec(stderr)
      if (match) resolve(match[1])
    })
    child.once('exit', () => reject(new Error(stderr)))
  })
  return { url, token, stop: () => child.kill('SIGTERM') }
}

const sshd = await startSshd()
const http = await startHttp()
const dshMcp = [process.execPath, bin, 'mcp', '--cwd', cwd]
const hosts = {
  'in-process': await createDefaultContext(),
  'command (dsh mcp on a pipe)': await createDefaultContext({ remote: { command: dshMcp } }),
  'ssh -T 127.0.0.1 dsh mcp': await createDefaultContext({ remote: { command: [...sshd.ssh, ...dshMcp] } }),
  'Streamable HTTP (dsh mcp --http)': await createDefaultContext({ remote: { url: http.url, token: http.token } }),
}
const session = createSession({ id: 'bench', cwd })

async function measure(label, name, args, rounds) {
  const ways = Object.entries(hosts)
  const first = {}
  for (const [way, host] of ways) first[way] = (await host.ctx.tools.execute(name, args, { session })).content[0].text
  for (const [way, text] of Object.entries(first))
    if (text !== first['in-process']) throw new Error(`${way} gave another result for ${name}`)
  for (let i = 0; i < 20; i++) for (const [, host] of ways) await host.ctx.tools.execute(name, args, { session }) // warm-up
  const ms = Object.fromEntries(ways.map(([way]) => [way, []]))
  const ratios = Object.fromEntries(ways.map(([way]) => [way, []]))
  for (let round = 0; round < rounds; round++) {
    const lap = {}
    for (const [way, host] of ways) {
      const start = performance.now()
      await host.ctx.tools.execute(name, args, { session })
      lap[way] = performance.now() - start
      ms[way].push(lap[way])
    }
    for (const [way] of ways) ratios[way].push(lap[way] / lap['in-process'])
  }
  console.log(
    `\n${label}: median of ${rounds} paired rounds (${Buffer.byteLength(first['in-process'])} bytes of result)`,
  )
  for (const [way] of ways) {
    const us = median(ms[way]) * 1000
    row(
      way,
      `${us >= 10_000 ? `${(us / 1000).toFixed(1)} ms` : `${us.toFixed(0)} µs`}  ${median(ratios[way]).toFixed(2)}× in-process`,
    )
  }
  return Object.fromEntries(ways.map(([way]) => [way, median(ratios[way])]))
}

console.log(
  `load average ${loadavg()
    .map((n) => n.toFixed(2))
    .join(' ')} (${ROUNDS} rounds; DSH_BENCH_ROUNDS to change)`,
)
const trivial = await measure(
  'Trivial call: read package.json of one package (20 lines)',
  'read',
  { path: 'host/mcp/package.json' },
  ROUNDS,
)
const grep = await measure(
  'grep "TODO|FIXME" over packages/ (sources, tests, READMEs)',
  'grep',
  { pattern: 'TODO|FIXME' },
  GREP_ROUNDS,
)
console.log('')
// Goals of this package (no contract figure): a real search pays little for the wire; a trivial call a few ms.
summaryRow({ figure: 'remote grep over ssh', value: grep['ssh -T 127.0.0.1 dsh mcp'], goal: 1.5, floor: 'in-process' })
summaryRow({
  figure: 'remote grep over HTTP',
  value: grep['Streamable HTTP (dsh mcp --http)'],
  goal: 1.5,
  floor: 'in-process',
})
summaryRow({
  figure: 'remote trivial read over ssh',
  value: trivial['ssh -T 127.0.0.1 dsh mcp'],
  goal: 5,
  floor: 'in-process',
})
summaryRow({
  figure: 'remote trivial read over HTTP',
  value: trivial['Streamable HTTP (dsh mcp --http)'],
  goal: 8,
  floor: 'in-process',
})
console.log(
  `load average after ${loadavg()
    .map((n) => n.toFixed(2))
    .join(' ')}`,
)

for (const host of Object.values(hosts)) await host.dispose()
http.stop()
sshd.stop()
