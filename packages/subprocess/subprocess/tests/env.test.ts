import { expect, test } from 'vitest'
import { childEnv, scrubbedParentEnv } from '../src/index.ts'

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
