import { spawn } from 'node:child_process'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { BIN, called, fakeHome, type FakeHome } from './fs-helpers.ts'

/*
 * Attack #6 (docs/security.md#boundary): `dsh mcp --http --sandbox`. A command (or anyone) who learns the token opens
 * a session of its own whose client root is `file:///`. That session must not get `/` as its root: every call is
 * refused (never widened). And the token file is hidden from the file tools of a regular session.
 */
const TOKEN = 'dsh-security-token-0123456789abcdef0123456789abcdef'
let h: FakeHome
let url: string
let stop: () => void
beforeAll(async () => {
  h = fakeHome()
  const tokenFile = join(h.work, '.dsh-token')
  writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 })
  const env = Object.fromEntries(
    Object.entries(h.env).filter((entry): entry is [string, string] => entry[1] !== undefined),
  )
  // No --cwd: the server's root is its own directory, the project.
  const child = spawn(process.execPath, [BIN, 'mcp', '--http', '--sandbox', '--port', '0', '--token-file', tokenFile], {
    cwd: h.work,
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  stop = () => child.kill('SIGTERM')
  let stderr = ''
  url = await new Promise<string>((resolve, reject) => {
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString()
      const match = /dsh mcp: listening on (http:\/\/\S+)\n/.exec(stderr)
      if (match) resolve(match[1]!)
    })
    child.on('close', (code) => reject(new Error(`dsh mcp --http exited ${code}: ${stderr}`)))
  })
}, 120_000)
afterAll(() => {
  stop?.()
  h?.cleanup()
})

async function client(roots?: string[]): Promise<Client> {
  const c = new Client({ name: 'attacker', version: '1.0.0' }, roots ? { capabilities: { roots: {} } } : {})
  if (roots) c.setRequestHandler(ListRootsRequestSchema, () => ({ roots: roots.map((uri) => ({ uri })) }))
  await c.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } }),
  )
  return c
}

const call = async (c: Client, name: string, args: Record<string, unknown>) =>
  called(await c.callTool({ name, arguments: args }))

test('attack #6: a second HTTP session claiming file:/// gets no root: read and bash are refused, nothing is written', async () => {
  const attacker = await client(['file:///'])
  try {
    const read = await call(attacker, 'read', { path: join(h.home, '.ssh/id_rsa') })
    expect(read).toMatchObject({ isError: true, code: 'WORKSPACE_ROOT_REFUSED' })
    expect(read.text).toContain(`only works inside the roots it was started with (${h.work})`)
    expect(read.text).not.toContain('CANARY')
    expect(await call(attacker, 'read', { path: '/etc/hostname' })).toMatchObject({
      isError: true,
      code: 'WORKSPACE_ROOT_REFUSED',
    })
    const marker = join(h.base, 'written-by-attacker')
    expect(await call(attacker, 'bash', { command: `touch ${marker}`, description: 'write outside' })).toMatchObject({
      isError: true,
      code: 'WORKSPACE_ROOT_REFUSED',
    })
    expect(existsSync(marker)).toBe(false)
  } finally {
    await attacker.close()
  }
}, 120_000)

test("attack #6: a client root inside the server's is taken; the token file is hidden from read, grep, glob and bash", async () => {
  const own = await client([`file://${join(h.work, 'src')}`])
  try {
    expect(await call(own, 'read', { path: 'a.ts' })).toMatchObject({ isError: false })
    const read = await call(own, 'read', { path: join(h.work, '.dsh-token') })
    expect(read).toMatchObject({ isError: true, code: 'WORKSPACE_HIDDEN' })
    expect(read.text).not.toContain(TOKEN)
  } finally {
    await own.close()
  }
  const plain = await client()
  try {
    expect(await call(plain, 'read', { path: '.dsh-token' })).toMatchObject({ isError: true, code: 'WORKSPACE_HIDDEN' })
    expect((await call(plain, 'grep', { pattern: TOKEN, include: '*' })).text).not.toContain('.dsh-token')
    expect((await call(plain, 'glob', { pattern: '**' })).text).not.toContain('.dsh-token')
    // bash too (the sandbox masks the workspace's hidden list): the command cannot read the token back.
    const cat = await call(plain, 'bash', {
      command: 'cat .dsh-token; grep -r dsh-security-token . ; echo done',
      description: 'Read the token',
    })
    expect(cat.text).not.toContain(TOKEN)
    expect(cat.text).toContain('done')
  } finally {
    await plain.close()
  }
}, 120_000)
