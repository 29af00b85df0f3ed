import { execFileSync } from 'node:child_process'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { attack, type Attack } from './helpers.ts'

/*
 * Attack #9 in docs/security.md#attacks and docs/security.md#boundary's kernel side: the seccomp filter every sandboxed command runs under. A key
 * added to the user's kernel keyring outside must not be readable inside; the other denied calls fail with EPERM;
 * ordinary work (git, node, python threads, a C compiler) still runs.
 */
let a: Attack
let key: string | undefined

beforeAll(async () => {
  a = await attack()
  key = execFileSync('keyctl', ['add', 'user', 'dsh-security-canary', 'CANARY-KEYRING-VALUE', '@u'], {
    encoding: 'utf8',
  }).trim()
})
afterAll(async () => {
  if (key) execFileSync('keyctl', ['unlink', key, '@u'])
  await a?.cleanup()
})

test('a key added to the kernel keyring outside is not readable inside: keyctl is denied', async () => {
  // The host can read it: the test is real.
  expect(execFileSync('keyctl', ['print', key as string], { encoding: 'utf8' })).toContain('CANARY-KEYRING-VALUE')
  const text = await a.bash(
    `keyctl print ${key} 2>&1; keyctl search @u user dsh-security-canary 2>&1; keyctl show @u 2>&1`,
  )
  expect(text).not.toContain('CANARY-KEYRING-VALUE')
  expect(text).not.toContain('dsh-security-canary')
  expect(text).toContain('Operation not permitted')
})

test("new namespaces, mounts and the namespace init's memory are out of reach", async () => {
  const text = await a.bash(
    [
      'unshare --user --map-root-user true 2>&1 || echo unshare-denied',
      'unshare --mount true 2>&1 || echo mount-ns-denied',
      'mount -t tmpfs none /mnt 2>&1 || echo mount-denied',
      'echo x > /proc/1/mem 2>&1 || echo init-memory-denied',
      'python3 -c "import ctypes,sys; r=ctypes.CDLL(None, use_errno=True).syscall(321, 0, 0, 0); print(\'bpf\', r, ctypes.get_errno())"',
    ].join('; '),
  )
  for (const denied of ['unshare-denied', 'mount-ns-denied', 'mount-denied', 'init-memory-denied'])
    expect(text).toContain(denied)
  // bpf(2) → -1, EPERM (1)
  expect(text).toContain('bpf -1 1')
})

test('no controlling terminal to type into: no /dev/tty, and TIOCSTI is denied even on a terminal of its own', async () => {
  const text = await a.bash(
    [
      'tty 2>&1',
      '(exec 3</dev/tty) 2>&1 || echo no-tty',
      `python3 -c "import os,fcntl,termios,ctypes; m,s=os.openpty()
try:
    fcntl.ioctl(s, termios.TIOCSTI, b'x'); print('tiocsti allowed')
except OSError as e: print('tiocsti', e.errno)"`,
    ].join('; '),
  )
  expect(text).toContain('not a tty')
  expect(text).toContain('no-tty')
  expect(text).toContain('tiocsti 1')
})

test('ordinary work still runs under the filter: git, node, python threads, a C compiler, and no stray descriptors', async () => {
  const text = await a.bash(
    [
      'git init -q repo && cd repo && git -c user.name=t -c user.email=t@t commit -q --allow-empty -m first && git log --format=%s && cd ..',
      "node -e \"require('worker_threads'); console.log('node', 1 + 1)\"",
      'python3 -c "import threading; t = threading.Thread(target=print, args=(\'thread\',)); t.start(); t.join()"',
      'printf "int main(void){return 7;}" > t.c && cc t.c -o t && ./t; echo "cc $?"',
      'ls -l /proc/self/fd/ | grep -c -e dsh-sandbox -e seccomp; true',
    ].join('; '),
  )
  expect(text).toContain('first\nnode 2\nthread\ncc 7\n')
  // bwrap's argument file and filter descriptors are closed before the command starts.
  expect(text.trim().split('\n').pop()).toBe('0')
})
