import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { createServer, type Server } from 'node:net'
import { join } from 'node:path'
import type { Context, Fiber } from 'cordis'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import type { BashExecRequest, BashExecSpec, BashRunResult } from '@deepseek-ai/dsh-bash'
import type { Task, TaskDoneEvent } from '@deepseek-ai/dsh-tasks'
import { rejection, until } from '@deepseek-ai/dsh-testing'
import { createSession, type SessionNotice, type ToolSession } from '@deepseek-ai/dsh-tools'

/** What a provider's factory gives the suite for one case. */
export interface ExecutorUnderTest {
  /** A root context with `ctx.tools`, a `ctx.tasks` provider, and the provider loaded and active as `ctx.bash`. */
  readonly ctx: Context
  /** A fresh empty directory: every case's workdir. */
  readonly dir: string
  /** Disposes the provider alone (its fiber), as a host reloading it would. */
  disposeExecutor(): Promise<void>
  /** Disposes the `ctx.tasks` provider alone (its fiber). */
  disposeTasks(): Promise<void>
  /** Disposes everything and removes `dir`; throws if a plugin reported an error. */
  cleanup(): Promise<void>
}

/**
 * The usual `ExecutorUnderTest` of a provider whose fiber `executor` runs in the test context `t` beside the task
 * provider's fiber `tasks`: disposing either disposes its fiber; cleanup disposes `t`, then removes `dir` whatever happened.
 */
export function executorUnderTest(
  t: { readonly ctx: Context; dispose(): Promise<void> },
  dir: string,
  executor: Fiber,
  tasks: Fiber,
): ExecutorUnderTest {
  return {
    ctx: t.ctx,
    dir,
    disposeExecutor: () => executor.dispose().then(() => {}),
    disposeTasks: () => tasks.dispose().then(() => {}),
    async cleanup() {
      try {
        await t.dispose()
      } finally {
        await rm(dir, { recursive: true, force: true })
      }
    },
  }
}

export interface ContractOptions {
  /**
   * True for a provider that confines everything a command starts, `setsid` daemons included (a PID namespace):
   * such leftovers are adopted and stopped like any other. False (default): they escape the process group, so they
   * are named in `leftRunning` and left running, and the call does not wait for the output they hold.
   */
  confinesStrays?: boolean
}

/** The environment variable that marks every process a case starts, so that survivors can be found in /proc. */
const MARK = 'BASH_CONTRACT_CASE'

/** Pids of live processes whose environment holds `MARK=<marker>` (any depth: children inherit it). */
export function processesMarked(marker: string): number[] {
  const needle = `${MARK}=${marker}\0`
  const pids: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue
    try {
      if (readFileSync(`/proc/${entry}/environ`, 'latin1').includes(needle)) pids.push(Number(entry))
    } catch {
      // gone meanwhile, or another user's process
    }
  }
  return pids
}

let cases = 0

/**
 * The `BashExecutor` contract, as vitest cases: run, timeout, abort, the `&` cases (leftovers handed over as a
 * process, registered with `ctx.tasks` here as `tool-bash` does), started processes, disposal. `make` is called once
 * per case. The provider should have a short kill grace (`graceMs` ≤ 500) so that TERM-trapping cases stay quick.
 * After every case, no process the case started may be left (found through an environment marker in /proc).
 */
export function bashExecutorContract(
  name: string,
  make: () => Promise<ExecutorUnderTest>,
  options: ContractOptions = {},
): void {
  contract(`BashExecutor contract: ${name}`, make, options, 'executor')
}

/**
 * The `TaskService` contract over the processes of a `ctx.bash` provider, as vitest cases: registration, reads,
 * waits, kills, notices, session ends, and the disposal of either service. Run it for every bash provider (and every
 * task provider), with the same factory as `bashExecutorContract`.
 */
export function taskContract(
  name: string,
  make: () => Promise<ExecutorUnderTest>,
  options: ContractOptions = {},
): void {
  contract(`TaskService contract: ${name}`, make, options, 'tasks')
}

