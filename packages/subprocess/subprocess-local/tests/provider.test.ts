import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { getEventListeners } from 'node:events'
import { join } from 'node:path'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { createTestContext } from '@deepseek-ai/dsh-testing'
import LocalSubprocess, { Config } from '../src/index.ts'
import { fixture, until, type Fixture } from './helpers.ts'

let f: Fixture
beforeEach(async () => {
  f = await fixture()
})
afterEach(async () => {
  await f.cleanup()
})

/** A second provider in a context of its own, next to the fixture's. */
async function ownProvider(spillDir: string) {
  const t = await createTestContext({ withTools: false })
  await t.active(t.ctx.plugin(LocalSubprocess, { spillDir }))
  return t
}

test('the exit hook is registered once per provider and removed on dispose', async () => {
  const before = process.listenerCount('exit')
  const t = await ownProvider(join(f.dir, 'second'))
  expect(process.listenerCount('exit')).toBe(before + 1)
  await t.dispose()
  expect(process.listenerCount('exit')).toBe(before)
})

test('abort listeners are removed once a tree is gone, so a shared signal does not collect them', async () => {
  const controller = new AbortController()
  for (let i = 0; i < 20; i++) {
    const handle = await f.spawn({ argv: ['true'], signal: controller.signal })
    await handle.done
    await handle.waitForExit()
  }
  expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0)
})

test('a kept spill file outlives the provider; a discarded one leaves nothing behind', async () => {
  const spillDir = join(f.dir, 'outlive')
  const t = await ownProvider(spillDir)
  const spawn = (bytes: number) =>
    t.ctx.subprocess.spawn({
      argv: ['head', '-c', String(bytes), '/dev/zero'],
      cwd: f.dir,
      stdin: 'ignore',
      graceMs: 100,
      stdout: { maxBytes: 10, spill: { maxBytes: 1000 } },
      stderr: 'ignore',
    })
  const kept = await spawn(500)
  const dropped = await spawn(5000)
  await Promise.all([kept.done, dropped.done])
  const path = kept.collected.stdout!.spillPath!
  expect(dropped.collected.stdout!.spillPath).toBeUndefined()
  await t.dispose()
  expect(readFileSync(path)).toEqual(Buffer.alloc(500))
  const [privateDir] = readdirSync(spillDir)
  expect(readdirSync(join(spillDir, privateDir!))).toEqual([path.slice(path.lastIndexOf('/') + 1)])
})

test('a provider that never spilled leaves no directory, and an emptied one is removed on dispose', async () => {
  const spillDir = join(f.dir, 'empty')
  const t = await ownProvider(spillDir)
  await (
    await t.ctx.subprocess.spawn({
      argv: ['true'],
      cwd: f.dir,
      stdin: 'ignore',
      stdout: { maxBytes: 10, spill: { maxBytes: 100 } },
      stderr: 'ignore',
      graceMs: 0,
    })
  ).done
  expect(existsSync(spillDir)).toBe(false)
  // 50 bytes open a spill file (the tail holds 10), the next 500 pass its cap: the file is deleted again.
  const handle = await t.ctx.subprocess.spawn({
    argv: ['cat'],
    cwd: f.dir,
    stdin: 'pipe',
    stdout: { maxBytes: 10, spill: { maxBytes: 100 } },
    stderr: 'ignore',
    graceMs: 0,
  })
  handle.stdin!.write(Buffer.alloc(50))
  await until(() => handle.collected.stdout!.spillPath !== undefined, 'the spill file is open')
  handle.stdin!.end(Buffer.alloc(500))
  await handle.done
  expect(handle.collected.stdout!.spillPath).toBeUndefined()
  expect(readdirSync(spillDir)).toHaveLength(1)
  await t.dispose()
  expect(readdirSync(spillDir)).toEqual([])
})

test('an invalid config fails the plugin and names the key', async () => {
  expect(() => Config({ spillDir: 42 } as never)).toThrow(/spillDir/)
  const t = await createTestContext({ withTools: false })
  await expect(t.active(t.ctx.plugin(LocalSubprocess, { spillDir: 42 } as never))).rejects.toThrow()
  await expect(t.dispose()).rejects.toThrow(/ValidationError[^]*spillDir/)
})

test('an unusable spill directory costs the spill file, never the output or the process', async () => {
  const blocker = join(f.dir, 'not-a-directory')
  writeFileSync(blocker, '')
  const t = await ownProvider(join(blocker, 'spill'))
  const handle = await t.ctx.subprocess.spawn({
    argv: ['head', '-c', '5000', '/dev/zero'],
    cwd: f.dir,
    stdin: 'ignore',
    graceMs: 100,
    stdout: { maxBytes: 10, spill: { maxBytes: 100000 } },
    stderr: 'ignore',
  })
  expect(await handle.done).toEqual({ exitCode: 0, signal: null })
  expect(handle.collected.stdout!.spillPath).toBeUndefined()
  expect(handle.collected.stdout!.readFrom(0)).toEqual({ text: '\0'.repeat(10), nextOffset: 5000, lossy: true })
  await t.dispose()
})
