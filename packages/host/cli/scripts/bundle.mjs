// Bundles the `dsh` command into dist/dsh.mjs (run after `tsc -b`; `npm run build` does both). Why: a cold start
// that loads ~260 ES modules from node_modules spends most of its time in the module loader, and the composition's
// argument validators can be compiled now instead of at every start. See
// docs/decisions/2026-12-01-bundled-cli-entry.md. Output, all git-ignored under dist/:
//   dsh.mjs             the entry: argument parsing, help, version (nothing else loads for those)
//   chunks/runtime-*    the composition and every plugin, with validators compiled ahead of time
//   chunks/mcp-*        the MCP SDK and host (only `dsh mcp` and `--remote` load it)
//   chunks/dist-*       tools-remote (only `--remote` loads it)
//   chunks/ajv-*        ajv, for a schema the build did not see (a --config that changes a schema)
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { build } from 'rolldown'
import { lazySdkValidator } from './lazy-sdk-validator.mjs'

const cli = join(dirname(fileURLToPath(import.meta.url)), '..')
const dist = join(cli, 'dist')
const generated = join(dist, 'generated')

/** The parameter schemas of the default composition, as the built packages produce them. */
async function compositionSchemas() {
  const { createDefaultContext } = await import(pathToFileURL(join(dist, 'index.js')).href)
  const host = await createDefaultContext({ log: (line) => process.stderr.write(`${line}\n`) })
  try {
    return host.ctx.tools.list().map((definition) => definition.parameters)
  } finally {
    await host.dispose()
  }
}

async function writeValidators() {
  // Internal module of @deepseek-ai/dsh-tools (not exported): the ahead-of-time side of its validation.
  const tools = dirname(fileURLToPath(import.meta.resolve('@deepseek-ai/dsh-tools')))
  const { precompileSchemas } = await import(pathToFileURL(join(tools, 'precompile.js')).href)
  const modules = precompileSchemas(await compositionSchemas())
  rmSync(generated, { recursive: true, force: true })
  mkdirSync(generated, { recursive: true })
  writeFileSync(join(generated, 'validators.cjs'), modules.validatorsCjs)
  writeFileSync(join(generated, 'precompiled.mjs'), modules.precompiledEsm('./validators.cjs'))
  return { tools, precompiled: join(generated, 'precompiled.mjs') }
}

const MCP = /[\\/]node_modules[\\/](@modelcontextprotocol|zod|zod-to-json-schema)[\\/]|[\\/]packages[\\/]host[\\/]mcp[\\/]/
// tools-remote (only `--remote` loads it) stays out of the groups: in the runtime group it would make that chunk
// import the SDK's; in the mcp group it would pull the core it imports into that chunk. Its own chunk it is.
const REMOTE = /[\\/]packages[\\/]remote[\\/]tools-remote[\\/]/
const AJV = /[\\/]node_modules[\\/](ajv|ajv-formats|fast-deep-equal|fast-uri|json-schema-traverse)[\\/]/
const ENTRY = /[\\/]packages[\\/]host[\\/]cli[\\/]dist[\\/](bin|main|args|help)\.js$/
// ajv's run-time helpers (string length, deep equality) are what the precompiled validators need: not all of ajv.
const AJV_RUNTIME = /[\\/]node_modules[\\/](ajv[\\/]dist[\\/]runtime[\\/](ucs2length|equal)\.js$|fast-deep-equal[\\/])/

async function bundle({ tools, precompiled }) {
  rmSync(join(dist, 'chunks'), { recursive: true, force: true })
  const toolsDist = `${tools}/`
  await build({
    input: { dsh: join(dist, 'bin.js') },
    platform: 'node',
    // The packaged ripgrep finds its binary next to its own module: it must stay a real package.
    external: ['@vscode/ripgrep'],
    logLevel: 'warn',
    onLog(level, log, handler) {
      if (log.code === 'INEFFECTIVE_DYNAMIC_IMPORT') return // a lazy import that another chunk also makes eagerly
      if (log.code === 'SOURCEMAP_BROKEN' && log.plugin === lazySdkValidator.name) return // lines shift in that one file
      handler(level, log)
    },
    plugins: [lazySdkValidator, {
      name: 'dsh-precompiled-validators',
      resolveId(source, importer) {
        if (source === './precompiled.js' && importer?.startsWith(toolsDist)) return precompiled
        return null
      },
    }],
    output: {
      dir: dist,
      format: 'esm',
      entryFileNames: '[name].mjs',
      chunkFileNames: 'chunks/[name]-[hash].mjs',
      sourcemap: true,
      codeSplitting: {
        groups: [
          // A group also takes the dependencies of what it matches, so the highest priority goes to the narrowest.
          { name: 'runtime', test: AJV_RUNTIME, priority: 4 },
          { name: 'ajv', test: AJV, priority: 3 },
          { name: 'mcp', test: MCP, priority: 2 },
          { name: 'runtime', test: (id) => !ENTRY.test(id) && !REMOTE.test(id), priority: 1 },
        ],
      },
    },
  })
}

const started = performance.now()
await bundle(await writeValidators())
process.stderr.write(`bundled dist/dsh.mjs in ${Math.round(performance.now() - started)} ms\n`)
