import { expect, test } from 'vitest'
import { childEnv, isScrubbed, scrubbedParentEnv } from '../src/index.ts'

const parent = {
  PATH: '/usr/bin:/bin',
  HOME: '/home/me',
  LANG: 'C.UTF-8',
  OPENAI_API_KEY: 'sk-1',
  github_token: 'ghp',
  AWS_SECRET_ACCESS_KEY: 'aws',
  PGPASSWORD: 'pg',
  Db_PassWord: 'db',
  MYSQL_PWD_PASSWD: 'my',
  GOOGLE_APPLICATION_CREDENTIALS: '/key.json',
  DSH_SESSION: 'managed',
  DSH_: 'managed too',
  UNSET: undefined,
}

test('the scrubbed parent env drops credential-looking names (any case) and DSH_*', () => {
  expect(scrubbedParentEnv(parent)).toEqual({ PATH: '/usr/bin:/bin', HOME: '/home/me', LANG: 'C.UTF-8' })
})

test('explicit entries win over the scrub and undefined removes a name', () => {
  expect(childEnv({ DSH_SESSION: 'given', HOME: undefined, EXTRA: 'x' }, parent)).toEqual({
    PATH: '/usr/bin:/bin',
    LANG: 'C.UTF-8',
    DSH_SESSION: 'given',
    EXTRA: 'x',
  })
})

test('removing a name that is not there is harmless', () => {
  expect(childEnv({ NOT_THERE: undefined }, { PATH: '/bin' })).toEqual({ PATH: '/bin' })
})

test('the values of scrubbed and overridden names are never read', () => {
  const values: Record<string, string> = { PATH: '/bin', OPENAI_API_KEY: 'sk-1', HOME: '/home/me' }
  const source = new Proxy(values, {
    get: (target, name) => {
      if (name === 'OPENAI_API_KEY' || name === 'HOME') throw new Error(`read ${String(name)}`)
      return Reflect.get(target, name)
    },
  })
  expect(childEnv({ HOME: '/other' }, source)).toEqual({ PATH: '/bin', HOME: '/other' })
})

test('the widened scrub (docs/security.md#boundary) drops credential shapes and keeps the names commands need', () => {
  const dropped = {
    GITHUB_PAT: 'x',
    MYSQL_PWD: 'x',
    SMTP_PASS: 'x',
    NPM_CONFIG__AUTH: 'x',
    DOCKER_AUTH_CONFIG: 'x',
    CI_JOB_JWT: 'x',
    SESSION_COOKIE: 'x',
    SENTRY_DSN: 'x',
    AZURE_STORAGE_CONNECTION_STRING: 'x',
    BW_SESSION: 'x',
    OP_SESSION_acme: 'x',
    SSH_AUTH_SOCK: '/s',
    GPG_AGENT_INFO: '/g',
    DATABASE_URL: 'postgres://app:pw@db/app',
    HTTPS_PROXY: 'http://u:p@proxy:3128',
    REDIS_URL: 'redis://:pw@cache:6379',
  }
  const kept = {
    PATH: '/bin',
    HOME: '/h',
    PWD: '/w',
    OLDPWD: '/o',
    XDG_SESSION_ID: '3',
    XDG_SESSION_TYPE: 'tty',
    DBUS_SESSION_BUS_ADDRESS: 'unix:path=/run/user/0/bus',
    LANG: 'C',
    NODE_OPTIONS: '--max-old-space-size=512',
    GIT_AUTHOR_NAME: 'a',
    XAUTHORITY: '/x',
    GIT_ASKPASS: '/a',
    HTTP_PROXY: 'http://proxy:3128',
    PIP_INDEX_URL: 'https://pypi.org/simple',
    GIT_REMOTE: 'ssh://git@host/repo',
  }
  expect(scrubbedParentEnv({ ...dropped, ...kept })).toEqual(kept)
  for (const [name, value] of Object.entries(dropped)) expect(isScrubbed(name, value), name).toBe(true)
})

test('the scrub drops AUTHORIZATION, *PASSPHRASE*, *WEBHOOK*, *_SK and *_SECRET* and keeps AUTHOR names', () => {
  const dropped = {
    AUTHORIZATION: 'Bearer x',
    HTTP_AUTHORIZATION: 'Basic x',
    proxy_authorisation: 'x',
    GPG_PASSPHRASE: 'x',
    SSH_KEY_PASSPHRASE_FILE: '/p',
    SLACK_WEBHOOK: 'https://hooks.example/x',
    DISCORD_WEBHOOK_URL: 'https://hooks.example/y',
    STRIPE_SK: 'sk_live_x',
    stripe_sk: 'x',
    CLIENT_SECRET_V2: 'x',
  }
  const kept = {
    AUTHOR: 'me',
    AUTHORS_FILE: 'AUTHORS',
    GIT_AUTHOR_NAME: 'a',
    GIT_AUTHOR_EMAIL: 'a@example.com',
    GIT_COMMITTER_NAME: 'c',
    XAUTHORITY: '/x',
    DESK: 'x',
    TASK_ID: '3',
    SKIP_TESTS: '1',
    HOOK_DIR: '/h',
  }
  expect(scrubbedParentEnv({ ...dropped, ...kept })).toEqual(kept)
  for (const [name, value] of Object.entries(dropped)) expect(isScrubbed(name, value), name).toBe(true)
})
