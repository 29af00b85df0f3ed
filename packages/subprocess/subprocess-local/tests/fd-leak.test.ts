import { readdirSync } from 'node:fs'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { fixture, until, type Fixture } from './helpers.ts'

let f: Fixture
beforeEach(async () => {
  f = await fixture()
})
afterEach(async () => {
  await f.cleanup()
})

const openFds = () => readdirSync('/proc/self/fd').length

test('no file descriptor leaks over 500 spawns of every kind', async () => {
  // Warm up: Node opens some descriptors lazily on its first child (signal pipe, etc.).
  await (await f.spawn({ argv: ['true'] })).waitForExit()
  await new Promise((resolve) => setImmediate(resolve))
  const before = openFds()
  const kinds = [
    async () => {
      const h = await f.spawn({ argv: ['true'], stdin: { data: 'x'.repeat(100000) } })
      await h.done
      await h.waitForExit()
    },
    async () => {
      const h = await f.spawn({
        argv: ['sh', '-c', 'echo out; echo err >&2'],
        stdout: { maxBytes: 2, spill: { maxBytes: 1000 } },
      })
      await h.done
      await h.waitForExit()
    },
    async () => {
      const h = await f.spawn({ argv: ['cat'], stdin: 'pipe', stdout: 'pipe', stderr: 'ignore' })
      h.stdin!.end('x')
      h.stdout!.resume()
      await h.done
      await h.waitForExit()
    },
    async () => {
      const h = await f.spawn({ argv: ['sleep', '100'] })
      h.terminate()
      await h.waitForExit()
      await h.done
    },
    async () => {
      await f.spawn({ argv: ['dsh-no-such-program'] }).then(
        () => {
          throw new Error('spawned')
        },
        () => {},
      )
    },
  ]
  for (let round = 0; round < 100; round++) await Promise.all(kinds.map((kind) => kind()))
  // Pipes close a turn after their streams end: wait (bounded) for the count to settle back.
  await until(() => openFds() <= before, `open descriptors return to ${before} (now ${openFds()})`, 200)
  expect(openFds()).toBeLessThanOrEqual(before)
})
