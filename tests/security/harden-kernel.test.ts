import { lstatSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { attack, type Attack } from './helpers.ts'

/*
 * Issue 33 rows 2 and 6 (docs/security.md#boundary): dsh runs as root here, so a sandboxed command is root over the files it makes.
 * It must not leave a setuid or setgid file (nor a device node) for a local user to run, and the calls Docker's
 * default profile denies are denied here too.
 */
let a: Attack
beforeAll(async () => {
  a = await attack()
})
afterAll(async () => {
  await a?.cleanup()
})

const SET_ID = 0o6000

test('a sandboxed root cannot make a setuid or setgid file: chmod, install, open(O_CREAT) and fchmod all fail', async () => {
  expect(process.getuid?.()).toBe(0)
  const text = await a.bash(
    [
      'mkdir -p t && cp "$(command -v python3 || command -v bash)" t/rootpy',
      'chmod 4755 t/rootpy 2>&1 || echo chmod-denied',
      'chmod g+s t/rootpy 2>&1 || echo chmod-g-denied',
      'install -m 4755 t/rootpy t/installed 2>&1 || echo install-denied',
      `python3 -c "import os; os.close(os.open('t/created', os.O_CREAT | os.O_WRONLY, 0o6755))" 2>&1 || echo open-denied`,
      `python3 -c "import os; fd = os.open('t/f', os.O_CREAT | os.O_WRONLY, 0o755); os.fchmod(fd, 0o4755)" 2>&1 || echo fchmod-denied`,
      'chmod 755 t/rootpy && echo plain-chmod-ok',
    ].join('; '),
  )
  for (const word of ['chmod-denied', 'chmod-g-denied', 'install-denied', 'open-denied', 'fchmod-denied'])
    expect(text, word).toContain(word)
  expect(text).toContain('plain-chmod-ok')
  for (const name of ['rootpy', 'installed', 'created', 'f']) {
    const stats = lstatSync(join(a.project, 't', name), { throwIfNoEntry: false })
    if (stats) expect(stats.mode & SET_ID, `${name} on the host`).toBe(0)
  }
})

test('a sandboxed root cannot make a device node; a FIFO still works', async () => {
  const text = await a.bash(
    [
      'mknod t-mem c 1 1 2>&1 || echo char-denied',
      'mknod t-blk b 7 0 2>&1 || echo block-denied',
      'mkfifo t-fifo && echo fifo-ok',
    ].join('; '),
  )
  expect(text).toContain('char-denied')
  expect(text).toContain('block-denied')
  expect(text).toContain('fifo-ok')
  expect(lstatSync(join(a.project, 't-mem'), { throwIfNoEntry: false })).toBeUndefined()
})

test("the calls Docker's default profile denies fail with EPERM: modify_ldt, move_pages, kcmp, pidfd_getfd, setxattr", async () => {
  // x86_64 numbers; each call gets harmless arguments, so only the filter can make it fail with EPERM (1).
  const calls: Record<string, string> = {
    modify_ldt: '154, 0, 0, 0',
    move_pages: '279, 0, 0, 0, 0, 0, 0',
    kcmp: '312, os.getpid(), os.getpid(), 0, 0, 0',
    pidfd_getfd: '438, pidfd, 0, 0',
    mbind: '237, 0, 0, 0, 0, 0, 0',
    settimeofday: '164, 0, 0',
    setxattr: "188, b'.', b'user.x', b'v', 1, 0",
  }
  const script = [
    'import ctypes, os',
    'libc = ctypes.CDLL(None, use_errno=True)',
    'pidfd = libc.syscall(434, os.getpid(), 0)',
    ...Object.entries(calls).map(
      ([name, args]) => `r = libc.syscall(${args}); print('${name}', r, ctypes.get_errno() if r < 0 else 0)`,
    ),
  ].join('\n')
  const text = await a.bash(`python3 - <<'PY'\n${script}\nPY`)
  for (const name of Object.keys(calls)) expect(text, name).toMatch(new RegExp(`^${name} -1 1$`, 'm'))
})
