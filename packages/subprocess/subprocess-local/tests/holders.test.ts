import { afterEach, expect, test } from 'vitest'
import { processesWith, straySleeps } from '@deepseek-ai/dsh-testing'
import { fixture, until, type Fixture } from './helpers.ts'

let f: Fixture
const strays = straySleeps()
afterEach(async () => {
  await f.cleanup()
  // The strays these cases make on purpose left every group: the test stops them.
  await strays.stopAll()
})
const sleeper = strays.sleeper

test("exited settles at the leader's exit while a leftover still holds the output; alive() says the group still runs", async () => {
  f = await fixture()
  const sleep = sleeper()
  const handle = await f.spawn({ argv: ['bash', '-c', `${sleep.command} & echo started`] })
  expect(await handle.exited).toEqual({ exitCode: 0, signal: null })
  expect(handle.alive()).toBe(true)
  handle.terminate()
  await handle.waitForExit()
  expect(handle.alive()).toBe(false)
  expect((await handle.done).exitCode).toBe(0)
})

test('abandonOutput names the process outside the group that holds the output, and done then resolves', async () => {
  f = await fixture()
  const sleep = sleeper()
  const handle = await f.spawn({ argv: ['bash', '-c', `setsid ${sleep.command} & echo started`] })
  await handle.waitForExit()
  await until(() => processesWith(sleep.marker).length === 1, 'the stray runs')
  await until(() => handle.collected.stdout?.readFrom(0).text === 'started\n', 'the output arrived')
  const holders = handle.abandonOutput()
  expect(holders).toEqual([{ pid: processesWith(sleep.marker)[0], command: `sleep ${sleep.marker}` }])
  expect(handle.abandonOutput()).toBe(holders)
  await handle.done
  expect(handle.collected.stdout?.readFrom(0).text).toBe('started\n')
})

test('abandonOutput after the output ended names nobody', async () => {
  f = await fixture()
  const handle = await f.spawn({ argv: ['bash', '-c', 'echo hi'] })
  await handle.done
  expect(handle.abandonOutput()).toEqual([])
})

test('onOutput calls back after collected chunks, the bytes readable by then; the remover stops it', async () => {
  f = await fixture()
  const handle = await f.spawn({ argv: ['bash', '-c', 'echo one; echo two >&2'] })
  const seen: string[] = []
  const off = handle.onOutput(() => {
    seen.push(`${handle.collected.stdout?.readFrom(0).text}|${handle.collected.stderr?.readFrom(0).text}`)
  })
  const removed: string[] = []
  handle.onOutput(() => removed.push('x'))()
  await handle.done
  off()
  expect(seen.at(-1)).toBe('one\n|two\n')
  expect(removed).toEqual([])
})
