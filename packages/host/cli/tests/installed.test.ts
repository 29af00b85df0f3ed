import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { ROOT, installedDsh, workspace, type Installed, type Run } from './helpers.ts'

// docs/model-surface.md#errors: the packed `dsh` installs with npm alone into an empty prefix (no clone, no build, no workspace
// packages), carries the packaged ripgrep as its one dependency, lands on the PATH, and serves every tool to the
// MCP SDK's client and to the Inspector from there.

const MANIFEST = JSON.parse(readFileSync(join(ROOT, 'packages/host/cli/package.json'), 'utf8')) as {
  name: string
  version: string
}
const require = createRequire(import.meta.url)
const INSPECTOR_DIR = dirname(require.resolve('@modelcontextprotocol/inspector/package.json'))
const INSPECTOR = join(
  INSPECTOR_DIR,
  (JSON.parse(readFileSync(join(INSPECTOR_DIR, 'package.json'), 'utf8')) as { bin: Record<string, string> }).bin[
    'mcp-inspector'
  ]!,
)

let installed: Installed
let ws: ReturnType<typeof workspace>
let state: string
/** A PATH with the prefix's bin first, then node's folder and the system's: `dsh` is the installed one. */
let env: Record<string, string>

beforeAll(() => {
  installed = installedDsh()
  console.log(
    `installed ${installed.tarball} (${(installed.tarballBytes / 1e6).toFixed(2)} MB) in ${installed.installMs} ms`,
  )
  ws = workspace({ 'src/a.ts': 'export const a = 1 // TODO: rename\n', 'notes.txt': 'one\ntwo\nthree\n' })
  state = mkdtempSync(join(tmpdir(), 'dsh-installed-inspector-'))
  env = { PATH: [installed.binDir, dirname(process.execPath), '/usr/bin', '/bin'].join(':'), HOME: state }
}, 180_000)
afterAll(() => {
  ws?.cleanup()
  if (state) rmSync(state, { recursive: true, force: true })
})

function run(command: string, args: readonly string[], extraEnv: Record<string, string> = {}): Promise<Run> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { cwd: ws.dir, env: { ...env, ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk
    })
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk
    })
    child.on('error', fail)
    child.on('close', (code, signal) => done({ code, signal, stdout, stderr }))
  })
}

describe('the packed package', () => {
  test('the tarball holds the bundle, the shim and the manifest, and names @vscode/ripgrep as its one dependency', () => {
    const listed = execFileSync('tar', ['-tzf', installed.tarball], { encoding: 'utf8' }).trim().split('\n').sort()
    expect(listed).toContain('package/bin/dsh.js')
    expect(listed).toContain('package/bin/load-bundle.cjs')
    expect(listed).toContain('package/dist/dsh.cjs')
    expect(
      listed.filter(
        (path) =>
          !/^package\/(bin\/(dsh\.js|load-bundle\.cjs|package\.json)|dist\/((dsh|chunks\/[\w-]+)\.(cjs|code\.cjs|code\.cjs\.v8)|ripgrep-digests\.json)|package\.json|README\.md)$/.test(
            path,
          ),
      ),
    ).toEqual([])
    const manifest = JSON.parse(
      execFileSync('tar', ['-xzOf', installed.tarball, 'package/package.json'], { encoding: 'utf8' }),
    ) as Record<string, unknown>
    expect(manifest.name).toBe(MANIFEST.name)
    expect(manifest.dependencies).toEqual({ '@vscode/ripgrep': expect.any(String) })
    expect(manifest.scripts).toBeUndefined()
  })

  test('npm install -g puts dsh on the PATH, with ripgrep and its platform package and no workspace package', async () => {
    const home = join(installed.prefix, 'lib/node_modules', MANIFEST.name)
    expect(readdirSync(join(home, 'node_modules')).sort()).toEqual(['@vscode'])
    expect(readdirSync(join(home, 'node_modules/@vscode')).sort()).toEqual([
      'ripgrep',
      `ripgrep-${process.platform}-${process.arch}`,
    ])
    expect(existsSync(join(installed.prefix, 'lib/node_modules/@deepseek-ai'))).toBe(false)
    const version = await run('dsh', ['--version'])
    expect(version).toMatchObject({ code: 0, stdout: `dsh ${MANIFEST.version}\n`, stderr: '' })
    const which = await run('sh', ['-c', 'command -v dsh'])
    expect(which.stdout).toBe(`${installed.bin}\n`)
  })

  test('dsh call grep runs the packaged ripgrep of the installed copy', async () => {
    const grep = await run('dsh', ['call', 'grep', '{"pattern":"TODO"}'])
    expect(grep).toMatchObject({
      code: 0,
      stdout: 'Found 1 match\n\nsrc/a.ts\nLine 1: export const a = 1 // TODO: rename\n',
      stderr: '',
    })
  })
})

describe('the README', () => {
  test('installs the tarball this package packs, and its first section says so', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
    const install = readme.slice(
      readme.indexOf('## Install\n'),
      readme.indexOf('\n## ', readme.indexOf('## Install\n') + 1),
    )
    expect(readme.indexOf('## Install\n')).toBe(readme.indexOf('\n## ') + 1)
    expect(install).toContain(`$ npm install -g ./${installed.tarball.split('/').at(-1)}`)
    expect(install).toContain(`dsh ${MANIFEST.version}\n`)
    // The remote recipes install the same tarball there.
    expect(readme).toContain(`ssh build-box npm install -g ./${installed.tarball.split('/').at(-1)}`)
  })
})

