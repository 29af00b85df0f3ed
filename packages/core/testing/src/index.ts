import { spawnSync, type SpawnSyncReturns } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync, rmdirSync, statSync } from 'node:fs'
import { Context, type Fiber, type Message } from 'cordis'
import { createSession, ToolsService, type ToolSession } from '@deepseek-ai/dsh-tools'

export interface TestContext {
  readonly ctx: Context
  /** Plugin errors (and warnings) reported through the logger since the context was made. */
  readonly problems: readonly Message[]
  /**
   * Waits (bounded) until `fiber` is active: `await ctx.plugin(P)` returns before a plugin with injections
   * has run. Throws if it failed or stays pending.
   */
  active(fiber: Fiber): Promise<void>
  /** Disposes the whole context, then throws if any plugin reported an error. */
  dispose(): Promise<void>
}

function describe(message: Message): string {
  return `[${message.type}] ${message.name}: ${message.args.map((arg) => (arg instanceof Error ? (arg.stack ?? arg.message) : String(arg))).join(' ')}`
}

/**
 * A fresh root Context with an exporter that records every plugin error, so a test fails on errors that
 * Cordis would otherwise only log. `withTools` (default true) loads `ctx.tools`.
 */
export async function createTestContext(
  options: { withTools?: boolean; allowWarnings?: boolean } = {},
): Promise<TestContext> {
  const ctx = new Context()
  const problems: Message[] = []
  ctx.logger.exporter({
    export(message) {
      if (message.type === 'error' || (message.type === 'warn' && !options.allowWarnings)) problems.push(message)
    },
  })
  if (options.withTools ?? true) await ctx.plugin(ToolsService)
  return {
    ctx,
    problems,
    active,
    async dispose() {
      await ctx.fiber.dispose()
      if (problems.length) throw new Error(`plugin errors were reported:\n${problems.map(describe).join('\n')}`)
    },
  }
}

// FiberState is a const enum in Cordis' declarations, which isolatedModules cannot read: mirror the values.
const ACTIVE = 2
const FAILED = 3

export async function active(fiber: Fiber, maxTurns = 200): Promise<void> {
  for (let turn = 0; turn < maxTurns; turn++) {
    if (fiber.inertia) await fiber.inertia
    if (fiber.state === ACTIVE && !fiber.inertia) return
    if (fiber.state === FAILED) throw new Error(`plugin ${fiber.name} failed to load`)
    await new Promise((resolve) => setImmediate(resolve))
  }
  throw new Error(`plugin ${fiber.name} is still not active (state ${fiber.state}): a missing injected service?`)
}

/**
 * Polls `check` (bounded by a number of turns, never by a wall-clock assertion) until it holds: for facts that no
 * event announces, such as a process dying or a file appearing. The pause grows from 1 ms to 20 ms.
 */
export async function until(check: () => boolean | Promise<boolean>, what: string, turns = 2000): Promise<void> {
  for (let turn = 0; turn < turns; turn++) {
    if (await check()) return
    await new Promise((resolve) => setTimeout(resolve, Math.min(1 + turn, 20)))
  }
  throw new Error(`gave up waiting until ${what}`)
}

/**
 * A `sleep` with a duration no other process on the machine uses, as a shell command: the duration (the marker)
 * appears in the sleep's command line only — the shell joins the quoted halves, so the command text that travels
 * through argv or stdin never contains it.
 */
export function uniqueSleep(): { command: string; marker: string } {
  const digits = `${String(process.pid).padStart(7, '0')}${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}`
  return { command: `sleep 1000.${digits.slice(0, 6)}"${digits.slice(6)}"`, marker: `1000.${digits}` }
}

/** Pids of live processes (other than this one) whose command line contains `marker`. */
export function processesWith(marker: string): number[] {
  const pids: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker)) pids.push(Number(entry))
    } catch {
      // the process ended between the listing and the read
    }
  }
  return pids
}

/** The error a promise rejects with; throws if it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<{ code?: string; message: string; name: string }> {
  try {
    await promise
  } catch (error) {
    return error as { code?: string; message: string; name: string }
  }
  throw new Error('expected a rejection')
}

/** Uids with no account and no files on this machine: another local user, for tests that need one (as root). */
export const OTHER_UIDS = { attacker: 61001, victim: 61002 } as const

/**
 * Runs `argv` as `uid` (gid the same number, no supplementary groups) through `setpriv`; needs root. A numeric
 * uid needs no account, so tests create none.
 */
export function runAs(
  uid: number,
  argv: readonly string[],
  options: { env?: NodeJS.ProcessEnv; input?: string; cwd?: string } = {},
): SpawnSyncReturns<string> {
  return spawnSync('setpriv', [`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', '--', ...argv], {
    encoding: 'utf8',
    ...options,
  })
}

/**
 * Sleeps a test leaves outside every process group on purpose (setsid daemons): `sleeper()` makes one
 * (`uniqueSleep`) and remembers it; `stopAll()` kills every one made since the last call and waits until none runs.
 */
export function straySleeps(): { sleeper(): { command: string; marker: string }; stopAll(): Promise<void> } {
  const markers: string[] = []
  return {
    sleeper() {
      const sleep = uniqueSleep()
      markers.push(sleep.marker)
      return sleep
    },
    async stopAll() {
      for (const marker of markers) for (const pid of processesWith(marker)) process.kill(pid, 'SIGKILL')
      for (const marker of markers.splice(0))
        await until(() => processesWith(marker).length === 0, `nothing with ${marker} survives`, 300)
    },
  }
}

/**
 * Runs `work` under the lock directory `lock` (made and removed here): test files run in parallel, in several
 * processes, and two of them doing the same one-time work (installing the packed dsh, say) would race. A lock older
 * than two minutes belongs to a run that died.
 */
export function withLock(lock: string, work: () => void): void {
  const wait = new Int32Array(new SharedArrayBuffer(4))
  for (let attempt = 0; ; attempt++) {
    try {
      mkdirSync(lock)
      break
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      try {
        if (Date.now() - statSync(lock).mtimeMs > 120_000) rmdirSync(lock)
      } catch {}
      if (attempt > 1200) throw new Error(`another test file holds ${lock} for too long`)
      Atomics.wait(wait, 0, 0, 100)
    }
  }
  try {
    work()
  } finally {
    rmdirSync(lock)
  }
}

const testSessions = new Map<string, ToolSession>()

/**
 * The session named `id` in `cwd`, made once (pinned then) and the same object for every later call with the same
 * two: a case that reads then edits in one session passes the same session. Never disposed (test processes end).
 */
export function sessionFor(id: string, cwd: string): ToolSession {
  const key = `${id}\0${cwd}`
  let session = testSessions.get(key)
  if (!session || session.disposed) testSessions.set(key, (session = createSession({ id, cwd })))
  return session
}
