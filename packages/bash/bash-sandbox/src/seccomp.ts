/**
 * The seccomp filter every sandboxed command runs under (bwrap `--seccomp FD`): a classic BPF program built here,
 * no native module. It denies the system calls a command never needs and that reach past the sandbox — the kernel
 * keyring first (a key added outside is readable inside otherwise) — with EPERM, lets everything else through, and
 * refuses the other ABIs of the machine (i386 and x32 on x86_64, arm32 on aarch64), whose numbers differ.
 */

/** `AUDIT_ARCH_*` of the architectures the filter knows, by Node's `process.arch`. */
const AUDIT_ARCH: Readonly<Record<string, number>> = {
  x64: 0xc000003e,
  arm64: 0xc00000b7,
}

/** System calls denied with EPERM, and why; numbers for x86_64 and aarch64 (undefined: the call does not exist there). */
export const DENIED: readonly {
  readonly name: string
  readonly x64?: number
  readonly arm64?: number
  readonly why: string
}[] = [
  { name: 'keyctl', x64: 250, arm64: 219, why: 'the kernel keyring is shared with the host user' },
  { name: 'add_key', x64: 248, arm64: 217, why: 'the kernel keyring' },
  { name: 'request_key', x64: 249, arm64: 218, why: 'the kernel keyring' },
  {
    name: 'ptrace',
    x64: 101,
    arm64: 117,
    why: "a traced process runs outside this filter (the namespace's init has none)",
  },
  { name: 'process_vm_readv', x64: 310, arm64: 270, why: "reads another process's memory" },
  { name: 'process_vm_writev', x64: 311, arm64: 271, why: "writes another process's memory" },
  { name: 'unshare', x64: 272, arm64: 97, why: 'new namespaces: kernel attack surface, and a way to remount' },
  { name: 'setns', x64: 308, arm64: 268, why: 'joins another namespace' },
  { name: 'mount', x64: 165, arm64: 40, why: 'the mounts are the boundary' },
  { name: 'umount2', x64: 166, arm64: 39, why: 'would lift a mask' },
  { name: 'pivot_root', x64: 155, arm64: 41, why: 'the mounts are the boundary' },
  { name: 'open_tree', x64: 428, arm64: 428, why: 'the new mount API' },
  { name: 'move_mount', x64: 429, arm64: 429, why: 'the new mount API' },
  { name: 'fsopen', x64: 430, arm64: 430, why: 'the new mount API' },
  { name: 'fsconfig', x64: 431, arm64: 431, why: 'the new mount API' },
  { name: 'fsmount', x64: 432, arm64: 432, why: 'the new mount API' },
  { name: 'fspick', x64: 433, arm64: 433, why: 'the new mount API' },
  { name: 'mount_setattr', x64: 442, arm64: 442, why: 'the new mount API' },
  { name: 'bpf', x64: 321, arm64: 280, why: 'kernel attack surface' },
  { name: 'perf_event_open', x64: 298, arm64: 241, why: 'kernel attack surface, side channels' },
  { name: 'userfaultfd', x64: 323, arm64: 282, why: 'a staple of kernel exploits' },
  {
    name: 'io_uring_setup',
    x64: 425,
    arm64: 425,
    why: 'kernel attack surface (bypasses this filter for its own operations)',
  },
  { name: 'io_uring_enter', x64: 426, arm64: 426, why: 'as io_uring_setup' },
  { name: 'io_uring_register', x64: 427, arm64: 427, why: 'as io_uring_setup' },
  { name: 'kexec_load', x64: 246, arm64: 104, why: 'replaces the kernel' },
  { name: 'kexec_file_load', x64: 320, arm64: 294, why: 'replaces the kernel' },
  { name: 'init_module', x64: 175, arm64: 105, why: 'loads kernel code' },
  { name: 'finit_module', x64: 313, arm64: 273, why: 'loads kernel code' },
  { name: 'delete_module', x64: 176, arm64: 106, why: 'unloads kernel code' },
  {
    name: 'open_by_handle_at',
    x64: 304,
    arm64: 265,
    why: 'opens files by handle, past every mount (the "shocker" escape)',
  },
  { name: 'name_to_handle_at', x64: 303, arm64: 264, why: 'the other half of open_by_handle_at' },
  { name: 'acct', x64: 163, arm64: 89, why: 'host-wide process accounting' },
  { name: 'swapon', x64: 167, arm64: 224, why: 'host-wide' },
  { name: 'swapoff', x64: 168, arm64: 225, why: 'host-wide' },
  { name: 'reboot', x64: 169, arm64: 142, why: 'host-wide' },
  { name: 'syslog', x64: 103, arm64: 116, why: 'the kernel log leaks addresses' },
  { name: 'quotactl', x64: 179, arm64: 60, why: 'host-wide' },
  { name: 'lookup_dcookie', x64: 212, arm64: 18, why: 'obsolete profiling interface' },
  { name: 'vhangup', x64: 153, arm64: 58, why: 'terminals' },
  { name: 'nfsservctl', x64: 180, arm64: 42, why: 'obsolete' },
  { name: 'uselib', x64: 134, why: 'obsolete' },
  { name: 'ustat', x64: 136, why: 'obsolete' },
  { name: 'sysfs', x64: 139, why: 'obsolete' },
  { name: '_sysctl', x64: 156, why: 'obsolete' },
  { name: 'iopl', x64: 172, why: 'raw port I/O' },
  { name: 'ioperm', x64: 173, why: 'raw port I/O' },
  { name: 'create_module', x64: 174, why: 'obsolete' },
  { name: 'get_kernel_syms', x64: 177, why: 'obsolete' },
  { name: 'query_module', x64: 178, why: 'obsolete' },
  // Docker's default profile denies these too (docs/decisions/2026-12-04-seccomp-vs-docker.md).
  { name: 'modify_ldt', x64: 154, why: 'the local descriptor table: a staple of kernel exploits' },
  { name: 'kcmp', x64: 312, arm64: 272, why: "compares other processes' kernel objects (an address oracle)" },
  { name: 'pidfd_getfd', x64: 438, arm64: 438, why: "copies another process's descriptors" },
  { name: 'process_madvise', x64: 440, arm64: 440, why: "advises on another process's memory" },
  { name: 'move_pages', x64: 279, arm64: 239, why: "moves another process's pages between NUMA nodes" },
  { name: 'migrate_pages', x64: 256, arm64: 238, why: 'as move_pages, for a whole process' },
  { name: 'mbind', x64: 237, arm64: 235, why: 'NUMA policy: host-wide placement, no command needs it' },
  { name: 'set_mempolicy', x64: 238, arm64: 237, why: 'NUMA policy' },
  { name: 'get_mempolicy', x64: 239, arm64: 236, why: 'NUMA policy' },
  { name: 'set_mempolicy_home_node', x64: 450, arm64: 450, why: 'NUMA policy' },
  { name: 'settimeofday', x64: 164, arm64: 170, why: 'the clock is host-wide' },
  { name: 'clock_settime', x64: 227, arm64: 112, why: 'the clock is host-wide' },
  { name: 'clock_adjtime', x64: 305, arm64: 266, why: 'the clock is host-wide' },
  { name: 'adjtimex', x64: 159, arm64: 171, why: 'the clock is host-wide' },
  { name: 'fanotify_init', x64: 300, arm64: 262, why: 'watches whole mounts' },
  { name: 'quotactl_fd', x64: 443, arm64: 443, why: 'host-wide' },
  // A file capability (security.capability) is a setuid bit by another name; a filter cannot read the name.
  { name: 'setxattr', x64: 188, arm64: 5, why: 'could set a file capability' },
  { name: 'lsetxattr', x64: 189, arm64: 6, why: 'could set a file capability' },
  { name: 'fsetxattr', x64: 190, arm64: 7, why: 'could set a file capability' },
  { name: 'setxattrat', x64: 463, arm64: 463, why: 'could set a file capability' },
]

