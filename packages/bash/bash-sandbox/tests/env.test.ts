import { expect, test } from 'vitest'
import { sandboxEnv } from '../src/env.ts'

const HOST = {
  PATH: '/usr/bin:/bin',
  HOME: '/home/u',
  USER: 'u',
  LOGNAME: 'u',
  SHELL: '/bin/bash',
  LANG: 'C.UTF-8',
  LC_ALL: 'C',
  LC_TIME: 'C',
  TZ: 'UTC',
  TERM: 'xterm',
  TMPDIR: '/var/tmp',
  GITHUB_PAT: 'x',
  AWS_PROFILE: 'prod',
  XDG_SESSION_ID: '3',
  NODE_OPTIONS: '--inspect',
  PROJ_A: 'a',
  PROJ_B: 'b',
  MYVAR: 'm',
}

test("a sandboxed command gets the allowlist of the host env, then the executor's entries; nothing else", () => {
  expect(sandboxEnv({ NO_COLOR: '1', TERM: 'dumb', TMPDIR: '/tmp' }, [], HOST)).toEqual({
    PATH: '/usr/bin:/bin',
    HOME: '/home/u',
    USER: 'u',
    LOGNAME: 'u',
    SHELL: '/bin/bash',
    LANG: 'C.UTF-8',
    LC_ALL: 'C',
    LC_TIME: 'C',
    TZ: 'UTC',
    TERM: 'dumb',
    TMPDIR: '/tmp',
    NO_COLOR: '1',
  })
})

test('passEnv widens it by name or by prefix; an explicit undefined removes a name', () => {
  const env = sandboxEnv({ HOME: undefined }, ['MYVAR', 'PROJ_*'], HOST)
  expect(env).toMatchObject({ MYVAR: 'm', PROJ_A: 'a', PROJ_B: 'b' })
  expect(env).not.toHaveProperty('HOME')
  expect(env).not.toHaveProperty('AWS_PROFILE')
})
