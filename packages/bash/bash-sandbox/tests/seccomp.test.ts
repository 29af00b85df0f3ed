import fc from 'fast-check'
import { expect, test } from 'vitest'
import { DENIED, seccompFilter } from '../src/seccomp.ts'

/*
 * The filter's bytes, run by a small classic-BPF interpreter over synthetic `struct seccomp_data`: exact verdicts
 * for every denied call and every argument check, without a process. (tests/security/sbx-kernel.test.ts runs it in
 * the kernel.)
 */
const ALLOW = 0x7fff0000
const EPERM = 0x00050001
const ENOSYS = 0x00050026
const AUDIT = { x64: 0xc000003e, arm64: 0xc00000b7 } as const

function run(filter: Buffer, data: { nr: number; arch: number; args?: readonly number[] }): number {
  const word = (offset: number): number => {
    if (offset === 0) return data.nr >>> 0
    if (offset === 4) return data.arch >>> 0
    const i = (offset - 16) / 8
    if (Number.isInteger(i) && i >= 0 && i < 6) return (data.args?.[i] ?? 0) >>> 0
    throw new Error(`load at ${offset}`)
  }
  let a = 0
  for (let pc = 0; pc < filter.length / 8; ) {
    const code = filter.readUInt16LE(pc * 8)
    const jt = filter.readUInt8(pc * 8 + 2)
    const jf = filter.readUInt8(pc * 8 + 3)
    const k = filter.readUInt32LE(pc * 8 + 4)
    switch (code) {
      case 0x20:
        a = word(k)
        pc++
        break
      case 0x15:
        pc += 1 + (a === k ? jt : jf)
        break
      case 0x35:
        pc += 1 + (a >= k ? jt : jf)
        break
      case 0x45:
        pc += 1 + ((a & k) !== 0 ? jt : jf)
        break
      case 0x05:
        pc += 1 + k
        break
      case 0x06:
        return k
      default:
        throw new Error(`opcode ${code.toString(16)}`)
    }
  }
  throw new Error('fell off the end')
}

