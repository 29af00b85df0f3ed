import { execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { credentialNames } from '../src/environ.ts'
import { BIN, ROOT, workspace } from './helpers.ts'

const run = promisify(execFile)
let ws: ReturnType<typeof workspace>

beforeAll(() => {
  ws = workspace({ 'a.txt': 'a\n' })
})
afterAll(() => ws?.cleanup())

/** Credentials and a plain name, in the environment of the process under test. */
const SECRETS = {
  GITHUB_TOKEN: 'ghp_h14secretTokenValue',
  AWS_SECRET_ACCESS_KEY: 'aws_h14secretKeyValue',
  db_password: 'pw_h14hunter2',
}
const PLAIN = { H14_VISIBLE: 'plain_h14value', DSH_H14_SETTING: 'dsh_h14value' }

test('the credential names are exactly those the children never get, the DSH_ namespace aside', () => {
  expect(
    credentialNames({ ...SECRETS, ...PLAIN, PATH: '/bin', HOME: '/root', KEYBOARD: 'x', constructor: 'y' }).sort(),
  ).toEqual(['AWS_SECRET_ACCESS_KEY', 'GITHUB_TOKEN', 'KEYBOARD', 'db_password'])
})

test('forgetCredentials removes them from process.env and zeroes them in /proc/self/environ', async () => {
  const script = `import { readFileSync } from 'node:fs'
const { forgetCredentials } = await import(${JSON.stringify(join(ROOT, 'packages/host/cli/dist/environ.js'))})
const result = forgetCredentials()
const environ = readFileSync('/proc/self/environ', 'latin1')
console.log(JSON.stringify({ result, env: Object.keys(process.env).filter((n) => n.includes('H14') || n in ${JSON.stringify(SECRETS)}), environ }))`
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
    env: { PATH: process.env.PATH, ...SECRETS, ...PLAIN },
  })
  const { result, env, environ } = JSON.parse(stdout) as {
    result: { names: string[]; initialBlock: string }
    env: string[]
    environ: string
  }
  expect(result.names.sort()).toEqual(['AWS_SECRET_ACCESS_KEY', 'GITHUB_TOKEN', 'db_password'])
  expect(result.initialBlock).toBe('overwritten')
  expect(env.sort()).toEqual(['DSH_H14_SETTING', 'H14_VISIBLE'])
  for (const [name, value] of Object.entries(SECRETS)) {
    expect(environ).not.toContain(value)
    expect(environ).not.toContain(`${name}=`)
  }
  expect(environ).toContain('H14_VISIBLE=plain_h14value')
})

test('a command run by dsh cannot read the scrubbed credentials back from its parent, /proc/$PPID/environ', async () => {
  // $PPID of the command's shell is the dsh process itself (bash-local spawns the shell directly).
  const command =
    'tr "\\0" "\\n" < /proc/$PPID/environ | grep -i h14 ; echo "ppid-is-dsh: $(tr "\\0" " " < /proc/$PPID/cmdline | grep -c bin.js)"; echo "own: ${GITHUB_TOKEN:-unset}"'
  const { stdout } = await run(
    process.execPath,
    [BIN, 'call', 'bash', JSON.stringify({ command, description: 'read the parent env' }), '--cwd', ws.dir],
    {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...SECRETS, ...PLAIN },
    },
  )
  expect(stdout).toBe('H14_VISIBLE=plain_h14value\nDSH_H14_SETTING=dsh_h14value\nppid-is-dsh: 1\nown: unset\n')
})

test('dsh mcp has forgotten them by the time it answers: /proc/<pid>/environ of the server shows none', async () => {
  const child = spawn(process.execPath, [BIN, 'mcp', '--cwd', ws.dir], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...SECRETS, ...PLAIN },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  try {
    const answered = new Promise<string>((done) => {
      let out = ''
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        out += chunk
        if (out.includes('\n')) done(out)
      })
    })
    child.stdin.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } })}\n`,
    )
    expect(JSON.parse(await answered)).toMatchObject({ id: 1, result: { serverInfo: { name: 'dsh' } } })
    const environ = readFileSync(`/proc/${child.pid}/environ`, 'latin1')
    for (const value of Object.values(SECRETS)) expect(environ).not.toContain(value)
    expect(environ).toContain('H14_VISIBLE=plain_h14value')
  } finally {
    child.stdin.end()
    await once(child, 'close')
  }
})
