import { chmodSync, existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, expect, test } from 'vitest'
import { classify } from '../src/index.ts'
import { fixture, type Fixture } from './helpers.ts'

let f: Fixture | undefined
afterEach(async () => {
  await f?.cleanup()
  f = undefined
})

const ADVICE = 'or start dsh without --sandbox to run commands unconfined.'

function script(dir: string, name: string, body: string): string {
  const path = join(dir, name)
  writeFileSync(path, `#!/bin/sh\n${body}\n`)
  chmodSync(path, 0o755)
  return path
}

test('without bubblewrap every bash call fails closed with BASH_SANDBOX_UNAVAILABLE, says how to install it, and runs nothing', async () => {
  f = await fixture(({ base }) => ({ workspace: {}, config: { bwrapPath: join(base, 'no-such-bwrap') } }))
  const marker = join(f.root, 'ran')
  for (const extra of [{}, { run_in_background: true }]) {
    const result = await f.bash(`touch ${marker}`, extra)
    expect(result.isError).toBe(true)
    expect(result.error).toEqual({
      name: 'SandboxError',
      code: 'BASH_SANDBOX_UNAVAILABLE',
      message: expect.any(String),
    })
    expect(result.content[0].text).toBe(
      `Error: bash runs sandboxed here, but the sandbox cannot be set up: bubblewrap is not installed (no "${f.base}/no-such-bwrap" found). ` +
        'Nothing was run. To fix it: install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap; ' +
        `Arch: pacman -S bubblewrap), or point "bash-sandbox": {"bwrapPath": "/path/to/bwrap"} at it; ${ADVICE}`,
    )
  }
  expect(existsSync(marker)).toBe(false)
})

test('fails closed when user namespaces are blocked (a real kernel limit: user.max_user_namespaces exhausted around bwrap)', async () => {
  f = await fixture(({ base }) => ({
    workspace: {},
    config: {
      bwrapPath: script(
        base,
        'bwrap-no-userns',
        `exec unshare --user --map-root-user sh -c 'echo 1 > /proc/sys/user/max_user_namespaces && exec unshare --user --map-user=65534 --map-group=65534 bwrap "$@"' sh "$@"`,
      ),
    },
  }))
  const marker = join(f.root, 'ran')
  const result = await f.bash(`touch ${marker}`)
  expect(result.error?.code).toBe('BASH_SANDBOX_UNAVAILABLE')
  expect(result.content[0].text).toContain(
    "the sandbox cannot be set up: bubblewrap cannot create the sandbox's namespaces (bwrap: Creating new namespace failed",
  )
  expect(result.content[0].text).toContain(
    'allow unprivileged user namespaces: on Ubuntu 23.10+ AppArmor restricts them',
  )
  expect(existsSync(marker)).toBe(false)
})

test('a failed probe is not kept: once the mechanism works, the next call runs (unavailability forced by a wrapper script)', async () => {
  f = await fixture(({ base }) => ({
    workspace: {},
    config: {
      bwrapPath: script(
        base,
        'bwrap-until-fixed',
        `[ -e "${base}/fixed" ] || { echo 'bwrap: setting up uid map: Permission denied' >&2; exit 1; }\nexec bwrap "$@"`,
      ),
    },
  }))
  const first = await f.bash('echo hi')
  expect(first.error?.code).toBe('BASH_SANDBOX_UNAVAILABLE')
  expect(first.content[0].text).toContain('(bwrap: setting up uid map: Permission denied)')
  writeFileSync(join(f.base, 'fixed'), '')
  const second = await f.bash('echo hi')
  expect(second.isError).toBe(false)
  expect(second.content[0].text).toBe('hi')
})

test('classify names the cause and the fix for each way bubblewrap fails', () => {
  const missing = Object.assign(new Error('spawn bwrap ENOENT'), { code: 'ENOENT' })
  expect(classify('bwrap', missing, '').why).toBe('bubblewrap is not installed (no "bwrap" found)')
  expect(classify('bwrap', Object.assign(new Error('x'), { code: 'EACCES' }), '').why).toBe(
    'bubblewrap ("bwrap") cannot be started: EACCES',
  )
  const apparmor = classify('bwrap', undefined, 'bwrap: setting up uid map: Permission denied\n')
  expect(apparmor.why).toBe(
    "bubblewrap cannot create the sandbox's namespaces (bwrap: setting up uid map: Permission denied)",
  )
  expect(apparmor.fix).toContain('kernel.apparmor_restrict_unprivileged_userns=0')
  const debian = classify(
    'bwrap',
    undefined,
    'bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces.',
  )
  expect(debian.fix).toContain('kernel.unprivileged_userns_clone=1')
  const other = classify('bwrap', undefined, "bwrap: Can't mount proc on /newroot/proc: Device or resource busy")
  expect(other.why).toBe(
    "bubblewrap failed to set up the sandbox (bwrap: Can't mount proc on /newroot/proc: Device or resource busy)",
  )
})
