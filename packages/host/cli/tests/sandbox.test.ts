import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { createDefaultContext } from '../src/index.ts'
import { ChildTransport, dsh, processesWith, uniqueSleep, until } from './helpers.ts'

/*
 * `--sandbox` end to end, through the built `dsh` and the real bubblewrap. The fixtures live under /var/tmp: inside
 * the sandbox the host's /tmp is replaced by a private one.
 *   base/work      the session cwd (--cwd)
 *   base/outside   outside every root
 */
let base: string
let work: string
let outside: string

beforeEach(() => {
  base = realpathSync(mkdtempSync('/var/tmp/dsh-cli-sandbox-'))
  work = join(base, 'work')
  outside = join(base, 'outside')
  mkdirSync(work)
  mkdirSync(outside)
  writeFileSync(join(outside, 'keep.txt'), 'original\n')
})

afterEach(() => {
  rmSync(base, { recursive: true, force: true })
})

const bashArgs = (command: string) => JSON.stringify({ command, description: 'test' })

describe('dsh call --sandbox', () => {
  test('bash writes inside the cwd, not outside it (the outside file untouched), nor to /etc', async () => {
    const run = await dsh([
      'call',
      'bash',
      bashArgs(`echo made > made.txt; echo x > ${outside}/keep.txt; touch /etc/dsh-cli-x`),
      '--cwd',
      work,
      '--sandbox',
    ])
    expect(run.code).toBe(0)
    expect(readFileSync(join(work, 'made.txt'), 'utf8')).toBe('made\n')
    expect(readFileSync(join(outside, 'keep.txt'), 'utf8')).toBe('original\n')
    expect(existsSync('/etc/dsh-cli-x')).toBe(false)
    expect(run.stdout).toContain('Read-only file system')
  })

  test('nothing a call started outlives the command: setsid daemons and background tasks are gone at exit', async () => {
    const daemon = uniqueSleep()
    const task = uniqueSleep()
    const foreground = await dsh([
      'call',
      'bash',
      bashArgs(`setsid ${daemon.command} > /dev/null 2>&1 & echo left`),
      '--cwd',
      work,
      '--sandbox',
    ])
    expect(foreground.stdout).toMatch(/^left\n\[background processes still running: task bash-1\]/)
    const background = await dsh([
      'call',
      'bash',
      JSON.stringify({ command: task.command, description: 'bg', run_in_background: true }),
      '--cwd',
      work,
      '--sandbox',
    ])
    expect(background.stdout).toMatch(/^started background task bash-1/)
    await until(
      () => processesWith(daemon.marker).length === 0 && processesWith(task.marker).length === 0,
      'every process is gone',
    )
  })

  test('read, grep and glob refuse a path outside the cwd, with WORKSPACE_OUTSIDE_ROOTS', async () => {
    for (const [tool, args] of [
      ['read', { path: join(outside, 'keep.txt') }],
      ['grep', { pattern: 'x', path: outside }],
      ['glob', { pattern: '*', path: outside }],
    ] as const) {
      const run = await dsh(['call', tool, JSON.stringify(args), '--cwd', work, '--sandbox', '--json'])
      expect(run.code).toBe(1)
      expect(JSON.parse(run.stdout).error.code).toBe('WORKSPACE_OUTSIDE_ROOTS')
    }
  })

  test('write creates inside the cwd and refuses outside it; dsh call edits an existing file inside it without a read', async () => {
    const made = await dsh([
      'call',
      'write',
      JSON.stringify({ path: 'sub/new.txt', content: 'one\ntwo\n' }),
      '--cwd',
      work,
      '--sandbox',
      '--json',
    ])
    expect(JSON.parse(made.stdout)).toMatchObject({ text: `Created ${work}/sub/new.txt (2 lines)`, isError: false })
    expect(readFileSync(join(work, 'sub/new.txt'), 'utf8')).toBe('one\ntwo\n')
    for (const [tool, args] of [
      ['write', { path: join(outside, 'keep.txt'), content: 'x' }],
      ['write', { path: join(outside, 'new.txt'), content: 'x' }],
      ['edit', { path: join(outside, 'keep.txt'), old_string: 'original', new_string: 'x' }],
    ] as const) {
      const run = await dsh(['call', tool, JSON.stringify(args), '--cwd', work, '--sandbox', '--json'])
      expect(run.code).toBe(1)
      expect(JSON.parse(run.stdout).error.code).toBe('WORKSPACE_OUTSIDE_ROOTS')
    }
    expect(readFileSync(join(outside, 'keep.txt'), 'utf8')).toBe('original\n')
    expect(existsSync(join(outside, 'new.txt'))).toBe(false)
    const edit = await dsh([
      'call',
      'edit',
      JSON.stringify({ path: 'sub/new.txt', old_string: 'two', new_string: 'TWO' }),
      '--cwd',
      work,
      '--sandbox',
      '--json',
    ])
    expect(JSON.parse(edit.stdout)).toMatchObject({ isError: false, error: null })
    expect(readFileSync(join(work, 'sub/new.txt'), 'utf8')).toBe('one\nTWO\n')
  })

  test('without bubblewrap bash fails closed: exit 1, BASH_SANDBOX_UNAVAILABLE, nothing run', async () => {
    const config = join(base, 'config.json')
    writeFileSync(config, JSON.stringify({ 'bash-sandbox': { bwrapPath: join(base, 'no-bwrap') } }))
    const run = await dsh(['call', 'bash', bashArgs('touch ran'), '--cwd', work, '--config', config, '--json'])
    expect(run.code).toBe(1)
    const result = JSON.parse(run.stdout)
    expect(result.error.code).toBe('BASH_SANDBOX_UNAVAILABLE')
    expect(result.text).toContain('bubblewrap is not installed')
    expect(existsSync(join(work, 'ran'))).toBe(false)
  })

  test('a workspace section alone turns the roots on and leaves bash unconfined', async () => {
    const config = join(base, 'config.json')
    writeFileSync(config, JSON.stringify({ workspace: { roots: [] } }))
    const read = await dsh([
      'call',
      'read',
      JSON.stringify({ path: join(outside, 'keep.txt') }),
      '--cwd',
      work,
      '--config',
      config,
      '--json',
    ])
    expect(JSON.parse(read.stdout).error.code).toBe('WORKSPACE_OUTSIDE_ROOTS')
    const bash = await dsh([
      'call',
      'bash',
      bashArgs(`echo changed > ${outside}/keep.txt`),
      '--cwd',
      work,
      '--config',
      config,
    ])
    expect(bash.code).toBe(0)
    expect(readFileSync(join(outside, 'keep.txt'), 'utf8')).toBe('changed\n')
  })

  test('a capped grep saves its complete result in the spill directory, which read can page (a read-only root)', async () => {
    writeFileSync(join(work, 'many.txt'), Array.from({ length: 300 }, (_, i) => `needle ${i}`).join('\n'))
    const config = join(base, 'config.json')
    writeFileSync(config, JSON.stringify({ 'spill-local': { root: join(base, 'spill') } }))
    const grep = await dsh([
      'call',
      'grep',
      JSON.stringify({ pattern: 'needle' }),
      '--cwd',
      work,
      '--config',
      config,
      '--sandbox',
    ])
    const locator = new RegExp(`(${base}/spill/\\S+grep-results\\.txt)`).exec(grep.stdout)?.[1]
    expect(locator, grep.stdout).toBeDefined()
    const read = await dsh([
      'call',
      'read',
      JSON.stringify({ path: locator, limit: 3 }),
      '--cwd',
      work,
      '--config',
      config,
      '--sandbox',
      '--json',
    ])
    expect(JSON.parse(read.stdout).isError).toBe(false)
    const cat = await dsh([
      'call',
      'bash',
      bashArgs(`head -c 100 ${locator} > /dev/null && echo readable; touch ${base}/spill/x`),
      '--cwd',
      work,
      '--config',
      config,
      '--sandbox',
    ])
    expect(cat.stdout).toMatch(/^readable\n\[stderr\]\n.*Read-only file system/)
  })
})

