// Bundles the `dsh` command into dist/dsh.cjs (run after `tsc -b`; `npm run build` does both). Why: a cold start
// that loads ~260 ES modules from node_modules spends most of its time in the module loader, and the composition's
// argument validators can be compiled now instead of at every start. See
// docs/decisions/2026-12-01-bundled-cli-entry.md. Output, all git-ignored under dist/:
//   dsh.cjs             the entry: argument parsing, help, version (nothing else loads for those)
//   chunks/runtime-*    the composition and every plugin, with validators compiled ahead of time
//   chunks/mcp-*        the MCP host, on its own engine (only `dsh mcp` loads it)
//   chunks/mcp-sdk-*    the MCP SDK with zod (only `dsh mcp --http` and `--remote` load it)
//   chunks/dist-*       tools-remote (only `--remote` loads it)
//   chunks/ajv-*        ajv, for a schema the build did not see (a --config that changes a schema)
// Each is CommonJS, split in a stub (`X.cjs`, naming its code's content id) and its code (`X.code.cjs`) with the V8 code cache that the training
// runs of the finished bundle made for it (`X.code.cjs.v8`): see bin/load-bundle.cjs and
// docs/decisions/2026-12-01-code-cache.md.
import { spawn } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { build } from 'rolldown'
import { lazySdkValidator } from './lazy-sdk-validator.mjs'

const cli = join(dirname(fileURLToPath(import.meta.url)), '..')
const dist = join(cli, 'dist')
const generated = join(dist, 'generated')

/** The tools of the default composition, as the built packages register them. */
async function compositionTools() {
  const { createDefaultContext } = await import(pathToFileURL(join(dist, 'index.js')).href)
  const host = await createDefaultContext({ log: (line) => process.stderr.write(`${line}\n`) })
  try {
    return host.ctx.tools.list().map(({ name, parameters }) => ({ name, parameters }))
  } finally {
    await host.dispose()
  }
}

async function writeValidators() {
  // Internal module of @deepseek-ai/dsh-tools (not exported): the ahead-of-time side of its validation.
  const tools = dirname(fileURLToPath(import.meta.resolve('@deepseek-ai/dsh-tools')))
  const { precompileSchemas } = await import(pathToFileURL(join(tools, 'precompile.js')).href)
  const composed = await compositionTools()
  const modules = precompileSchemas(composed.map((tool) => tool.parameters))
  rmSync(generated, { recursive: true, force: true })
  mkdirSync(generated, { recursive: true })
  writeFileSync(join(generated, 'validators.cjs'), modules.validatorsCjs)
  writeFileSync(join(generated, 'precompiled.mjs'), modules.precompiledEsm('./validators.cjs'))
  return { tools, precompiled: join(generated, 'precompiled.mjs'), names: composed.map((tool) => tool.name) }
}

// The MCP host and the MCP SDK are separate chunks: `dsh mcp` on stdio runs on the host's own engine and never
// loads the SDK (with its zod schemas); HTTP mode and `--remote` do (docs/decisions/2026-12-01-own-mcp-server-engine.md).
const MCP = /[\\/]packages[\\/]host[\\/]mcp[\\/]/
const MCP_SDK = /[\\/]node_modules[\\/](@modelcontextprotocol|zod|zod-to-json-schema)[\\/]/
// tools-remote (only `--remote` loads it) stays out of the groups: in the runtime group it would make that chunk
// import the SDK's; in the mcp group it would pull the core it imports into that chunk. Its own chunk it is.
const REMOTE = /[\\/]packages[\\/]remote[\\/]tools-remote[\\/]/
const AJV = /[\\/]node_modules[\\/](ajv|ajv-formats|fast-deep-equal|fast-uri|json-schema-traverse)[\\/]/
const ENTRY = /[\\/]packages[\\/]host[\\/]cli[\\/]dist[\\/](bin|main|args|help|tool-names)\.js$/
// ajv's run-time helpers (string length, deep equality) are what the precompiled validators need: not all of ajv.
const AJV_RUNTIME = /[\\/]node_modules[\\/](ajv[\\/]dist[\\/]runtime[\\/](ucs2length|equal)\.js$|fast-deep-equal[\\/])/