function contract(
  title: string,
  make: () => Promise<ExecutorUnderTest>,
  options: ContractOptions,
  part: 'executor' | 'tasks',
): void {
  describe(title, () => {
    let x: ExecutorUnderTest
    let marker: string
    let events: TaskDoneEvent[]
    let notices: SessionNotice[]
    /** Strays a case started on purpose (outside any group): killed after the case, before the survivor scan. */
    let strays: number[]
    /** The case's sessions by name, made on first use; the tasks of the last one a case used are `tasks()`. */
    let sessions: Map<string, ToolSession>
    let current: ToolSession | undefined
    const sess = (name: string): ToolSession => {
      let session = sessions.get(name)
      if (!session) sessions.set(name, (session = createSession({ id: name, cwd: x.dir })))
      return session
    }

    beforeEach(async () => {
      marker = `${process.pid}-${++cases}-${Math.random().toString(36).slice(2)}`
      strays = []
      sessions = new Map()
      current = undefined
      x = await make()
      events = []
      notices = []
      x.ctx.on('tasks/done', (event) => void events.push(event))
      x.ctx.on('tools/session-notice', (notice) => void notices.push(notice))
    })

    afterEach(async () => {
      try {
        await x.cleanup()
      } finally {
        for (const pid of strays) {
          try {
            process.kill(pid, 'SIGKILL')
          } catch {
            /* gone */
          }
        }
      }
      await until(
        () => processesMarked(marker).length === 0,
        `no process of the case survives (left: ${processesMarked(marker).join(', ')})`,
        300,
      )
    })

    const bash = () => x.ctx.bash
    const tasks = () => x.ctx.tasks.of(current)
    const spec = (command: string, more: Omit<BashExecRequest, 'command'> = {}): BashExecSpec =>
      bash().resolve({ workdir: x.dir, ...more, command, env: { ...more.env, [MARK]: marker } })
    /** A foreground run; what it leaves running is registered as a task of its owner (as tool-bash does). */
    const run = async (
      command: string,
      more: Omit<BashExecRequest, 'command'> = {},
    ): Promise<BashRunResult & { adoptedTaskId: string | undefined }> => {
      const resolved = spec(command, more)
      current = resolved.session
      const result = await bash().run(resolved)
      const continuing = result.continuing
      const adoptedTaskId =
        continuing &&
        tasks().add({
          process: continuing.process,
          offsets: continuing.offsets,
          command,
          workdir: resolved.workdir,
        }).id
      return { ...result, adoptedTaskId }
    }
    /** A started process, registered as a task (the start signal kills it). */
    const start = async (command: string, more: Omit<BashExecRequest, 'command'> = {}): Promise<Task> => {
      const resolved = spec(command, more)
      current = resolved.session
      const process = await bash().start(resolved)
      return tasks().add({
        process,
        command,
        workdir: resolved.workdir,
        ...(resolved.signal ? { signal: resolved.signal } : {}),
      })
    }
    const file = (name: string) => join(x.dir, name)
    const done = (taskId: string) =>
      new Promise<TaskDoneEvent>((resolve) => {
        const seen = events.find((event) => event.taskId === taskId)
        if (seen) return resolve(seen)
        const off = x.ctx.on('tasks/done', (event) => {
          if (event.taskId !== taskId) return
          off()
          resolve(event)
        })
      })
    /** Reads a task until its stdout (everything so far, concatenated) satisfies `check`. */
    const readUntil = async (taskId: string, check: (stdout: string) => boolean, what: string) => {
      let stdout = ''
      await until(() => {
        stdout += tasks().readOutput(taskId).stdout.text
        return check(stdout)
      }, what)
      return stdout
    }
    const gate = (name: string) => `until [ -e ${file(name)} ]; do sleep 0.01; done`
    /** A `sleep 30` in a session of its own; the file `up` exists once it left the group. */
    const daemon = () => `setsid bash -c 'touch ${file('up')}; exec sleep 30' &`
    const open = (name: string) => writeFileSync(file(name), '')

    // One body holds both suites (they share the helpers above); the other suite's groups are not registered at all,
    // so a run lists no skipped cases.
    const omitted = (_name: string, _cases: () => void): void => {}
    const executorPart = part === 'executor' ? describe : omitted
    const tasksPart = part === 'tasks' ? describe : omitted

    executorPart('foreground', () => {
      test('a command that succeeds: stdout, empty stderr, exit 0, nothing adopted, nothing left running', async () => {
        const result = await run('echo hello; echo world')
        expect(result).toMatchObject({
          exitCode: 0,
          signal: null,
          timedOut: false,
          aborted: false,
          adoptedTaskId: undefined,
          leftRunning: [],
          stdout: { text: 'hello\nworld\n', truncated: false, totalBytes: 12 },
          stderr: { text: '', truncated: false, totalBytes: 0 },
        })
      })

      test('a non-zero exit resolves with its code and both streams', async () => {
        const result = await run('echo out; echo err >&2; exit 7')
        expect(result).toMatchObject({
          exitCode: 7,
          signal: null,
          stdout: { text: 'out\n' },
          stderr: { text: 'err\n' },
        })
      })

      test('the command runs in the workdir, with the request env over the non-interactive env', async () => {
        const result = await run(
          'pwd; echo "$GIT_TERMINAL_PROMPT $DEBIAN_FRONTEND $GIT_EDITOR $EDITOR $NO_COLOR $TERM $PAGER $GIT_PAGER $EXTRA"',
          { env: { EXTRA: 'x' } },
        )
        expect(result.stdout.text).toBe(`${x.dir}\n0 noninteractive true true 1 dumb cat cat x\n`)
      })

      test('given stdin is what the command reads; without it, a read gets end of file at once', async () => {
        expect((await run('cat', { stdin: 'from stdin' })).stdout.text).toBe('from stdin')
        expect((await run('read -r line; echo "read status $?"')).stdout.text).toBe('read status 1\n')
      })

      test('a command over its timeout is killed: timedOut, not aborted, killed by SIGTERM, output kept', async () => {
        const result = await run('echo started; sleep 100', { timeoutMs: 300 })
        expect(result).toMatchObject({
          timedOut: true,
          aborted: false,
          timeoutMs: 300,
          exitCode: null,
          signal: 'SIGTERM',
          stdout: { text: 'started\n' },
        })
      })

      test('an aborted command resolves aborted once its whole tree is gone', async () => {
        const controller = new AbortController()
        const running = run(`sleep 100 & echo $! > ${file('pid')}; wait`, { signal: controller.signal })
        await until(() => readable(file('pid')), 'the command started')
        controller.abort()
        expect(await running).toMatchObject({ aborted: true, timedOut: false })
        expect(processesMarked(marker)).toEqual([])
      })

      test('a TERM-trapping command that times out dies at SIGKILL after the grace', async () => {
        const result = await run(`trap '' TERM; sleep 100 & echo $! > ${file('pid')}; wait`, { timeoutMs: 300 })
        expect(result).toMatchObject({ timedOut: true, signal: 'SIGKILL' })
        expect(processesMarked(marker)).toEqual([])
      })

      test('rejections: an already-aborted signal, a NUL byte, a missing workdir, a disposed executor; nothing runs', async () => {
        const controller = new AbortController()
        controller.abort()
        expect(await rejection(run(`touch ${file('ran')}`, { signal: controller.signal }))).toMatchObject({
          code: 'BASH_ABORTED',
        })
        expect(await rejection(run('echo a\0b'))).toMatchObject({ code: 'BASH_INVALID_REQUEST' })
        expect(await rejection(run(`touch ${file('ran')}`, { workdir: file('missing') }))).toMatchObject({
          code: 'BASH_INVALID_WORKDIR',
        })
        const executor = bash()
        const later = spec(`touch ${file('ran')}`)
        await x.disposeExecutor()
        expect(await rejection(executor.run(later))).toMatchObject({ code: 'BASH_DISPOSED' })
        expect(await rejection(executor.start(later))).toMatchObject({ code: 'BASH_DISPOSED' })
        expect(readable(file('ran'))).toBe(false)
      })
    })

    executorPart('a foreground command that runs past backgroundAfterMs', () => {
      test('it is handed over still running, with its output so far; its later output and its end continue there, nothing repeated', async () => {
        const result = await run(`echo first; ${gate('go')}; echo done; exit 5`, {
          session: sess('session-a'),
          backgroundAfterMs: 300,
        })
        expect(result).toMatchObject({
          exitCode: null,
          signal: null,
          timedOut: false,
          aborted: false,
          leftRunning: [],
          continuing: { reason: 'still-running' },
        })
        const id = result.adoptedTaskId as string
        expect(tasks().get(id)).toMatchObject({ status: { state: 'running' } })
        const waiting = tasks().waitFor(id, { pattern: /^done$/m, timeoutMs: 20_000 })
        open('go')
        expect(await waiting).toBe('matched')
        expect((await done(id)).status).toEqual({ state: 'completed', exitCode: 5 })
        expect(result.stdout.text + tasks().readOutput(id).stdout.text).toBe('first\ndone\n')
      })

      test('an explicit timeoutMs wins: the command is killed at its timeout, never handed over', async () => {
        const result = await run('sleep 100', { timeoutMs: 600, backgroundAfterMs: 100 })
        expect(result).toMatchObject({ timedOut: true, continuing: undefined, adoptedTaskId: undefined })
        expect(processesMarked(marker)).toEqual([])
      })

      test('a command that ends before backgroundAfterMs is an ordinary result', async () => {
        expect(await run('echo quick', { backgroundAfterMs: 60_000 })).toMatchObject({
          exitCode: 0,
          continuing: undefined,
          stdout: { text: 'quick\n' },
        })
      })
    })

    executorPart('a foreground command that leaves processes behind', () => {
      test('`sleep 30 &`: the call returns when the shell exits; the sleep becomes a task of the owner, output continuing there', async () => {
        const result = await run(`echo started; (${gate('go')}; echo later; sleep 30) & echo $! > ${file('pid')}`, {
          session: sess('session-a'),
        })
        expect(result).toMatchObject({ exitCode: 0, timedOut: false, stdout: { text: 'started\n' }, leftRunning: [] })
        const id = result.adoptedTaskId as string
        expect(id).toMatch(/^bash-\d+$/)
        expect(tasks().get(id)).toMatchObject({ status: { state: 'running' } })
        open('go')
        expect(await readUntil(id, (out) => out === 'later\n', 'the adopted task printed')).toBe('later\n')
        expect(await tasks().kill(id)).toBe(true)
        expect(tasks().get(id)?.status).toMatchObject({ state: 'killed' })
        expect(processesMarked(marker)).toEqual([])
        expect(notices).toEqual([])
      })

      test('`(daemon &)` and `nohup … &` with the output redirected are adopted too, and killing the task stops them', async () => {
        const result = await run(`(sleep 30 &); nohup sleep 30 > /dev/null 2>&1 & echo started`)
        expect(result.stdout.text).toBe('started\n')
        const id = result.adoptedTaskId as string
        expect(id).toMatch(/^bash-\d+$/)
        expect(processesMarked(marker)).toHaveLength(2)
        expect(await tasks().kill(id)).toBe(true)
        expect(processesMarked(marker)).toEqual([])
      })

      test("a leftover that ends by itself ends its task: completed with the shell's exit code, and a notice for the owner", async () => {
        const result = await run(`(${gate('go')}) & exit 4`, { session: sess('session-a') })
        const id = result.adoptedTaskId as string
        expect(result.exitCode).toBe(4)
        open('go')
        expect((await done(id)).status).toEqual({ state: 'completed', exitCode: 4 })
        expect(notices.map((n) => n.key)).toEqual([id])
      })

      test('a dev server on a loopback port: adopted, waited for, reached, then killed by request; the port is free again', async () => {
        const script =
          'const s=require("http").createServer((q,r)=>r.end("pong")).listen(0,"127.0.0.1",()=>console.log("listening "+s.address().port))'
        // The gate holds the server back until the call has returned, so that "listening" is the task's new output.
        const result = await run(
          `(${gate('go')}; exec ${JSON.stringify(process.execPath)} -e ${shellQuote(script)}) &`,
          { session: sess('session-a') },
        )
        const id = result.adoptedTaskId as string
        expect(id).toMatch(/^bash-\d+$/)
        const waiting = tasks().waitFor(id, { pattern: /listening \d+/, timeoutMs: 20_000 })
        open('go')
        expect(await waiting).toBe('matched')
        const port = Number(/listening (\d+)/.exec(tasks().readOutput(id).stdout.text)?.[1])
        expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe('pong')
        expect(await tasks().kill(id)).toBe(true)
        expect(await portIsFree(port)).toBe(true)
        expect(notices).toEqual([])
        expect(events.filter((e) => e.taskId === id).map((e) => e.requested)).toEqual([true])
      })

      const confines = options.confinesStrays ?? false
      test('`setsid sleep 30 & echo started` with timeoutMs 1000: returns without waiting for the pipe; the daemon is named or adopted', async () => {
        const result = await run('setsid sleep 30 & echo started', { timeoutMs: 1000 })
        strays.push(...result.leftRunning.map((p) => p.pid))
        expect(result).toMatchObject({ exitCode: 0, timedOut: false, stdout: { text: 'started\n' } })
        if (confines) {
          expect(result.leftRunning).toEqual([])
          expect(await tasks().kill(result.adoptedTaskId as string)).toBe(true)
        } else {
          expect(result.adoptedTaskId).toBeUndefined()
          expect(result.leftRunning).toEqual([{ pid: expect.any(Number), command: 'sleep 30' }])
        }
      })

      test('a timeout ends the call within its grace and stops the daemon that left the group holding the pipe', async () => {
        const result = await run(`${daemon()} ${gate('up')}; sleep 100`, { timeoutMs: 1000 })
        strays.push(...result.leftRunning.map((p) => p.pid))
        expect(result).toMatchObject({ timedOut: true, adoptedTaskId: undefined })
        expect(result.leftRunning.map((p) => p.command)).toEqual([])
      })

      test('an abort ends the call within its grace and stops the daemon that left the group holding the pipe', async () => {
        const controller = new AbortController()
        const running = run(`${daemon()} sleep 100`, { signal: controller.signal })
        await until(() => readable(file('up')), 'the daemon left the group')
        controller.abort()
        const result = await running
        strays.push(...result.leftRunning.map((p) => p.pid))
        expect(result).toMatchObject({ aborted: true, adoptedTaskId: undefined })
        expect(result.leftRunning.map((p) => p.command)).toEqual([])
      })

      test('a background task whose daemon left the group holding the pipe: killing it stops the daemon too, nothing is left running', async () => {
        const task = await start(`${daemon()} ${gate('never')}`)
        await until(() => readable(file('up')), 'the daemon left the group')
        expect(await tasks().kill(task.id)).toBe(true)
        const after = tasks().get(task.id)
        strays.push(...(after?.leftRunning ?? []).map((p) => p.pid))
        expect(after?.status).toMatchObject({ state: 'killed' })
        expect(after?.leftRunning.map((p) => p.command)).toEqual([])
        expect(tasks().readOutput(task.id).status).toMatchObject({ state: 'killed' })
      })
    })

    tasksPart('background tasks', () => {
      test("start gives a running task with the next id of its session; get and list know it; another session's tasks are unknown", async () => {
        const first = await start('sleep 100', { session: sess('  séance\t42 ') })
        const second = await start('true', { session: sess('  séance\t42 ') })
        expect(first).toMatchObject({
          command: 'sleep 100',
          workdir: x.dir,
          id: 'bash-1',
          status: { state: 'running' },
          leftRunning: [],
        })
        expect(typeof first.startedAt).toBe('number')
        expect(Number(second.id.slice(5))).toBe(Number(first.id.slice(5)) + 1)
        expect(tasks().get(first.id)).toEqual(first)
        expect(
          tasks()
            .list()
            .map((task) => task.id),
        ).toContain(first.id)
        expect(x.ctx.tasks.of(sess('other')).get(first.id)).toBeUndefined()
        expect(x.ctx.tasks.of(undefined).get(first.id)).toBeUndefined()
        expect(tasks().get('bash-999999')).toBeUndefined()
      })

      test('readOutput delivers each byte once; the final status comes with the rest; then the task is listed as read to its end', async () => {
        const task = await start(`echo one; echo warn >&2; ${gate('go')}; echo two; exit 3`)
        await readUntil(task.id, (out) => out === 'one\n', 'the first line was read')
        expect(tasks().readOutput(task.id)).toMatchObject({ stdout: { text: '' }, status: { state: 'running' } })
        open('go')
        await done(task.id)
        const last = tasks().readOutput(task.id)
        expect(last.stdout.text).toBe('two\n')
        expect(last.status).toEqual({ state: 'completed', exitCode: 3 })
        expect(
          tasks()
            .list()
            .find((t) => t.id === task.id),
        ).toMatchObject({ readToEnd: true })
        expect(tasks().get(task.id)?.status).toEqual({ state: 'completed', exitCode: 3 })
        expect(tasks().readOutput(task.id)).toEqual({
          stdout: { text: '', lossy: false },
          stderr: { text: '', lossy: false },
          status: { state: 'completed', exitCode: 3 },
        })
      })

      test('readOutput, waitFor and kill throw BASH_UNKNOWN_TASK for an unknown id', async () => {
        expect(() => tasks().readOutput('bash-999999')).toThrow(expect.objectContaining({ code: 'BASH_UNKNOWN_TASK' }))
        expect(await rejection(tasks().kill('nope'))).toMatchObject({ code: 'BASH_UNKNOWN_TASK' })
        expect(await rejection(tasks().waitFor('nope', { timeoutMs: 10 }))).toMatchObject({ code: 'BASH_UNKNOWN_TASK' })
      })

      test('a background task has no timeout', async () => {
        const task = await start(`${gate('go')}; echo survived`, { timeoutMs: 1 })
        expect((await run('sleep 100', { timeoutMs: 50 })).timedOut).toBe(true)
        open('go')
        await done(task.id)
        expect(tasks().readOutput(task.id).stdout.text).toBe('survived\n')
      })

      test('kill: true once, false after; the status says killed; the tree is gone when it resolves', async () => {
        const task = await start(`sleep 100 & ${gate('never')}`)
        const [first, second] = await Promise.all([tasks().kill(task.id), tasks().kill(task.id)])
        expect([first, second]).toEqual([true, false])
        expect(await tasks().kill(task.id)).toBe(false)
        expect(tasks().get(task.id)?.status).toMatchObject({ state: 'killed' })
        expect(processesMarked(marker)).toEqual([])
      })

      test('the start signal kills the task when it aborts', async () => {
        const controller = new AbortController()
        const task = await start('sleep 100', { signal: controller.signal })
        controller.abort()
        expect((await done(task.id)).status).toMatchObject({ state: 'killed' })
      })
    })

    tasksPart('waiting for output', () => {
      test('wait_for matches output printed after the wait began', async () => {
        const task = await start(`echo booting; ${gate('go')}; echo READY; sleep 100`)
        await readUntil(task.id, (out) => out === 'booting\n', 'the first line was read')
        const waiting = tasks().waitFor(task.id, { pattern: /^READY$/m, timeoutMs: 20_000 })
        open('go')
        expect(await waiting).toBe('matched')
        expect(tasks().readOutput(task.id).stdout.text).toBe('READY\n')
      })

      test('undelivered output that already matches returns at once; delivered output never matches again', async () => {
        const task = await start('echo READY; sleep 100')
        expect(await tasks().waitFor(task.id, { pattern: /READY/, timeoutMs: 20_000 })).toBe('matched')
        tasks().readOutput(task.id)
        expect(await tasks().waitFor(task.id, { pattern: /READY/, timeoutMs: 50 })).toBe('timeout')
      })

      test('a task that never prints it: timeout; one that exits first: ended; no pattern: waits for the end', async () => {
        const quiet = await start('echo starting; sleep 100')
        expect(await tasks().waitFor(quiet.id, { pattern: /READY/, timeoutMs: 200 })).toBe('timeout')
        const quitter = await start(`${gate('go')}; echo bye; exit 3`)
        const waiting = tasks().waitFor(quitter.id, { pattern: /READY/, timeoutMs: 20_000 })
        open('go')
        expect(await waiting).toBe('ended')
        expect(tasks().readOutput(quitter.id).status).toEqual({ state: 'completed', exitCode: 3 })
        const plain = await start(`${gate('go2')}; exit 0`)
        const whole = tasks().waitFor(plain.id, { timeoutMs: 20_000 })
        open('go2')
        expect(await whole).toBe('ended')
      })

      test('a pattern that backtracks without end is given up (pattern-too-slow) while the event loop runs on; the next wait works', async () => {
        const slow = await start(`printf 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!\\n'; sleep 100`)
        const task = await start(`${gate('go')}; echo READY; sleep 100`)
        let ticks = 0
        const ticker = setInterval(() => {
          ticks++
        }, 10)
        try {
          expect(await tasks().waitFor(slow.id, { pattern: /^(a+)+$/m, timeoutMs: 60_000 })).toBe('pattern-too-slow')
        } finally {
          clearInterval(ticker)
        }
        // The test ran off this thread: timers fired all along (a blocked loop would have let one or two through).
        expect(ticks).toBeGreaterThan(10)
        const waiting = tasks().waitFor(task.id, { pattern: /^READY$/m, timeoutMs: 20_000 })
        open('go')
        expect(await waiting).toBe('matched')
      })

      test('an aborted wait says so', async () => {
        const task = await start('sleep 100')
        const controller = new AbortController()
        const waiting = tasks().waitFor(task.id, { pattern: /x/, timeoutMs: 20_000, signal: controller.signal })
        controller.abort()
        expect(await waiting).toBe('aborted')
      })
    })

    tasksPart('notices and sessions', () => {
      const probe = () =>
        x.ctx.tools.register({
          name: 'contract_probe',
          description: 'd',
          parameters: { type: 'object' },
          execute: () => 'probe',
        })
      const probeText = async (session: string) =>
        (await x.ctx.tools.execute('contract_probe', {}, { session: sess(session) })).content[0].text

      test("a task that ends by itself notifies its owner's session once, keyed by the task id", async () => {
        probe()
        const task = await start('exit 2', { session: sess('session-a') })
        const event = await done(task.id)
        const notice = `background task ${task.id} finished [status: completed, exit code: 2]. Read its output with bash_output.`
        expect(event).toEqual({
          taskId: task.id,
          session: sess('session-a'),
          status: { state: 'completed', exitCode: 2 },
          notice,
          requested: false,
        })
        expect(notices).toEqual([{ session: sess('session-a'), text: notice, key: task.id }])
        expect(await probeText('session-b')).toBe('probe')
        expect(await probeText('session-a')).toBe(`probe\n\n${notice}`)
        expect(await probeText('session-a')).toBe('probe')
      })

      test('reading a task to its end withdraws its undelivered notice', async () => {
        probe()
        const task = await start('echo hi', { session: sess('session-a') })
        await done(task.id)
        expect(tasks().readOutput(task.id).status).toEqual({ state: 'completed', exitCode: 0 })
        expect(await probeText('session-a')).toBe('probe')
      })

      test('a kill that was asked for sends no notice; the event says it was requested', async () => {
        const task = await start('sleep 100', { session: sess('session-a') })
        await tasks().kill(task.id)
        expect((await done(task.id)).requested).toBe(true)
        expect(notices).toEqual([])
      })

      test("a session's end kills its running tasks (no notice) and forgets them; other sessions' tasks run on", async () => {
        // A provider may take a while to exec the command (a sandbox sets up first): wait until both are up.
        const theirs = await start('sleep 100', { session: sess('session-b') })
        await until(() => processesMarked(marker).length >= 1, "the other session's task is up")
        const mine = await start(`sleep 100 & ${gate('never')}`, { session: sess('session-a') })
        await until(() => processesMarked(marker).length >= 2, "the session's own task is up")
        await sess('session-a').dispose()
        expect(x.ctx.tasks.of(sess('session-a')).get(mine.id)).toBeUndefined()
        expect(x.ctx.tasks.of(sess('session-b')).get(theirs.id)?.status).toEqual({ state: 'running' })
        expect(notices).toEqual([])
        expect(processesMarked(marker)).toHaveLength(1)
      })
    })

    executorPart('disposal', () => {
      test('disposal of the executor stops every process it started, TERM-trapping ones and their children too, and waits: zero survivors; their tasks end killed', async () => {
        await start(`trap '' TERM; sleep 1000 & echo $!; wait`)
        await start('sleep 1000 & echo $!; wait', { session: sess('session-a') })
        await start('bash -c "sleep 1000 & wait" & wait')
        const running = run(`trap '' TERM; touch ${file('fg')}; sleep 1000 & wait`)
        await until(() => readable(file('fg')) && processesMarked(marker).length >= 9, 'every process is up')
        await x.disposeExecutor()
        expect(processesMarked(marker)).toEqual([])
        expect((await running).signal).toBe('SIGKILL')
        await until(() => events.length === 3, 'the three tasks ended')
        expect(events.map((event) => event.status.state)).toEqual(['killed', 'killed', 'killed'])
      })
    })

    tasksPart('disposal', () => {
      test('disposal of the task service kills every task, TERM-trapping ones and their children too, and waits: zero survivors, no event', async () => {
        await start(`trap '' TERM; sleep 1000 & echo $!; wait`)
        await start('sleep 1000 & echo $!; wait', { session: sess('session-a') })
        await start('bash -c "sleep 1000 & wait" & wait')
        await until(() => processesMarked(marker).length >= 7, 'every process is up')
        await x.disposeTasks()
        expect(processesMarked(marker)).toEqual([])
        expect(events).toEqual([])
        expect(notices).toEqual([])
      })
    })
  })
}

function readable(path: string): boolean {
  try {
    readFileSync(path)
    return true
  } catch {
    return false
  }
}

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`
}

/** Whether a listener can bind `port` on 127.0.0.1 now. */
function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server: Server = createServer()
    server.once('error', () => resolve(false))
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)))
  })
}