describe('dsh mcp --sandbox', () => {
  test('write, read and edit in one session change files inside the roots; bash sees the result; a path outside is refused', async () => {
    const transport = new ChildTransport(['mcp', '--cwd', work, '--sandbox'])
    const client = new Client({ name: 'dsh-test', version: '1.0.0' })
    await client.connect(transport)
    try {
      const call = async (name: string, args: Record<string, unknown>) => {
        const result = (await client.callTool({ name, arguments: args })) as CallToolResult
        return { text: (result.content[0] as { text: string }).text, isError: result.isError ?? false }
      }
      expect(await call('write', { path: 'a.txt', content: 'alpha\r\nbeta\r\n' })).toEqual({
        text: `Created ${work}/a.txt (2 lines)`,
        isError: false,
      })
      expect(await call('edit', { path: 'a.txt', old_string: 'beta\n', new_string: 'BETA\ngamma\n' })).toEqual({
        text: `Updated ${work}/a.txt: replaced 1 occurrence\n\n1: alpha\n2: BETA\n3: gamma`,
        isError: false,
      })
      // A change by a command in the sandbox makes the next edit stale until the file is read again.
      await call('bash', { command: 'printf "alpha\\r\\nchanged\\r\\n" > a.txt', description: 'change' })
      expect((await call('edit', { path: 'a.txt', old_string: 'alpha', new_string: 'x' })).text).toMatch(
        /^Error: edit refused: \S+ changed since you last read it; read it again, then retry\. What changed: line 2 is now:\n2: changed/,
      )
      await call('read', { path: 'a.txt' })
      expect((await call('edit', { path: 'a.txt', old_string: 'alpha', new_string: 'x' })).isError).toBe(false)
      expect(readFileSync(join(work, 'a.txt'), 'utf8')).toBe('x\r\nchanged\r\n')
      expect(await call('write', { path: join(outside, 'keep.txt'), content: 'x' })).toMatchObject({
        isError: true,
        text: expect.stringContaining('outside the workspace roots'),
      })
      expect(readFileSync(join(outside, 'keep.txt'), 'utf8')).toBe('original\n')
    } finally {
      await transport.close()
    }
  })

  test('closing the connection kills a background task and the setsid daemon it started; the server exits 0', async () => {
    const transport = new ChildTransport(['mcp', '--cwd', work, '--sandbox'])
    const client = new Client({ name: 'dsh-test', version: '1.0.0' })
    await client.connect(transport)
    const daemon = uniqueSleep()
    const main = uniqueSleep()
    const started = (await client.callTool({
      name: 'bash',
      arguments: {
        command: `setsid ${daemon.command} > /dev/null 2>&1 & ${main.command}`,
        description: 'bg',
        run_in_background: true,
      },
    })) as CallToolResult
    expect(started.content[0]).toMatchObject({
      type: 'text',
      text: expect.stringMatching(/^started background task bash-1/),
    })
    await until(
      () => processesWith(daemon.marker).length === 1 && processesWith(main.marker).length === 1,
      'both sleeps run',
    )
    const outsideWrite = (await client.callTool({
      name: 'bash',
      arguments: { command: `echo x > ${outside}/keep.txt`, description: 'w' },
    })) as CallToolResult
    expect(JSON.stringify(outsideWrite.content)).toContain('Read-only file system')
    await transport.close()
    expect(await transport.exited).toMatchObject({ code: 0, signal: null })
    await until(
      () => processesWith(daemon.marker).length === 0 && processesWith(main.marker).length === 0,
      'the namespace is gone',
    )
    expect(readFileSync(join(outside, 'keep.txt'), 'utf8')).toBe('original\n')
  })
})

test('the composition with sandbox: true loads bash-sandbox and workspace instead of bash-local', async () => {
  const host = await createDefaultContext({ sandbox: true })
  try {
    expect(host.plugins).toEqual([
      'tools',
      'system-prompt',
      'timeout-policy',
      'subprocess-local',
      'spill-local',
      'tasks-local',
      'bash-sandbox',
      'spill-policy',
      'workspace',
      'tool-bash',
      'tool-fs',
      'tool-fs-search',
    ])
    expect(host.ctx.workspace.roots('/').readOnly.length).toBe(1)
  } finally {
    await host.dispose()
  }
})
