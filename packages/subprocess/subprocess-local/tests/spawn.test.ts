import { existsSync, readlinkSync } from 'node:fs'
import { chmod, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { fixture, rejection, type Fixture } from './helpers.ts'

let f: Fixture
beforeEach(async () => {
  f = await fixture()
})
afterEach(async () => {
  await f.cleanup()
})

test('argv is passed verbatim, never through a shell', async () => {
  const args = ['$(touch pwned)', '`touch pwned2`', 'a b', '*', '; touch pwned3', '"quoted"', '', 'é\\n']
  const result = await f.run(['printf', '%s|\\n', ...args])
  expect(result.stdout).toBe(args.map((a) => `${a}|\n`).join(''))
  expect(result.exitCode).toBe(0)
  for (const name of ['pwned', 'pwned2', 'pwned3']) expect(existsSync(join(f.dir, name))).toBe(false)
})

test('an empty argv is an invalid request', async () => {
  const error = await rejection(f.spawn({ argv: [] }))
  expect(error.code).toBe('SUBPROCESS_INVALID_REQUEST')
  expect(error.name).toBe('SubprocessError')
  expect(error.message).toBe('invalid subprocess request: argv is empty (argv[0] must name the program)')
})

test('a NUL byte in an argument is an invalid request and nothing starts', async () => {
  const error = await rejection(f.spawn({ argv: ['sh', '-c', 'touch started', 'x\0y'] }))
  expect(error.code).toBe('SUBPROCESS_INVALID_REQUEST')
  expect(error.message).toBe('invalid subprocess request: argv[3] contains a NUL byte')
  expect(existsSync(join(f.dir, 'started'))).toBe(false)
})

test('a missing program is a launch failure that names the program and the cause', async () => {
  const error = await rejection(f.spawn({ argv: ['dsh-no-such-program'] }))
  expect(error.code).toBe('SUBPROCESS_SPAWN_FAILED')
  expect(error.message).toBe('cannot start "dsh-no-such-program": ENOENT (no such file or directory)')
})

test('a file without execute permission is a launch failure', async () => {
  const script = join(f.dir, 'script.sh')
  await writeFile(script, '#!/bin/sh\necho hi\n')
  await chmod(script, 0o644)
  const error = await rejection(f.spawn({ argv: [script] }))
  expect(error.code).toBe('SUBPROCESS_SPAWN_FAILED')
  expect(error.message).toBe(`cannot start ${JSON.stringify(script)}: EACCES (permission denied)`)
})

test('a missing working directory is a launch failure that names the directory', async () => {
  const cwd = join(f.dir, 'missing')
  const error = await rejection(f.spawn({ argv: ['true'], cwd }))
  expect(error.code).toBe('SUBPROCESS_SPAWN_FAILED')
  expect(error.message).toBe(
    `cannot start "true": working directory ${JSON.stringify(cwd)} is unusable: ENOENT (no such file or directory)`,
  )
})

test('a file as working directory is a launch failure', async () => {
  const cwd = join(f.dir, 'file')
  await writeFile(cwd, '')
  const error = await rejection(f.spawn({ argv: ['true'], cwd }))
  expect(error.code).toBe('SUBPROCESS_SPAWN_FAILED')
  expect(error.message).toBe(`cannot start "true": working directory ${JSON.stringify(cwd)} is not a directory`)
})

test('the child runs in the requested cwd', async () => {
  expect((await f.run(['pwd'])).stdout).toBe(`${f.dir}\n`)
})

test('exit code and signal are reported', async () => {
  expect(await f.run(['sh', '-c', 'exit 3'])).toMatchObject({ exitCode: 3, signal: null })
  expect(await f.run(['sh', '-c', 'kill -USR1 $$'])).toMatchObject({ exitCode: null, signal: 'SIGUSR1' })
})

test('stdin "ignore" gives the child /dev/null', async () => {
  expect((await f.run(['readlink', '/proc/self/fd/0'])).stdout).toBe('/dev/null\n')
})

test('stdin "pipe" hands the writable end to the caller', async () => {
  const handle = await f.spawn({ argv: ['cat'], stdin: 'pipe' })
  expect(handle.stdin).not.toBeNull()
  handle.stdin?.end('through the pipe')
  await handle.done
  expect(handle.collected.stdout?.readFrom(0).text).toBe('through the pipe')
})

test('stdin data is written then closed', async () => {
  const data = Buffer.alloc(3 * 1048576, 'x')
  const handle = await f.spawn({ argv: ['wc', '-c'], stdin: { data } })
  expect(handle.stdin).toBeNull()
  await handle.done
  expect(handle.collected.stdout?.readFrom(0).text.trim()).toBe(String(data.length))
})

test('a child that ignores a large stdin is no error', async () => {
  const result = await f.run(['true'], { stdin: { data: Buffer.alloc(8 * 1048576, 'y') } })
  expect(result).toMatchObject({ exitCode: 0, signal: null })
})

test('stdout and stderr are collected separately', async () => {
  expect(await f.run(['sh', '-c', 'echo out; echo err >&2'])).toMatchObject({ stdout: 'out\n', stderr: 'err\n' })
})

test('"pipe" output is the caller\'s to read', async () => {
  const handle = await f.spawn({ argv: ['echo', 'piped'], stdout: 'pipe' })
  expect(handle.collected.stdout).toBeUndefined()
  const chunks: Buffer[] = []
  for await (const chunk of handle.stdout!) chunks.push(chunk as Buffer)
  await handle.done
  expect(Buffer.concat(chunks).toString()).toBe('piped\n')
})

test('"inherit" shares the host\'s descriptor and "ignore" gives /dev/null', async () => {
  const handle = await f.spawn({ argv: ['sleep', '100'], stdout: 'inherit', stderr: 'ignore' })
  try {
    expect(handle.stdout).toBeNull()
    expect(handle.stderr).toBeNull()
    expect(readlinkSync(`/proc/${handle.pid}/fd/1`)).toBe(readlinkSync('/proc/self/fd/1'))
    expect(readlinkSync(`/proc/${handle.pid}/fd/2`)).toBe('/dev/null')
  } finally {
    handle.terminate()
    await handle.waitForExit()
  }
})
