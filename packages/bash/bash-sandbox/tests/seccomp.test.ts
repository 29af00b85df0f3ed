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

  test(`${arch}: a call of another ABI is EPERM; any call not on the list passes`, () => {
    expect(run(filter, { nr: 0, arch: 0x40000003 })).toBe(EPERM) // i386
    if (arch === 'x64') expect(call(0x40000000 | 1)).toBe(EPERM) // x32 write
    const special = new Set([
      ...DENIED.map((entry) => entry[arch]),
      arch === 'x64' ? 16 : 29,
      arch === 'x64' ? 56 : 220,
      435,
      arch === 'x64' ? 135 : 92,
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
