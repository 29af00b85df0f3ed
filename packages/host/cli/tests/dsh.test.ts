import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { sessionFor } from '@deepseek-ai/dsh-testing'
import { createDefaultContext, type DefaultContext } from '../src/index.ts'
import { dsh, readsStdin, processesWith, startDsh, uniqueSleep, until, workspace } from './helpers.ts'

const FILES = {
  'package.json': '{ "name": "fixture" }\n',
  'src/a.ts': 'export const a = 1 // TODO: rename\n',
  'src/b.ts': 'export const b = 2\n// TODO: test b\n',
  'notes.txt': 'line one\nline two\n',
}

let host: DefaultContext
let ws: ReturnType<typeof workspace>

beforeAll(async () => {
  host = await createDefaultContext()
  ws = workspace(FILES)
})

afterAll(async () => {
  await host?.dispose()
  ws?.cleanup()
})

/** The text the in-process pipeline gives for the same call in the same directory. */
async function inProcess(tool: string, args: Record<string, unknown>, cwd: string): Promise<string> {
  const result = await host.ctx.tools.execute(tool, args, { session: sessionFor('in-process', cwd) })
  return result.content[0].text
}

function printed(text: string): string {
  return text.endsWith('\n') ? text : `${text}\n`
}

describe('dsh --help and --version', () => {
  test('print to stdout and exit 0, for the command and every subcommand', async () => {
    const version = await dsh(['--version'])
    expect(version).toMatchObject({ code: 0, stderr: '' })
    expect(version.stdout).toMatch(/^dsh \d+\.\d+\.\d+\n$/)
    for (const args of [
      ['--help'],
      ['-h'],
      ['help'],
      ['call', '--help'],
      ['tools', '--help'],
      ['prompt', '--help'],
      ['mcp', '--help'],
      ['call', 'grep', '--help'],
    ]) {
      const run = await dsh(args)
      expect(run, args.join(' ')).toMatchObject({ code: 0, stderr: '' })
      expect(run.stdout).toMatch(/Usage/)
    }
    expect((await dsh(['call', '--help'])).stdout).toMatch(
      /^Usage: dsh call <tool> \[<json-args>\] \[--cwd DIR\] \[--json\] \[--sandbox\] \[--config FILE\] \[--remote REMOTE\]\n/,
    )
    expect((await dsh(['mcp', '--version'])).stdout).toBe(version.stdout)
  })

  test('dsh --help names every tool dsh tools lists, and no other', async () => {
    const listed = (await dsh(['tools', '--json'])).stdout
    const names = (JSON.parse(listed) as { name: string }[]).map((tool) => tool.name).sort()
    expect(names).toContain('write')
    const line = (await dsh(['--help'])).stdout.split('\n').find((text) => text.startsWith('Tools: '))
    expect(line?.slice('Tools: '.length).split(', ').sort()).toEqual(names)
  })
})

