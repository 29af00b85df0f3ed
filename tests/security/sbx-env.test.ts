import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { attack, startDsh, type Attack } from './helpers.ts'

/*
 * Attack #10 in docs/security.md#attacks (docs/security.md#boundary, secrets stay out of commands): `env` in bash, sandboxed or not. Eighteen
 * credential shapes the old scrub (KEY, TOKEN, SECRET, PASSWORD) let through must not reach a command; the names
 * a command needs must; and the HTTP server's own token (--token-env, under a name that looks like nothing) never
 * reaches a command in any mode.
 */
const SECRET_ENV: Readonly<Record<string, string>> = {
  GITHUB_PAT: 'CANARY-ENV-1',
  DATABASE_URL: 'postgres://app:CANARY-ENV-2@db.internal:5432/app',
  NPM_CONFIG__AUTH: 'CANARY-ENV-3',
  MYSQL_PWD: 'CANARY-ENV-4',
  SSH_AUTH_SOCK: '/run/user/0/CANARY-ENV-5.sock',
  BW_SESSION: 'CANARY-ENV-6',
  CI_JOB_JWT: 'CANARY-ENV-7',
  CI_JOB_JWT_V2: 'CANARY-ENV-8',
  OP_SESSION_acme: 'CANARY-ENV-9',
  SENTRY_DSN: 'https://CANARY-ENV-10@o1.ingest.sentry.io/1',
  AZURE_STORAGE_CONNECTION_STRING: 'AccountKey=CANARY-ENV-11',
  SESSION_COOKIE: 'CANARY-ENV-12',
  SMTP_PASS: 'CANARY-ENV-13',
  HTTPS_PROXY: 'http://proxyuser:CANARY-ENV-14@proxy:3128',
  PIP_INDEX_URL: 'https://__token__:CANARY-ENV-15@pypi.internal/simple',
  REDIS_URL: 'redis://:CANARY-ENV-16@cache:6379/0',
  DOCKER_AUTH_CONFIG: '{"auths":{"r":{"auth":"CANARY-ENV-17"}}}',
  GPG_AGENT_INFO: '/run/user/0/CANARY-ENV-18:0:1',
}

/** Names a command needs, with the modes that must pass them: everything local; the allowlist sandboxed. */
const KEEP_LOCAL: Readonly<Record<string, string>> = {
  PWD: '/somewhere',
  OLDPWD: '/usr',
  XDG_SESSION_ID: '7',
  XDG_SESSION_TYPE: 'tty',
  DBUS_SESSION_BUS_ADDRESS: 'unix:path=/run/user/0/bus',
  NODE_OPTIONS: '--max-old-space-size=512',
  GIT_AUTHOR_NAME: 'Ada',
  XAUTHORITY: '/home/u/.Xauthority',
  GIT_ASKPASS: '/usr/bin/true',
  HTTP_PROXY: 'http://proxy:3128',
  PIP_EXTRA_INDEX_URL: 'https://pypi.org/simple',
}
const KEEP_SANDBOXED: Readonly<Record<string, string>> = {
  LANG: 'C.UTF-8',
  LC_ALL: 'C.UTF-8',
  TZ: 'UTC',
  USER: 'ada',
  LOGNAME: 'ada',
  SHELL: '/bin/bash',
}

const saved: Record<string, string | undefined> = {}
beforeAll(() => {
  for (const [name, value] of Object.entries({
    ...SECRET_ENV,
    ...KEEP_LOCAL,
    ...KEEP_SANDBOXED,
    PROJ_SETTING: 'passed-by-prefix',
    MY_TOOL_HOME: 'passed-by-name',
  })) {
    saved[name] = process.env[name]
    process.env[name] = value
  }
})
afterAll(() => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name]
    else process.env[name] = value
  }
})

function parse(text: string): Map<string, string> {
  return new Map(
    text
      .split('\n')
      .filter((line) => line.includes('='))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  )
}