for (const arch of ['x64', 'arm64'] as const) {
  const filter = seccompFilter(arch) as Buffer
  const call = (nr: number, ...args: number[]) => run(filter, { nr, arch: AUDIT[arch], args })
  const nr = (name: string) => DENIED.find((entry) => entry.name === name)?.[arch] as number

  test(`${arch}: every denied call is EPERM, whatever its arguments`, () => {
    for (const entry of DENIED)
      if (entry[arch] !== undefined) expect(call(entry[arch] as number, 1, 2, 3), entry.name).toBe(EPERM)
    expect(call(nr('keyctl'))).toBe(EPERM)
    expect(call(nr('add_key'))).toBe(EPERM)
    expect(call(nr('request_key'))).toBe(EPERM)
  })

  test(`${arch}: clone with a namespace flag is EPERM, a plain clone passes; clone3 is ENOSYS`, () => {
    const clone = arch === 'x64' ? 56 : 220
    expect(call(clone, 0x01200011)).toBe(ALLOW) // fork(): CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | SIGCHLD
    expect(call(clone, 0x003d0f00)).toBe(ALLOW) // pthread_create
    for (const flag of [0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000])
      expect(call(clone, flag | 0x11)).toBe(EPERM)
    expect(call(435)).toBe(ENOSYS)
  })

  test(`${arch}: ioctl TIOCSTI and TIOCLINUX are EPERM (the low word the kernel reads), others pass; personality only ordinary values`, () => {
    const ioctl = arch === 'x64' ? 16 : 29
    expect(call(ioctl, 0, 0x5412)).toBe(EPERM)
    expect(call(ioctl, 0, 0x541c)).toBe(EPERM)
    expect(call(ioctl, 0, 0x5401)).toBe(ALLOW) // TCGETS
    const personality = arch === 'x64' ? 135 : 92
    expect(call(personality, 0xffffffff)).toBe(ALLOW)
    expect(call(personality, 0)).toBe(ALLOW)
    expect(call(personality, 0x0040000)).toBe(EPERM) // ADDR_NO_RANDOMIZE
  })

  test(`${arch}: chmod, open and mknod with a setuid or setgid bit are EPERM; mknod of a device is EPERM, of a FIFO passes`, () => {
    const modeCalls: [number | undefined, number][] =
      arch === 'x64'
        ? [
            [90, 1],
            [91, 1],
            [268, 2],
            [452, 2],
            [85, 1],
            [2, 2],
            [257, 3],
          ]
        : [
            [52, 1],
            [53, 2],
            [452, 2],
            [56, 3],
          ]
    for (const [number, index] of modeCalls) {
      const withMode = (mode: number) =>
        call(number as number, ...Array.from({ length: 6 }, (_, i) => (i === index ? mode : 0)))
      expect(withMode(0o4755), `${number} setuid`).toBe(EPERM)
      expect(withMode(0o2755), `${number} setgid`).toBe(EPERM)
      expect(withMode(0o6777), `${number} both`).toBe(EPERM)
      expect(withMode(0o755), `${number} plain`).toBe(ALLOW)
      expect(withMode(0o1777), `${number} sticky`).toBe(ALLOW)
    }
    const mknodCalls: [number, number][] =
      arch === 'x64'
        ? [
            [133, 1],
            [259, 2],
          ]
        : [[33, 2]]
    for (const [number, index] of mknodCalls) {
      const withMode = (mode: number) => call(number, ...Array.from({ length: 6 }, (_, i) => (i === index ? mode : 0)))
      expect(withMode(0o20666), `${number} char device`).toBe(EPERM)
      expect(withMode(0o60666), `${number} block device`).toBe(EPERM)
      expect(withMode(0o10644), `${number} fifo`).toBe(ALLOW)
      expect(withMode(0o100644), `${number} regular`).toBe(ALLOW)
      expect(withMode(0o140644), `${number} socket`).toBe(ALLOW)
      expect(withMode(0o14644), `${number} setuid fifo`).toBe(EPERM)
    }
    expect(call(437)).toBe(ENOSYS) // openat2: its mode is out of the filter's reach
  })

  test(`${arch}: the calls Docker's default profile denies are EPERM`, () => {
    const docker = ['kcmp', 'pidfd_getfd', 'move_pages', 'mbind', 'set_mempolicy', 'clock_settime', 'settimeofday']
    for (const name of arch === 'x64' ? [...docker, 'modify_ldt'] : docker) expect(call(nr(name)), name).toBe(EPERM)
  })

  test(`${arch}: a call of another ABI is EPERM; any call not on the list passes`, () => {
    expect(run(filter, { nr: 0, arch: 0x40000003 })).toBe(EPERM) // i386
    if (arch === 'x64') expect(call(0x40000000 | 1)).toBe(EPERM) // x32 write
    const special = new Set([
      ...DENIED.map((entry) => entry[arch]),
      arch === 'x64' ? 16 : 29,
      arch === 'x64' ? 56 : 220,
      435,
      437,
      arch === 'x64' ? 135 : 92,
      ...(arch === 'x64' ? [90, 91, 268, 452, 85, 2, 257, 133, 259] : [52, 53, 452, 56, 33]),
    ])
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 0x3fffffff }),
        fc.array(fc.integer({ min: 0, max: 0xffffffff }), { maxLength: 6 }),
        (number, args) => {
          if (special.has(number)) return
          expect(call(number, ...args)).toBe(ALLOW)
        },
      ),
      { numRuns: 500, seed: 20261202 },
    )
  })
}

test('an architecture without known call numbers gets no filter (the sandbox is then unavailable)', () => {
  expect(seccompFilter('ia32')).toBeUndefined()
  expect(seccompFilter('riscv64')).toBeUndefined()
})