/** The setuid and setgid bits: a file made with either runs as its owner (root, when dsh runs as root). */
export const SET_ID_BITS = 0o6000

/**
 * Calls denied when their mode argument (the index given) carries SET_ID_BITS: a sandboxed command may make files
 * and change modes, never a setuid or setgid file. mknod and mknodat are denied for device nodes only (FIFOs pass).
 */
const MODE_ARG: readonly {
  readonly name: string
  readonly x64?: number
  readonly arm64?: number
  readonly arg: number
}[] = [
  { name: 'chmod', x64: 90, arg: 1 },
  { name: 'fchmod', x64: 91, arm64: 52, arg: 1 },
  { name: 'fchmodat', x64: 268, arm64: 53, arg: 2 },
  { name: 'fchmodat2', x64: 452, arm64: 452, arg: 2 },
  { name: 'creat', x64: 85, arg: 1 },
  { name: 'open', x64: 2, arg: 2 },
  { name: 'openat', x64: 257, arm64: 56, arg: 3 },
]
const MKNOD_ARG: readonly {
  readonly name: string
  readonly x64?: number
  readonly arm64?: number
  readonly arg: number
}[] = [
  { name: 'mknod', x64: 133, arg: 1 },
  { name: 'mknodat', x64: 259, arm64: 33, arg: 2 },
]
/** S_IFCHR and S_IFBLK both have 0o20000 and neither 0o10000 nor 0o100000 (which FIFOs, links and sockets have). */
const DEVICE_BIT = 0o20000
const NOT_DEVICE_BITS = 0o110000