// The bundle runs from V8 code caches, and Node 20 loses the dynamic-import callback of cached code: the one module
// that imports at run time (the packaged ripgrep) calls the loader's import instead (bin/load-bundle.cjs).
const RIPGREP_LOCATOR = /[\\/]packages[\\/]fs[\\/]tool-fs-search[\\/]dist[\\/]ripgrep\.js$/
const importOutsideCache = {
  name: 'dsh-import-outside-cache',
  transform(code, id) {
    if (!RIPGREP_LOCATOR.test(id)) return null
    const calls = code.split('return import(').length - 1
    if (calls !== 2)
      throw new Error(`${id} changed: expected 2 dynamic imports to route through the loader, found ${calls}`)
    return code.replaceAll('return import(', 'return __dshImport(')
  },
}

async function bundle({ tools, precompiled, names }) {
  const toolNames = join(dist, 'tool-names.js')
  rmSync(join(dist, 'chunks'), { recursive: true, force: true })
  for (const name of readdirSync(dist)) if (/^dsh\./.test(name)) rmSync(join(dist, name))
  const toolsDist = `${tools}/`
  await build({
    input: { dsh: join(dist, 'bin.js') },
    platform: 'node',
    // The packaged ripgrep finds its binary next to its own module: it must stay a real package.
    external: ['@vscode/ripgrep'],
    logLevel: 'warn',
    onLog(level, log, handler) {
      if (log.code === 'INEFFECTIVE_DYNAMIC_IMPORT') return // a lazy import that another chunk also makes eagerly
      if (log.code === 'SOURCEMAP_BROKEN' && [lazySdkValidator.name, importOutsideCache.name].includes(log.plugin))
        return // lines shift in that one file
      handler(level, log)
    },
    plugins: [
      lazySdkValidator,
      importOutsideCache,
      {
        name: 'dsh-precompiled-validators',
        resolveId(source, importer) {
          if (source === './precompiled.js' && importer?.startsWith(toolsDist)) return precompiled
          return null
        },
      },
      {
        // `dsh --help` names every tool the composition registers, without loading one.
        name: 'dsh-tool-names',
        load(id) {
          return id === toolNames ? `export const TOOL_NAMES = ${JSON.stringify(names)}\n` : null
        },
      },
    ],
    output: {
      dir: dist,
      format: 'cjs',
      entryFileNames: '[name].cjs',
      chunkFileNames: 'chunks/[name]-[hash].cjs',
      sourcemap: true,
      codeSplitting: {
        groups: [
          // A group also takes the dependencies of what it matches, so the highest priority goes to the narrowest.
          { name: 'runtime', test: AJV_RUNTIME, priority: 5 },
          { name: 'ajv', test: AJV, priority: 4 },
          { name: 'mcp-sdk', test: MCP_SDK, priority: 3 },
          { name: 'mcp', test: MCP, priority: 1 },
          // Above the mcp group, which would otherwise take the core both use (sessions) and make `dsh call` load it.
          {
            name: 'runtime',
            test: (id) => ![ENTRY, REMOTE, MCP, MCP_SDK].some((pattern) => pattern.test(id)),
            priority: 2,
          },
        ],
      },
    },
  })
}

/** Every file of the bundle becomes a stub that runs its code through bin/load-bundle.cjs. */
function splitStubs() {
  const loader = join(cli, 'bin', 'load-bundle.cjs')
  const files = [
    'dsh.cjs',
    ...readdirSync(join(dist, 'chunks'))
      .filter((name) => name.endsWith('.cjs'))
      .map((name) => `chunks/${name}`),
  ]
  for (const name of files) {
    const stub = join(dist, name)
    const code = stub.replace(/\.cjs$/, '.code.cjs')
    renameSync(stub, code)
    const from = relative(dirname(stub), loader)
    // The code's content id: the loader trusts a cache stamped with it (mtimes do not survive npm pack).
    const id = createHash('sha256').update(readFileSync(code)).digest('hex').slice(0, 32)
    writeFileSync(
      stub,
      `#!/usr/bin/env node\n'use strict'\nrequire(${JSON.stringify(from)}).load(module, require, __filename, '${id}')\n`,
    )
  }
}