describe('dsh call', () => {
  test('glob, grep and read print the same text as the in-process pipeline', async () => {
    const calls: [string, Record<string, unknown>][] = [
      ['glob', { pattern: '**/*.ts' }],
      ['glob', { pattern: '*.nothing' }],
      ['grep', { pattern: 'TODO' }],
      ['grep', { pattern: 'TODO', include: '*.ts', path: 'src' }],
      ['read', { path: 'notes.txt' }],
      ['read', { path: 'src/b.ts', offset: 2 }],
    ]
    for (const [tool, args] of calls) {
      const run = await dsh(['call', tool, JSON.stringify(args), '--cwd', ws.dir])
      expect(run, `${tool} ${JSON.stringify(args)}`).toEqual({
        code: 0,
        signal: null,
        stdout: printed(await inProcess(tool, args, ws.dir)),
        stderr: '',
      })
    }
  })

  test('without --cwd, relative paths resolve against the current directory', async () => {
    const run = await dsh(['call', 'read', '{"path":"notes.txt"}'], { cwd: ws.dir })
    expect(run.code).toBe(0)
    expect(run.stdout).toBe(printed(await inProcess('read', { path: 'notes.txt' }, ws.dir)))
  })

  test('--json prints one JSON line {text, isError, error}', async () => {
    const ok = await dsh(['call', 'glob', '{"pattern":"*.json"}', '--cwd', ws.dir, '--json'])
    expect(ok.code).toBe(0)
    expect(ok.stdout.endsWith('\n') && ok.stdout.indexOf('\n') === ok.stdout.length - 1).toBe(true)
    expect(JSON.parse(ok.stdout)).toEqual({ text: 'package.json', isError: false, error: null })
    const bad = await dsh(['call', 'glob', '{}', '--json', '--cwd', ws.dir])
    expect(bad.code).toBe(1)
    expect(JSON.parse(bad.stdout)).toEqual({
      text: 'Error: invalid arguments: missing required property "pattern"',
      isError: true,
      error: {
        message: 'invalid arguments: missing required property "pattern"',
        name: 'HarnessError',
        code: 'INVALID_ARGS',
      },
    })
  })

  test('arguments can come from stdin with "-"', async () => {
    const run = await dsh(['call', 'glob', '-', '--cwd', ws.dir], { input: '{"pattern":"*.txt"}' })
    expect(run).toMatchObject({ code: 0, stdout: 'notes.txt\n' })
    const bad = await dsh(['call', 'glob', '-'], { input: 'not json' })
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/^dsh: the arguments on stdin are not valid JSON/)
  })

  test('endless input (/dev/zero as stdin, --config or --token-file) is refused once past its bound, exit 2, instead of growing the process', async () => {
    const args = await dsh(['call', 'grep', '-'], { stdinFile: '/dev/zero' })
    expect(args).toMatchObject({ code: 2, stdout: '' })
    expect(args.stderr).toMatch(
      /^dsh: the arguments on stdin are longer than 16777216 bytes: pass one JSON object of at most that size\n/,
    )
    const config = await dsh(['call', 'glob', '{"pattern":"*"}', '--config', '/dev/zero'])
    expect(config).toMatchObject({ code: 2, stdout: '' })
    expect(config.stderr).toMatch(
      /^dsh: invalid --config \/dev\/zero: \/dev\/zero is longer than 1048576 bytes, more than any config needs\n/,
    )
    const token = await dsh([
      'call',
      'glob',
      '{"pattern":"*"}',
      '--remote',
      'http://127.0.0.1:1/mcp',
      '--token-file',
      '/dev/zero',
    ])
    expect(token).toMatchObject({ code: 2, stdout: '' })
    expect(token.stderr).toMatch(/^dsh: --token-file \/dev\/zero: longer than 65536 bytes, more than any token\n/)
  })

  test('an unknown tool is a tool error: exit 1, the error text, code UNKNOWN_TOOL', async () => {
    const run = await dsh(['call', 'nope'])
    expect(run.code).toBe(1)
    expect(run.stdout).toMatch(/^Error: unknown tool "nope" \(available: .*glob.*\)\n$/)
    expect(run.stderr).toBe('')
    const json = await dsh(['call', 'nope', '--json'])
    expect(JSON.parse(json.stdout).error.code).toBe('UNKNOWN_TOOL')
  })

  test('a tool error exits 1 and prints the error text', async () => {
    const run = await dsh(['call', 'read', '{"path":"missing.txt"}', '--cwd', ws.dir])
    expect(run.code).toBe(1)
    expect(run.stdout).toBe(printed(await inProcess('read', { path: 'missing.txt' }, ws.dir)))
    expect(run.stdout).toMatch(/^Error: /)
  })

  test('edit and write of an existing file work without an earlier read; --help says the guard is for model sessions', async () => {
    const files = workspace({ 'e.txt': 'alpha\nbeta\n', 'w.txt': 'old\n' })
    try {
      const edit = await dsh([
        'call',
        'edit',
        '{"path":"e.txt","old_string":"beta","new_string":"BETA"}',
        '--cwd',
        files.dir,
      ])
      expect(edit).toMatchObject({ code: 0, stderr: '' })
      expect(edit.stdout).toBe(`Updated ${files.dir}/e.txt: replaced 1 occurrence\n\n1: alpha\n2: BETA\n`)
      const write = await dsh(['call', 'write', '{"path":"w.txt","content":"new\\n"}', '--cwd', files.dir])
      expect([write.code, write.stdout]).toEqual([0, `Updated ${files.dir}/w.txt (1 line)\n`])
      // A model session (dsh mcp, the library) keeps the guard.
      expect(await inProcess('edit', { path: 'e.txt', old_string: 'alpha', new_string: 'A' }, files.dir)).toMatch(
        /^Error: edit refused: .* has not been read in this session/,
      )
    } finally {
      files.cleanup()
    }
    expect((await dsh(['call', '--help'])).stdout).toContain(
      'the guard that refuses a file not seen (FS_NOT_READ)\nor changed since (FS_STALE) applies to model sessions (dsh mcp)',
    )
  })

  test('--json carries the image of a read of a PNG as an image block; the text alone without it', async () => {
    const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(8)])
    writeFileSync(join(ws.dir, 'shot.png'), png)
    const run = await dsh(['call', 'read', '{"path":"shot.png"}', '--cwd', ws.dir, '--json'])
    expect(run.code).toBe(0)
    expect(JSON.parse(run.stdout)).toEqual({
      text: `Image ${join(ws.dir, 'shot.png')} (image/png, 16 bytes)`,
      isError: false,
      error: null,
      images: [{ type: 'image', data: png.toString('base64'), mimeType: 'image/png' }],
    })
    const plain = await dsh(['call', 'read', '{"path":"shot.png"}', '--cwd', ws.dir])
    expect(plain.stdout).toBe(`Image ${join(ws.dir, 'shot.png')} (image/png, 16 bytes)\n`)
  })

  test('malformed JSON arguments exit 2 with a message that shows what to type', async () => {
    const run = await dsh(['call', 'grep', '{pattern:TODO}'])
    expect(run.code).toBe(2)
    expect(run.stdout).toBe('')
    expect(run.stderr).toMatch(
      /^dsh: the arguments are not valid JSON \(.*\): pass one JSON object as one shell word, e\.g\. dsh call grep '\{"pattern":"TODO"\}'\nUsage: dsh call <tool> \[<json-args>\] \[--cwd DIR\] \[--json\] \[--sandbox\] \[--config FILE\] \[--remote REMOTE\]\nRun "dsh call --help" for details\.\n$/,
    )
    const array = await dsh(['call', 'grep', '["TODO"]'])
    expect(array.code).toBe(2)
    expect(array.stderr).toMatch(/^dsh: the arguments must be a JSON object, got an array/)
  })

  test('unknown flags, unknown commands and a missing command exit 2', async () => {
    for (const args of [['call', 'glob', '--verbose'], ['tools', '--cwd', '.'], ['frobnicate'], []]) {
      const run = await dsh(args)
      expect(run.code, args.join(' ')).toBe(2)
      expect(run.stdout).toBe('')
      expect(run.stderr).toMatch(/^dsh: .+\nUsage: .+\nRun "dsh( \w+)? --help" for details\.\n$/)
    }
    expect((await dsh(['call', 'glob', '--verbose'])).stderr).toMatch(
      /^dsh: unknown flag --verbose for "dsh call" \(flags: --cwd, --json, --config, --sandbox, --remote, --token-file, --token-env, --help\)\n/,
    )
  })

  test("a reader that goes away early (EPIPE) is not an error: dsh cleans up and exits with the call's code", async () => {
    const { child, exited } = startDsh(['call', 'glob', '{"pattern":"**/*"}', '--cwd', ws.dir])
    child.stdout.destroy()
    const run = await exited
    expect(run).toMatchObject({ code: 0, signal: null, stderr: '' })
  })

  test('--cwd must be an existing directory (exit 2)', async () => {
    const missing = await dsh(['call', 'glob', '{"pattern":"*"}', '--cwd', join(ws.dir, 'nope')])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toMatch(/^dsh: --cwd .*nope: no such directory\n/)
    const file = await dsh(['call', 'glob', '{"pattern":"*"}', '--cwd', join(ws.dir, 'notes.txt')])
    expect(file.code).toBe(2)
    expect(file.stderr).toMatch(/^dsh: --cwd .*notes\.txt: not a directory\n/)
  })

  test('an invalid --config exits 2 before anything runs, naming the key', async () => {
    const cases: [unknown, RegExp][] = [
      [{ 'tool-fs-serch': {} }, /unknown key "tool-fs-serch" \(known keys: tools, /],
      [
        { 'tool-fs-search': { globMaxResult: 3 } },
        /unknown key "tool-fs-search\.globMaxResult" \(known keys there: globMaxResults, /,
      ],
      [
        { 'tool-fs-search': { globMaxResults: -1 } },
        /invalid value at "tool-fs-search\.globMaxResults": expected number >= 1 but got -1/,
      ],
      [[], /the config must be a JSON object/],
    ]
    await Promise.all(
      cases.map(async ([config, message], index) => {
        const file = join(ws.dir, `config-${index}.json`)
        writeFileSync(file, JSON.stringify(config))
        for (const command of [['call', 'glob', '{"pattern":"*"}'], ['tools'], ['prompt'], ['mcp']]) {
          const run = await dsh([...command, '--config', file])
          expect(run.code, `${command[0]} ${JSON.stringify(config)}`).toBe(2)
          expect(run.stdout).toBe('')
          expect(run.stderr).toMatch(
            new RegExp(`^dsh: invalid --config ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: ${message.source}`),
          )
          expect(run.stderr).toContain(`Run "dsh ${command[0]} --help" for details.`)
        }
      }),
    )
    const missing = await dsh(['tools', '--config', join(ws.dir, 'absent.json')])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toMatch(/^dsh: invalid --config .*absent\.json: cannot read .*absent\.json: no such file\n/)
    writeFileSync(join(ws.dir, 'broken.json'), '{')
    const broken = await dsh(['tools', '--config', join(ws.dir, 'broken.json')])
    expect(broken.code).toBe(2)
    expect(broken.stderr).toMatch(/is not valid JSON/)
  })

  test('a valid --config changes what the plugins do', async () => {
    const file = join(ws.dir, 'small.json')
    writeFileSync(file, JSON.stringify({ 'tool-fs-search': { globMaxResults: 1 } }))
    const run = await dsh(['call', 'glob', '{"pattern":"**/*.ts"}', '--cwd', ws.dir, '--config', file])
    expect(run.code).toBe(0)
    // One of the two (glob lists newest first; both files were just written).
    expect(['src/a.ts', 'src/b.ts']).toContain(run.stdout.split('\n')[0])
    expect(run.stdout).toMatch(/Showing 1 of 2/)
  })
})