/** Calls allowed only with some arguments (the rest get EPERM), and clone3, which gets ENOSYS (see below). */
const SYSCALL = {
  ioctl: { x64: 16, arm64: 29 },
  clone: { x64: 56, arm64: 220 },
  clone3: { x64: 435, arm64: 435 },
  personality: { x64: 135, arm64: 92 },
  openat2: { x64: 437, arm64: 437 },
} as const

/** ioctl requests denied: typing into the terminal's input queue (TIOCSTI) and the console's (TIOCLINUX). */
export const DENIED_IOCTLS: readonly number[] = [0x5412, 0x541c]
/** clone flags that make a namespace (NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET). */
export const NAMESPACE_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
/** personality() values allowed: the query (0xffffffff) and the ordinary ones (as container runtimes allow). */
export const PERSONALITIES: readonly number[] = [0x0, 0x8, 0x20000, 0x20008, 0xffffffff]

// Classic BPF opcodes (linux/filter.h, linux/bpf_common.h) and seccomp return values.
const LD_W_ABS = 0x20
const JEQ_K = 0x15
const JGE_K = 0x35
const JSET_K = 0x45
const JA = 0x05
const RET_K = 0x06
const RET_ALLOW = 0x7fff0000
const RET_ERRNO = 0x00050000
const EPERM = 1
const ENOSYS = 38
const X32_BIT = 0x40000000
// struct seccomp_data: nr at 0, arch at 4, args[i] at 16 + 8i (the low 32 bits first on these little-endian machines).
const NR = 0
const ARCH = 4
const arg = (i: number) => 16 + 8 * i

interface Insn {
  code: number
  jt: number
  jf: number
  k: number
}

/**
 * The filter for `arch` (Node's `process.arch`) as the bytes bwrap reads from its `--seccomp` fd (struct
 * sock_filter, 8 bytes each, host order), or undefined for an architecture it does not know.
 *
 * clone3 gets ENOSYS, not EPERM: its flags sit in memory a filter cannot read, and glibc falls back to clone (whose
 * flags it can) only on ENOSYS. openat2 gets ENOSYS for the same reason (its mode sits in a struct): callers fall
 * back to openat, whose mode the filter reads.
 */
