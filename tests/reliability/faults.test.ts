import { sessionFor } from '@deepseek-ai/dsh-testing'
import { chmodSync, copyFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { assertWellFormed, host, processesWith, RG, temp, textOf, uniqueSleep, until, type Temp } from './helpers.ts'

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

function tempDir(prefix: string, files: Record<string, string> = {}): Temp {
  const dir = temp(prefix, files)
  cleanups.push(() => dir.cleanup())
  return dir
}

async function started(config: unknown = {}) {
  const dsh = await host(config)
  cleanups.push(async () => {
    await dsh.dispose()
    expect(dsh.problems).toEqual([])
  })
  return dsh
}

const FILES = { 'a.txt': 'alpha\n', 'src/b.ts': 'export const b = 2\n' }

describe('a broken ripgrep', () => {
  test('a missing rg binary gives SEARCH_FAILED naming it, for glob and grep', async () => {
    const ws = tempDir('rg-missing', FILES)
    const rgPath = join(ws.dir, 'no-such-rg')
    const dsh = await started({ 'tool-fs-search': { rgPath } })
    for (const [tool, args] of [
      ['glob', { pattern: '*' }],
      ['grep', { pattern: 'alpha' }],
    ] as const) {
      const result = await dsh.ctx.tools.execute(tool, args, { session: sessionFor('s', ws.dir) })
      expect(result.isError).toBe(true)
      expect(result.error?.code).toBe('SEARCH_FAILED')
      expect(textOf(result)).toContain(rgPath)
    }
  })

  test('a non-executable rg binary gives SEARCH_FAILED naming it', async () => {
    const ws = tempDir('rg-noexec', FILES)
    const rgPath = join(ws.dir, 'rg')
    copyFileSync(RG, rgPath)
    chmodSync(rgPath, 0o644)
    const dsh = await started({ 'tool-fs-search': { rgPath } })
    const result = await dsh.ctx.tools.execute('grep', { pattern: 'alpha' }, { session: sessionFor('s', ws.dir) })
    expect(result.error?.code).toBe('SEARCH_FAILED')
    expect(textOf(result)).toContain(rgPath)
    // Repaired: the next call works again (a failure is not cached).
    chmodSync(rgPath, 0o755)
    const again = await dsh.ctx.tools.execute(
      'grep',
      { pattern: 'alpha', path: '.' },
      { session: sessionFor('s', ws.dir) },
    )
    expect(again.isError).toBe(false)
    expect(textOf(again)).toContain('a.txt')
  })
})

test('the session cwd deleted mid-session: every tool answers with a coded error, and works again elsewhere', async () => {
  const ws = tempDir('cwd-gone', FILES)
  const dsh = await started()
  const session = sessionFor('s', ws.dir)
  expect((await dsh.ctx.tools.execute('read', { path: 'a.txt' }, { session })).isError).toBe(false)
  rmSync(ws.dir, { recursive: true, force: true })
  const calls = [
    ['glob', { pattern: '*' }],
    ['grep', { pattern: 'alpha' }],
    ['read', { path: 'a.txt' }],
    ['bash', { command: 'echo hi', description: 'echo' }],
  ] as const
  for (const [tool, args] of calls) {
    const result = await dsh.ctx.tools.execute(tool, args, { session })
    assertWellFormed(result)
    expect(result.isError, `${tool}: ${textOf(result)}`).toBe(true)
  }
  // The same runtime still serves a session whose cwd exists.
  const other = tempDir('cwd-other', FILES)
  const ok = await dsh.ctx.tools.execute(
    'bash',
    { command: 'cat a.txt', description: 'cat' },
    { session: sessionFor('t', other.dir) },
  )
  expect(textOf(ok)).toBe('alpha')
})

test('an unwritable spill root: the spill policy keeps the original, glob and grep over their caps say the rest was not saved', async () => {
  const files: Record<string, string> = { 'not-a-dir': 'a regular file\n' }
  for (let i = 0; i < 30; i++) files[`f${String(i).padStart(2, '0')}.txt`] = 'needle\n'
  const ws = tempDir('spill-broken', files)
  const dsh = await started({
    'spill-local': { root: join(ws.dir, 'not-a-dir') },
    'spill-policy': { maxInlineBytes: 1000 },
    'tool-fs-search': { globMaxResults: 5, grepMaxMatches: 5 },
  })
  const session = sessionFor('s', ws.dir)
  const seq = await dsh.ctx.tools.execute('bash', { command: 'seq 1 3000', description: 'numbers' }, { session })
  expect(seq.isError).toBe(false)
  expect(textOf(seq)).toBe(Array.from({ length: 3000 }, (_, i) => i + 1).join('\n'))
  for (const [tool, args] of [
    ['glob', { pattern: '*.txt' }],
    ['grep', { pattern: 'needle' }],
  ] as const) {
    const result = await dsh.ctx.tools.execute(tool, args, { session })
    expect(result.isError, textOf(result)).toBe(false)
    expect(textOf(result)).toContain('could not be saved')
  }
})

describe('misbehaving children under bash', () => {
  const config = { 'bash-local': { graceMs: 300 } }

  test('a child that closes stdout and stderr but keeps running ends at the timeout, with no survivor', async () => {
    const dsh = await started(config)
    const { command, marker } = uniqueSleep()
    const result = await dsh.ctx.tools.execute('bash', {
      command: `exec >&- 2>&-; ${command}`,
      description: 'closed',
      timeoutMs: 300,
    })
    expect(result.isError).toBe(false)
    expect(textOf(result)).toContain('[timed out after 300ms]')
    expect(processesWith(marker)).toEqual([])
  })

  test('a child that floods stderr gives a bounded result with the truncation notice', async () => {
    const dsh = await started({ 'bash-local': { spillMaxBytes: 1_000_000 } })
    const result = await dsh.ctx.tools.execute('bash', {
      command: 'yes err | head -c 50000000 >&2',
      description: 'flood',
    })
    expect(result.isError).toBe(false)
    const text = textOf(result)
    expect(text).toContain('[stderr]')
    expect(text).toContain('[output cut: ')
    expect(text).toContain('50000000 bytes')
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(30_000)
  })

  /** A tree in which every process ignores SIGTERM: only SIGKILL after the grace ends it. */
  const trapTree = (sleep: string) =>
    `trap '' TERM; (trap '' TERM; ${sleep}) & (trap '' TERM; ${sleep} & wait) & ${sleep}; wait`

  test('a TERM-trapping tree under timeout: a timed-out result and zero survivors', async () => {
    const dsh = await started(config)
    const { command, marker } = uniqueSleep()
    const result = await dsh.ctx.tools.execute('bash', {
      command: trapTree(command),
      description: 'trap',
      timeoutMs: 300,
    })
    expect(textOf(result)).toContain('[timed out after 300ms]')
    expect(textOf(result)).toContain('[killed by signal: SIGKILL]')
    expect(processesWith(marker)).toEqual([])
  })

  test('a TERM-trapping tree under abort: ABORTED and zero survivors', async () => {
    const dsh = await started(config)
    const { command, marker } = uniqueSleep()
    const controller = new AbortController()
    const pending = dsh.ctx.tools.execute(
      'bash',
      { command: trapTree(command), description: 'trap' },
      { signal: controller.signal },
    )
    await until(() => processesWith(marker).length === 3, 'the tree is up')
    controller.abort()
    const result = await pending
    expect(result.error?.code).toBe('ABORTED')
    expect(processesWith(marker)).toEqual([])
  })

  test('a TERM-trapping tree under dispose (foreground and background): dispose ends both, zero survivors', async () => {
    const dsh = await host(config)
    const { command, marker } = uniqueSleep()
    const bg = await dsh.ctx.tools.execute('bash', {
      command: trapTree(command),
      description: 'bg',
      run_in_background: true,
    })
    expect(textOf(bg)).toMatch(/^started background task bash-\d+/)
    const fg = dsh.ctx.tools.execute('bash', { command: trapTree(command), description: 'fg' })
    await until(() => processesWith(marker).length === 6, 'both trees are up')
    await dsh.dispose()
    expect(processesWith(marker)).toEqual([])
    assertWellFormed(await fg)
    expect(dsh.problems).toEqual([])
  })
})