describe('dsh tools and dsh prompt', () => {
  test('tools --json lists every tool with its title, JSON Schema as inputSchema, and annotations', async () => {
    const run = await dsh(['tools', '--json'])
    expect(run.code).toBe(0)
    // Through JSON, as the schemas travel (TypeBox keeps symbol-keyed metadata on them in-process).
    const expected = host.ctx.tools.schemas().map((s) => ({
      name: s.name,
      title: s.title,
      description: s.description,
      inputSchema: s.parameters,
      annotations: s.annotations,
    }))
    expect(JSON.parse(run.stdout)).toEqual(JSON.parse(JSON.stringify(expected)))
  })

  test('every tool has a title and the approval hints of docs/seams.md#hosts, docs/model-surface.md#tools (read-only search and reads; destructive bash, bash_kill, write and edit)', async () => {
    const run = await dsh(['tools', '--json'])
    const tools = JSON.parse(run.stdout) as { name: string; title?: string; annotations?: unknown }[]
    const readOnly = { readOnlyHint: true, destructiveHint: false, openWorldHint: false }
    expect(Object.fromEntries(tools.map((tool) => [tool.name, tool.annotations]))).toEqual({
      apply_patch: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
      bash: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
      bash_input: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
      bash_kill: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
      bash_output: { ...readOnly, idempotentHint: false },
      edit: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
      glob: { ...readOnly, idempotentHint: true },
      grep: { ...readOnly, idempotentHint: true },
      read: { ...readOnly, idempotentHint: true },
      write: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    })
    for (const tool of tools) expect(tool.title, tool.name).toMatch(/^[A-Z][a-z]+( [a-z]+)+$/)
  })

  test('tools prints one line per tool, in name order', async () => {
    const run = await dsh(['tools'])
    expect(run.code).toBe(0)
    expect(
      run.stdout
        .trimEnd()
        .split('\n')
        .map((line) => line.split(' ')[0]),
    ).toEqual(host.ctx.tools.list().map((t) => t.name))
  })

  test('prompt prints the assembled system prompt, byte for byte the same on every run', async () => {
    const [first, second] = await Promise.all([dsh(['prompt']), dsh(['prompt'])])
    expect(first).toMatchObject({ code: 0, stderr: '' })
    expect(first.stdout).toBe(`${host.ctx.systemPrompt.assemble()}\n`)
    expect(second.stdout).toBe(first.stdout)
  })
})