export function seccompFilter(arch: string = process.arch): Buffer | undefined {
  const audit = AUDIT_ARCH[arch]
  if (audit === undefined) return undefined
  const key = arch as 'x64' | 'arm64'
  const denied = DENIED.map((call) => call[key]).filter((nr): nr is number => nr !== undefined)
  const known = <T extends { x64?: number; arm64?: number; arg: number }>(calls: readonly T[]) =>
    calls.flatMap((call) => (call[key] === undefined ? [] : [{ nr: call[key] as number, arg: call.arg }]))
  const modeCalls = known(MODE_ARG)
  const mknodCalls = known(MKNOD_ARG)
  // Labels name later instructions: classic BPF jumps only forward, by an offset.
  const code: (
    | Insn
    | { label: string }
    | { jump: 'JEQ' | 'JGE' | 'JSET'; k: number; yes?: string; no?: string }
    | { goto: string }
  )[] = [
    { code: LD_W_ABS, jt: 0, jf: 0, k: ARCH },
    { jump: 'JEQ', k: audit, no: 'eperm' },
    { code: LD_W_ABS, jt: 0, jf: 0, k: NR },
    ...(key === 'x64' ? [{ jump: 'JGE' as const, k: X32_BIT, yes: 'eperm' }] : []),
    ...denied.map((nr) => ({ jump: 'JEQ' as const, k: nr, yes: 'eperm' })),
    { jump: 'JEQ', k: SYSCALL.clone3[key], yes: 'enosys' },
    { jump: 'JEQ', k: SYSCALL.openat2[key], yes: 'enosys' },
    ...modeCalls.map((call) => ({ jump: 'JEQ' as const, k: call.nr, yes: `mode${call.arg}` })),
    ...mknodCalls.map((call) => ({ jump: 'JEQ' as const, k: call.nr, yes: `mknod${call.arg}` })),
    { jump: 'JEQ', k: SYSCALL.ioctl[key], yes: 'ioctl' },
    { jump: 'JEQ', k: SYSCALL.clone[key], yes: 'clone' },
    { jump: 'JEQ', k: SYSCALL.personality[key], yes: 'personality' },
    { code: RET_K, jt: 0, jf: 0, k: RET_ALLOW },
    { label: 'ioctl' },
    { code: LD_W_ABS, jt: 0, jf: 0, k: arg(1) },
    ...DENIED_IOCTLS.map((request) => ({ jump: 'JEQ' as const, k: request, yes: 'eperm' })),
    { code: RET_K, jt: 0, jf: 0, k: RET_ALLOW },
    { label: 'clone' },
    { code: LD_W_ABS, jt: 0, jf: 0, k: arg(0) },
    { jump: 'JSET', k: NAMESPACE_FLAGS, yes: 'eperm' },
    { code: RET_K, jt: 0, jf: 0, k: RET_ALLOW },
    ...[...new Set(modeCalls.map((call) => call.arg))].flatMap((i) => [
      { label: `mode${i}` },
      { code: LD_W_ABS, jt: 0, jf: 0, k: arg(i) },
      { jump: 'JSET' as const, k: SET_ID_BITS, yes: 'eperm' },
      { code: RET_K, jt: 0, jf: 0, k: RET_ALLOW },
    ]),
    ...[...new Set(mknodCalls.map((call) => call.arg))].flatMap((i) => [
      { label: `mknod${i}` },
      { code: LD_W_ABS, jt: 0, jf: 0, k: arg(i) },
      { jump: 'JSET' as const, k: SET_ID_BITS, yes: 'eperm' },
      { jump: 'JSET' as const, k: DEVICE_BIT, no: 'allow' },
      { jump: 'JSET' as const, k: NOT_DEVICE_BITS, yes: 'allow', no: 'eperm' },
    ]),
    { label: 'personality' },
    { code: LD_W_ABS, jt: 0, jf: 0, k: arg(0) },
    ...PERSONALITIES.map((value) => ({ jump: 'JEQ' as const, k: value, yes: 'known' })),
    { goto: 'eperm' },
    { label: 'known' },
    { label: 'allow' },
    { code: RET_K, jt: 0, jf: 0, k: RET_ALLOW },
    { label: 'eperm' },
    { code: RET_K, jt: 0, jf: 0, k: RET_ERRNO | EPERM },
    { label: 'enosys' },
    { code: RET_K, jt: 0, jf: 0, k: RET_ERRNO | ENOSYS },
  ]
  const labels = new Map<string, number>()
  const program: typeof code = []
  for (const item of code) {
    if ('label' in item) labels.set(item.label, program.length)
    else program.push(item)
  }
  const target = (label: string | undefined, at: number): number => {
    if (label === undefined) return 0
    const offset = (labels.get(label) as number) - at - 1
    if (offset < 0 || offset > 255) throw new Error(`seccomp: jump to ${label} out of range`)
    return offset
  }
  const insns: Insn[] = program.map((item, at) => {
    if ('goto' in item) return { code: JA, jt: 0, jf: 0, k: target(item.goto, at) }
    if ('jump' in item) {
      const op = item.jump === 'JEQ' ? JEQ_K : item.jump === 'JGE' ? JGE_K : JSET_K
      return { code: op, jt: target(item.yes, at), jf: target(item.no, at), k: item.k >>> 0 }
    }
    return item as Insn
  })
  const bytes = Buffer.alloc(insns.length * 8)
  insns.forEach((insn, i) => {
    bytes.writeUInt16LE(insn.code, i * 8)
    bytes.writeUInt8(insn.jt, i * 8 + 2)
    bytes.writeUInt8(insn.jf, i * 8 + 3)
    bytes.writeUInt32LE(insn.k, i * 8 + 4)
  })
  return bytes
}