describe('the installed dsh mcp', () => {
  test('the MCP SDK client lists the ten tools, and every one answers', async () => {
    const client = new Client({ name: 'installed-test', version: '1' })
    await client.connect(
      new StdioClientTransport({ command: 'dsh', args: ['mcp', '--cwd', ws.dir], cwd: ws.dir, env, stderr: 'pipe' }),
    )
    try {
      const { tools } = await client.listTools()
      expect(tools.map((tool) => tool.name).sort()).toEqual([
        'apply_patch',
        'bash',
        'bash_input',
        'bash_kill',
        'bash_output',
        'edit',
        'glob',
        'grep',
        'read',
        'write',
      ])
      const text = async (name: string, args: Record<string, unknown>) => {
        const result = (await client.callTool({ name, arguments: args })) as {
          content: { text: string }[]
          isError?: boolean
        }
        return { text: result.content[0]!.text, isError: result.isError ?? false }
      }
      expect(await text('glob', { pattern: '**/*.ts' })).toEqual({ text: 'src/a.ts', isError: false })
      expect(await text('grep', { pattern: 'TODO' })).toEqual({
        text: 'Found 1 match\n\nsrc/a.ts\nLine 1: export const a = 1 // TODO: rename',
        isError: false,
      })
      expect((await text('read', { path: 'notes.txt' })).text).toMatch(/^1: one\n2: two\n3: three\n/)
      expect(await text('bash', { command: 'echo "$PWD"', description: 'Print the directory' })).toEqual({
        text: ws.dir,
        isError: false,
      })
      expect(await text('write', { path: 'made.txt', content: 'one\ntwo\n' })).toEqual({
        text: `Created ${join(ws.dir, 'made.txt')} (2 lines)`,
        isError: false,
      })
      expect((await text('edit', { path: 'made.txt', old_string: 'two', new_string: 'deux' })).text).toContain(
        `Updated ${join(ws.dir, 'made.txt')}: replaced 1 occurrence`,
      )
      expect(readFileSync(join(ws.dir, 'made.txt'), 'utf8')).toBe('one\ndeux\n')
      const patched = await text('apply_patch', {
        patch: '*** Begin Patch\n*** Update File: made.txt\n@@\n one\n-deux\n+two\n*** End Patch',
      })
      expect(patched).toEqual({
        text: `Applied the patch: 1 file changed\n\nUpdated ${join(ws.dir, 'made.txt')}\n1: one\n2: two`,
        isError: false,
      })
      const started = await text('bash', { command: 'sleep 30', description: 'Wait', run_in_background: true })
      const id = /background task (\S+)/.exec(started.text)?.[1]
      expect(id, started.text).toBeDefined()
      expect((await text('bash_output', { task_id: id })).isError).toBe(false)
      expect((await text('bash_kill', { task_id: id })).isError).toBe(false)
      const cat = /task (bash-\d+)/.exec(
        (await text('bash', { command: 'cat', description: 'Echo', run_in_background: true, interactive: true })).text,
      )?.[1]
      expect(await text('bash_input', { task_id: cat, text: 'hi\n', wait_for: 'hi\\n(.|\\n)*hi' })).toEqual({
        text: 'hi\nhi\n[wait_for matched]\n[status: running]',
        isError: false,
      })
    } finally {
      await client.close()
    }
  })

  test('the Inspector CLI lists the tools and gets an answer from every one', async () => {
    const inspect = (args: readonly string[]) =>
      run(process.execPath, [INSPECTOR, '--cli', '--format', 'json', ...args, 'dsh', 'mcp', '--cwd', ws.dir], {
        MCP_CATALOG_PATH: join(state, 'mcp.json'),
        MCP_CLIENT_CONFIG_PATH: join(state, 'client.json'),
      })
    const list = await inspect(['--method', 'tools/list'])
    expect(list.code, list.stderr).toBe(0)
    const names = (JSON.parse(list.stdout) as { result: { tools: { name: string }[] } }).result.tools.map(
      (tool) => tool.name,
    )
    expect(names.sort()).toEqual([
      'apply_patch',
      'bash',
      'bash_input',
      'bash_kill',
      'bash_output',
      'edit',
      'glob',
      'grep',
      'read',
      'write',
    ])
    const calls: [string, Record<string, unknown>, number][] = [
      ['glob', { pattern: '**/*.ts' }, 0],
      ['grep', { pattern: 'TODO' }, 0],
      ['read', { path: 'notes.txt' }, 0],
      ['bash', { command: 'echo hi', description: 'Say hi' }, 0],
      ['write', { path: 'inspected.txt', content: 'x\n' }, 0],
      // A fresh server has seen no file: an edit of one is FS_NOT_READ (an error result, exit 5).
      ['edit', { path: 'notes.txt', old_string: 'one', new_string: 'uno' }, 5],
      ['apply_patch', { patch: '*** Begin Patch\n*** Delete File: notes.txt\n*** End Patch' }, 5],
      // Every Inspector run is a fresh server: no task exists in it, and the answer says so (an error result, exit 5).
      ['bash_output', { task_id: 'bash-1' }, 5],
      ['bash_kill', { task_id: 'bash-1' }, 5],
      ['bash_input', { task_id: 'bash-1', text: 'x' }, 5],
    ]
    for (const [name, args, exit] of calls) {
      const call = await inspect([
        '--method',
        'tools/call',
        '--tool-name',
        name,
        '--tool-args-json',
        JSON.stringify(args),
      ])
      expect(call.code, `${name}: ${call.stderr}`).toBe(exit)
      const result = (JSON.parse(call.stdout) as { result: { content: { text: string }[] } }).result
      expect(result.content[0]!.text.length, name).toBeGreaterThan(0)
    }
  })
})
