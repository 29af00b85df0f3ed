import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, expect, test } from 'vitest'
import { attack, leaked, type Attack } from './helpers.ts'

/*
 * Attack #1 in docs/security.md#attacks (docs/security.md#boundary, trusted launch): a sandboxed command plants `bwrap`, `sh`, `env` and `bash` in
 * `node_modules/.bin` and `.venv/bin` of the workspace — where npx and an activated virtualenv put the first entries
 * of PATH — and the next call runs with that PATH. A planted program run by dsh's host side would write a marker
 * outside the sandbox (and print the fake HOME's key); every program must come from a trusted system path instead.
 */
let a: Attack | undefined
const savedPath = process.env.PATH
afterEach(async () => {
  process.env.PATH = savedPath
  await a?.cleanup()
  a = undefined
})

const PLANTED = ['bwrap', 'sh', 'env', 'bash', 'dash', 'setpriv']

function plant(dir: string, marker: string, home: string): string {
  const fake = `#!/bin/sh\necho "ran $0 on the host" >> ${marker}\ncat ${home}/.ssh/id_rsa\nexec /usr/bin/$(basename "$0") "$@"\n`
  return PLANTED.map(
    (name) =>
      `mkdir -p ${dir} && printf '%s' '${fake.replace(/'/g, "'\\''")}' > ${dir}/${name} && chmod 755 ${dir}/${name}`,
  ).join(' && ')
}

for (const where of ['node_modules/.bin', '.venv/bin']) {
  test(`programs planted in ${where} and put first on PATH are never run by the host`, async () => {
    a = await attack()
    const marker = join(a.outside, 'pwned')
    const planted = await a.bash(`${plant(join(a.project, where), marker, a.home)} && echo planted`)
    expect(planted).toBe('planted')
    // What npx (or `source .venv/bin/activate`) does to the PATH dsh then inherits and hands its children.
    process.env.PATH = `${join(a.project, where)}:${savedPath}`
    const next = await a.bash('echo second call; cat ~/.ssh/id_rsa 2>&1 | head -1')
    const background = await a.call('bash', { command: 'echo task', description: 'attack', run_in_background: true })
    expect(background.isError).toBe(false)
    expect(existsSync(marker) ? readFileSync(marker, 'utf8') : '').toBe('')
    expect(leaked(next + background.text)).toEqual([])
    expect(next).toMatch(/^second call\n/)
  })
}

test('a bwrapPath given as a bare name is looked up only in the system directories, never on PATH', async () => {
  a = await attack()
  const marker = join(a.outside, 'pwned')
  await a.bash(plant(join(a.project, 'bin'), marker, a.home))
  process.env.PATH = `${join(a.project, 'bin')}:${savedPath}`
  expect(await a.bash('echo ok')).toBe('ok')
  expect(existsSync(marker)).toBe(false)
})

test('a bwrapPath inside a writable root fails closed with BASH_SANDBOX_UNAVAILABLE saying why, and runs nothing', async () => {
  a = await attack({ config: ({ project }) => ({ 'bash-sandbox': { bwrapPath: join(project, 'tools/bwrap') } }) })
  const { execFileSync } = await import('node:child_process')
  execFileSync('sh', ['-c', `mkdir -p ${a.project}/tools && cp /usr/bin/bwrap ${a.project}/tools/bwrap`])
  const result = await a.call('bash', { command: `touch ${a.project}/ran`, description: 'attack' })
  expect(result.code).toBe('BASH_SANDBOX_UNAVAILABLE')
  expect(result.text).toContain(
    `bwrap (${a.project}/tools/bwrap) lies inside the writable directory ${a.project}, where a command can replace it`,
  )
  expect(existsSync(join(a.project, 'ran'))).toBe(false)
})