describe('dsh call with bash', () => {
  test('bash, bash_output and bash_kill print the same text as in-process', async () => {
    const calls: [string, Record<string, unknown>, number][] = [
      ['bash', { command: 'echo out; echo err >&2; exit 3', description: 'mixed output' }, 0],
      ['bash', { command: 'pwd', description: 'where am I' }, 0],
      ['bash_output', { task_id: 'bash-7' }, 1],
      ['bash_kill', { task_id: 'bash-7' }, 1],
    ]
    for (const [tool, args, code] of calls) {
      const run = await dsh(['call', tool, JSON.stringify(args), '--cwd', ws.dir])
      expect(run.code, `${tool} ${JSON.stringify(args)}`).toBe(code)
      expect(run.stdout).toBe(printed(await inProcess(tool, args, ws.dir)))
    }
  })

  test('SIGINT aborts a running call: no process is left and the exit code is 130', async () => {
    const sleep = uniqueSleep()
    const { child, exited } = startDsh([
      'call',
      'bash',
      JSON.stringify({ command: sleep.command, description: 'wait' }),
      '--cwd',
      ws.dir,
    ])
    await until(() => processesWith(sleep.marker).length > 0, 'the sleep to start')
    child.kill('SIGINT')
    const run = await exited
    expect(run.code).toBe(130)
    expect(processesWith(sleep.marker)).toEqual([])
  })

  test('SIGINT while dsh call waits for its arguments on stdin exits 130 at once', async () => {
    const { child, exited } = startDsh(['call', 'glob', '-'])
    // Nothing is written to stdin, so the command waits. Signal it once it reads stdin (its handler is installed
    // before that; a SIGINT that came too early would kill it by the signal, which the assertion below catches).
    await until(() => readsStdin(child.pid!), 'dsh to read its stdin')
    child.kill('SIGINT')
    expect(await exited).toMatchObject({ code: 130, signal: null, stdout: '' })
  })

  test('a background task does not outlive dsh call, and stderr says so', async () => {
    const sleep = uniqueSleep()
    const run = await dsh([
      'call',
      'bash',
      JSON.stringify({ command: sleep.command, description: 'bg', run_in_background: true }),
      '--cwd',
      ws.dir,
    ])
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(/^started background task bash-1/)
    expect(run.stderr).toBe(
      'dsh: the background task ends when dsh call exits, which is now: a task lives as long as its session, and' +
        ' dsh call is a session of one call (run the command in the foreground, or use dsh mcp to keep tasks running)\n',
    )
    expect(processesWith(sleep.marker)).toEqual([])
    // A foreground bash call, and a background one that failed validation, say nothing of the kind.
    const foreground = await dsh(['call', 'bash', '{"command":"true","description":"fg"}', '--cwd', ws.dir])
    expect(foreground).toMatchObject({ code: 0, stderr: '' })
    const refused = await dsh(['call', 'bash', '{"command":"","run_in_background":true}', '--cwd', ws.dir])
    expect(refused).toMatchObject({ code: 1, stderr: '' })
  })
})
