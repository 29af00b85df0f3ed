import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { processRuns } from '../src/index.ts'
import { GroupWatch } from '../src/group.ts'
import { fixture, rejection, until, type Fixture } from './helpers.ts'

let f: Fixture
beforeEach(async () => {
  f = await fixture()
})
afterEach(async () => {
  await f.cleanup()
})

/** Waits (bounded) until the child printed `text` on stdout: the event that says it is ready. */
async function printed(handle: { collected: { stdout?: { readFrom(o: number): { text: string } } } }, text: string) {
  await until(
    () => handle.collected.stdout!.readFrom(0).text.includes(text),
    `the child printed ${JSON.stringify(text)}`,
  )
}

test('aborting the signal sends SIGTERM to the process group', async () => {
  const controller = new AbortController()
  const handle = await f.spawn({ argv: ['sleep', '100'], signal: controller.signal })
  controller.abort()
  expect(await handle.done).toEqual({ exitCode: null, signal: 'SIGTERM' })
})

test('a child that traps SIGTERM gets SIGKILL after graceMs', async () => {
  const controller = new AbortController()
  const handle = await f.spawn({
    argv: ['sh', '-c', 'trap "" TERM; echo ready; while :; do sleep 1; done'],
    signal: controller.signal,
    graceMs: 50,
  })
  await printed(handle, 'ready')
  controller.abort()
  expect(await handle.done).toEqual({ exitCode: null, signal: 'SIGKILL' })
})

test('grandchildren die with the group', async () => {
  const handle = await f.spawn({ argv: ['sh', '-c', 'sleep 100 & echo $!; sleep 100'] })
  await printed(handle, '\n')
  const grandchild = Number(handle.collected.stdout!.readFrom(0).text.trim())
  expect(processRuns(grandchild)).toBe(true)
  handle.terminate()
  await handle.waitForExit()
  expect(processRuns(grandchild)).toBe(false)
  expect(processRuns(handle.pid)).toBe(false)
})

test('terminate is idempotent, also after the exit', async () => {
  const handle = await f.spawn({ argv: ['sleep', '100'] })
  handle.terminate()
  handle.terminate()
  expect(await handle.done).toEqual({ exitCode: null, signal: 'SIGTERM' })
  await handle.waitForExit()
  handle.terminate()
  expect(await handle.waitForExit()).toEqual({ exitCode: null, signal: 'SIGTERM' })
})

test('an already-aborted signal spawns nothing', async () => {
  const controller = new AbortController()
  controller.abort()
  const error = await rejection(f.spawn({ argv: ['touch', 'started'], signal: controller.signal }))
  expect(error.code).toBe('SUBPROCESS_ABORTED')
  expect(error.message).toBe('"touch" was not started: the call was cancelled')
  expect(existsSync(join(f.dir, 'started'))).toBe(false)
})

test('waitForExit waits for the whole tree, not only the leader', async () => {
  // The leader exits at once; its background child lives until we release it through a file.
  const release = join(f.dir, 'release')
  const handle = await f.spawn({
    argv: ['sh', '-c', '(while [ ! -e "$0" ]; do sleep 0.01; done) >/dev/null 2>&1 & echo $!', release],
  })
  expect(await handle.done).toEqual({ exitCode: 0, signal: null })
  const grandchild = Number(handle.collected.stdout!.readFrom(0).text.trim())
  let treeGone = false
  const waiting = handle.waitForExit().then((status) => {
    treeGone = true
    return status
  })
  // Give a leader-only implementation every chance to resolve early.
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve))
  expect(processRuns(grandchild)).toBe(true)
  expect(treeGone).toBe(false)
  const { writeFileSync } = await import('node:fs')
  writeFileSync(release, '')
  expect(await waiting).toEqual({ exitCode: 0, signal: null })
  expect(processRuns(grandchild)).toBe(false)
})

test('disposing the provider terminates and awaits every live tree', async () => {
  const handles = await Promise.all([
    f.spawn({ argv: ['sleep', '100'] }),
    f.spawn({ argv: ['sh', '-c', 'sleep 100 & sleep 100'] }),
    f.spawn({ argv: ['sh', '-c', 'trap "" TERM; echo ready; sleep 100 & sleep 100'], graceMs: 50 }),
  ])
  await printed(handles[2]!, 'ready')
  const service = f.t.ctx.subprocess
  await f.t.ctx.fiber.dispose()
  for (const handle of handles) {
    expect(processRuns(handle.pid)).toBe(false)
    // (a member may linger as a zombie: this host's init does not reap orphans, so ask who still runs)
    expect(new GroupWatch(handle.pid).alive()).toBe(false)
  }
  const error = await rejection(
    service.spawn({ argv: ['true'], cwd: f.dir, stdin: 'ignore', stdout: 'ignore', stderr: 'ignore', graceMs: 0 }),
  )
  expect(error.code).toBe('SUBPROCESS_SPAWN_FAILED')
  expect(error.message).toBe('cannot start "true": the subprocess provider was disposed')
})

test('a descendant that left the group and holds the output pipe cannot keep done pending after terminate', async () => {
  // `setsid` moves the sleep into a session of its own: outside the group, out of our reach, stdout still open.
  const handle = await f.spawn({ argv: ['sh', '-c', 'setsid sleep 100 & echo $!'], graceMs: 50 })
  await printed(handle, '\n')
  const escaped = Number(handle.collected.stdout!.readFrom(0).text.trim())
  try {
    await handle.waitForExit()
    expect(processRuns(escaped)).toBe(true)
    handle.terminate()
    expect(await handle.done).toEqual({ exitCode: 0, signal: null })
    expect(handle.collected.stdout!.readFrom(0).text).toBe(`${escaped}\n`)
  } finally {
    process.kill(escaped, 'SIGKILL')
  }
})

test('disposing the provider does not hang on a descendant that left the group', async () => {
  const handle = await f.spawn({ argv: ['sh', '-c', 'setsid sleep 100 & echo $!'], graceMs: 50 })
  await printed(handle, '\n')
  const escaped = Number(handle.collected.stdout!.readFrom(0).text.trim())
  try {
    await handle.waitForExit()
    await f.t.ctx.fiber.dispose()
    expect(await handle.done).toEqual({ exitCode: 0, signal: null })
  } finally {
    process.kill(escaped, 'SIGKILL')
  }
})