// What the training run does: start, list, call each tool. What it compiles is what the caches hold; the rest is
// compiled on first use, as without a cache.
const INITIALIZE = {
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'dsh-build', version: '0' } },
}
const CALLS = [
  ['glob', { pattern: '*' }],
  ['grep', { pattern: 'x' }],
  ['read', { path: 'a.txt' }],
  ['bash', { command: 'true', description: 'Do nothing' }],
]

/**
 * Runs the finished bundle as clients would, with DSH_BUILD_CODE_CACHE=1, so that each run writes the caches of what
 * it loaded: `dsh mcp --http` first (the only run that loads the MCP SDK's chunk), then a `dsh mcp` session on
 * stdio, which loads every chunk a `dsh call` loads too and calls each tool: its caches of the shared chunks are
 * the ones kept.
 */
async function train() {
  const project = mkdtempSync(join(tmpdir(), 'dsh-build-'))
  try {
    writeFileSync(join(project, 'a.txt'), 'x\n')
    const env = { ...process.env, DSH_BUILD_CODE_CACHE: '1' }
    await trainHttp(project, env)
    await trainMcp(project, env)
  } finally {
    rmSync(project, { recursive: true, force: true })
  }
}

/** `dsh mcp --http` on a free loopback port: initialize and list over HTTP, then SIGTERM (a clean exit). */
function trainHttp(project, env) {
  const token = randomBytes(32).toString('hex') // dsh mcp --http serves with no shorter token
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [join(dist, 'dsh.cjs'), 'mcp', '--http', '--port', '0', '--token-env', 'DSH_BUILD_TOKEN', '--cwd', project],
      { cwd: project, env: { ...env, DSH_BUILD_TOKEN: token }, stdio: ['ignore', 'ignore', 'pipe'] },
    )
    let stderr = ''
    let asked = false
    child.stderr.setEncoding('utf8').on('data', async (chunk) => {
      stderr += chunk
      const url = /listening on (\S+)/.exec(stderr)?.[1]
      if (url === undefined || asked) return
      asked = true
      try {
        const headers = {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        }
        const first = await fetch(url, {
          method: 'POST',
          headers,
          body: JSON.stringify({ jsonrpc: '2.0', ...INITIALIZE }),
        })
        await first.text()
        const session = first.headers.get('mcp-session-id')
        const list = await fetch(url, {
          method: 'POST',
          headers: { ...headers, ...(session ? { 'mcp-session-id': session } : {}) },
          body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
        })
        await list.text()
        if (!first.ok || !list.ok) throw new Error(`answered ${first.status} and ${list.status}`)
      } catch (error) {
        reject(new Error(`training run dsh mcp --http: ${error.message}`))
      }
      child.kill('SIGTERM')
    })
    child.once('error', reject)
    child.once('close', (code) =>
      asked && code === 0 ? resolve() : reject(new Error(`training run dsh mcp --http exited ${code}: ${stderr}`)),
    )
  })
}

/** `dsh mcp`: initialize, list, one call of each tool; stdin ends (and the server with it) once all are answered. */
function trainMcp(project, env) {
  const requests = [
    { method: 'tools/list' },
    ...CALLS.map(([name, args]) => ({ method: 'tools/call', params: { name, arguments: args } })),
  ]
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(dist, 'dsh.cjs'), 'mcp', '--cwd', project], {
      cwd: project,
      env,
      stdio: ['pipe', 'pipe', 'inherit'],
    })
    const send = (message) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`)
    let answers = 0
    let buffered = ''
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      buffered += chunk
      for (let at = buffered.indexOf('\n'); at !== -1; at = buffered.indexOf('\n')) {
        const line = buffered.slice(0, at)
        buffered = buffered.slice(at + 1)
        if (!('id' in JSON.parse(line))) continue
        if (++answers === 1) {
          send({ method: 'notifications/initialized' })
          for (const [i, request] of requests.entries()) send({ id: 2 + i, ...request })
        } else if (answers === requests.length + 1) child.stdin.end()
      }
    })
    child.once('error', reject)
    child.once('close', (code) =>
      answers === requests.length + 1
        ? resolve()
        : reject(new Error(`training run dsh mcp exited ${code} after ${answers} answers`)),
    )
    send(INITIALIZE)
  })
}

const started = performance.now()
await bundle(await writeValidators())
splitStubs()
await train()
process.stderr.write(`bundled dist/dsh.cjs in ${Math.round(performance.now() - started)} ms\n`)