for (const sandbox of [true, false]) {
  describe(sandbox ? 'sandboxed' : 'not sandboxed', () => {
    let a: Attack
    beforeAll(async () => {
      a = await attack({
        sandbox,
        config: () => (sandbox ? { 'bash-sandbox': { passEnv: ['PROJ_*', 'MY_TOOL_HOME'] } } : {}),
      })
    })
    afterAll(async () => {
      await a?.cleanup()
    })

    test('none of the 18 credential shapes reaches a command', async () => {
      const text = await a.bash('env; cat /proc/self/environ | tr "\\0" "\\n"')
      expect(text).toContain('PATH=')
      for (const [name, value] of Object.entries(SECRET_ENV)) {
        expect(text, name).not.toContain(`${name}=`)
        expect(text, name).not.toContain(/CANARY-ENV-\d+/.exec(value)?.[0] as string)
      }
    })

    test(
      sandbox
        ? 'the allowlist passes PATH, HOME, the locale, TZ and the user; passEnv widens it; nothing else passes'
        : 'the names a command needs pass: PWD, OLDPWD, XDG_SESSION_*, DBUS_SESSION_BUS_ADDRESS, NODE_OPTIONS, GIT_AUTHOR_NAME, …',
      async () => {
        const env = parse(await a.bash('env'))
        expect(env.get('HOME')).toBe(a.home)
        for (const [name, value] of Object.entries(KEEP_SANDBOXED)) expect(env.get(name), name).toBe(value)
        if (sandbox) {
          expect(env.get('PROJ_SETTING')).toBe('passed-by-prefix')
          expect(env.get('MY_TOOL_HOME')).toBe('passed-by-name')
          for (const name of [
            'XDG_SESSION_ID',
            'DBUS_SESSION_BUS_ADDRESS',
            'NODE_OPTIONS',
            'GIT_AUTHOR_NAME',
            'HTTP_PROXY',
          ])
            expect(env.has(name), name).toBe(false)
          expect(env.get('TMPDIR')).toBe('/tmp')
        } else {
          // The shell sets its own PWD (the workdir); OLDPWD passes as inherited (bash keeps it when it names a directory).
          for (const [name, value] of Object.entries(KEEP_LOCAL))
            if (name !== 'PWD') expect(env.get(name), name).toBe(value)
          expect(env.get('PWD')).toBe(a.project)
        }
      },
    )
  })
}

describe('dsh mcp --http --token-env with a name that looks like nothing', () => {
  test('the bearer token never reaches a command, sandboxed or not', async () => {
    const token = `CANARY-BEARER-${process.pid}-${'x'.repeat(32)}`
    for (const extra of [[], ['--sandbox']]) {
      const started = startDsh(
        ['mcp', '--http', '--port', '0', '--token-env', 'MCP_BEARER', '--cwd', '/var/tmp', ...extra],
        { cwd: '/var/tmp', env: { MCP_BEARER: token } },
      )
      try {
        let stderr = ''
        const url = await new Promise<string>((resolve, reject) => {
          started.child.stderr.on('data', (chunk: Buffer) => {
            stderr += chunk.toString()
            const match = /dsh mcp: listening on (http:\/\/\S+)\n/.exec(stderr)
            if (match) resolve(match[1] as string)
          })
          void started.exited.then((run) => reject(new Error(`exited ${run.code}: ${run.stderr}`)))
        })
        const client = new Client({ name: 'test', version: '1.0.0' })
        await client.connect(
          new StreamableHTTPClientTransport(new URL(url), {
            requestInit: { headers: { Authorization: `Bearer ${token}` } },
          }),
        )
        const result = (await client.callTool({
          name: 'bash',
          arguments: {
            command: 'env; tr "\\0" "\\n" < /proc/$PPID/environ 2>&1 | grep -c CANARY-BEARER; true',
            description: 'read env',
          },
        })) as CallToolResult
        const text = (result.content[0] as { text: string }).text
        expect(text, extra.join(' ')).not.toContain(token)
        expect(text).not.toContain('MCP_BEARER=')
        await client.close()
      } finally {
        started.child.kill('SIGTERM')
        await started.exited
      }
    }
  }, 120_000)
})
