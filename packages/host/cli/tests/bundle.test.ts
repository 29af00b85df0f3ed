import {
  appendFileSync,
  cpSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { Ajv, type ValidateFunction } from 'ajv'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from 'vitest'
import type { JsonSchema } from '@deepseek-ai/dsh-tools'
import { AJV_OPTIONS } from '../../../core/tools/src/validation.ts'
import { createDefaultContext } from '../src/index.ts'
import { ROOT, dsh, type Run, workspace } from './helpers.ts'
// @ts-expect-error: a plain-JS build script, without declarations
import { lazySdkValidator } from '../scripts/lazy-sdk-validator.mjs'

// The shipped `dsh` is a bundle (scripts/bundle.mjs) whose argument validators were compiled at build time. These
// tests hold it to the same contract as the packages it was made of, and check that it loads only what it uses.

const DIST = join(ROOT, 'packages/host/cli/dist')
let schemas: { name: string; parameters: JsonSchema }[]
let precompiled: ReadonlyMap<string, ValidateFunction>
let ws: ReturnType<typeof workspace>

beforeAll(async () => {
  const host = await createDefaultContext()
  schemas = host.ctx.tools.list().map(({ name, parameters }) => ({ name, parameters }))
  await host.dispose()
  const generated = (await import(pathToFileURL(join(DIST, 'generated/precompiled.mjs')).href)) as {
    precompiledValidators: ReadonlyMap<string, ValidateFunction>
  }
  precompiled = generated.precompiledValidators
  ws = workspace({ 'notes.txt': 'one\ntwo\n', 'package.json': '{}\n' })
})

afterAll(() => ws?.cleanup())

/** Runs the bundle with the module loader's debug log on; resolves with the files it loaded from dist/. */
async function loadedFiles(
  args: readonly string[],
  input = '',
  nodeArgs: readonly string[] = [],
): Promise<Run & { files: string[]; ajv: boolean }> {
  const run = await dsh(args, { cwd: ws.dir, input, nodeArgs, env: { ...process.env, NODE_DEBUG: 'module' } })
  const prefix = `${DIST}/`
  // The bundle is CommonJS: its stubs are loaded by require, which the debug log names (their code is read by
  // bin/load-bundle.cjs). ajv is CommonJS too, bundled or not.
  const files = [...run.stderr.matchAll(/load "([^"]+)"/g)]
    .map((m) => m[1]!)
    .filter((path) => path.startsWith(prefix))
    .map((path) => path.slice(prefix.length).replace(/-[\w-]{8}\.cjs$/, '-*.cjs'))
  const ajv = /[\\/]node_modules[\\/]ajv[\\/]/.test(run.stderr) || files.some((file) => file.startsWith('chunks/ajv-'))
  return { ...run, files: [...new Set(files)].sort(), ajv }
}

describe('validators compiled at build time', () => {
  test('the bundle holds one for the schema of every tool in the default composition', () => {
    expect(schemas.length).toBeGreaterThan(0)
    for (const { name, parameters } of schemas) {
      expect(precompiled.has(JSON.stringify(parameters)), `no precompiled validator for ${name}`).toBe(true)
    }
  })

  test('they judge any arguments exactly as ajv does at run time: same verdict, same errors', () => {
    const ajv = new Ajv(AJV_OPTIONS)
    for (const { parameters } of schemas) {
      const runtime = ajv.compile(parameters)
      const ahead = precompiled.get(JSON.stringify(parameters))!
      const names = Object.keys((parameters.properties ?? {}) as Record<string, unknown>)
      const key = fc.oneof(fc.constantFrom(...names), fc.string({ maxLength: 8 }))
      const value = fc.oneof(
        fc.jsonValue(),
        fc.string(),
        fc.integer({ min: -5, max: 5 }),
        fc.boolean(),
        fc.constant(''),
      )
      const args = fc.oneof(fc.dictionary(key, value, { maxKeys: 6 }), fc.jsonValue())
      fc.assert(
        fc.property(args, (input) => {
          const verdict = runtime(input)
          expect(ahead(input)).toBe(verdict)
          expect(ahead.errors ?? null).toEqual(runtime.errors ?? null)
        }),
        { numRuns: 300 },
      )
    }
  })
})

describe('what a command loads', () => {
  test('dsh call loads the entry and the runtime chunks only: neither ajv nor the MCP SDK', async () => {
    const run = await loadedFiles(['call', 'glob', '{"pattern":"*.json"}'])
    expect(run.stdout).toBe('package.json\n')
    expect(run.files).toEqual(['chunks/rolldown-runtime-*.cjs', 'chunks/runtime-*.cjs', 'dsh.cjs'])
    expect(run.ajv).toBe(false)
    // Nor worker_threads (2–4 ms): the wait_for pattern tester loads it on the first wait with a pattern.
    expect(run.stderr).not.toContain('load built-in module node:worker_threads')
    expect(run.stderr).toContain('load built-in module node:child_process')
  })

  test("invalid arguments are judged by the precompiled validator, with the pipeline's own text", async () => {
    const run = await loadedFiles(['call', 'read', '{"path":"notes.txt","limit":0,"extra":1}'])
    expect(run.code).toBe(1)
    expect(run.stdout).toBe('Error: invalid arguments: unexpected property "extra"; property "limit" must be >= 1\n')
    expect(run.ajv).toBe(false)
  })

  test('a schema the build did not see (a --config that changes it) is compiled by ajv, loaded then', async () => {
    writeFileSync(join(ws.dir, 'config.json'), JSON.stringify({ 'tool-fs': { maxLines: 50 } }))
    const run = await loadedFiles([
      'call',
      'read',
      '{"path":"notes.txt","limit":0}',
      '--config',
      join(ws.dir, 'config.json'),
    ])
    expect(run.code).toBe(1)
    expect(run.stdout).toBe('Error: invalid arguments: property "limit" must be >= 1\n')
    expect(run.ajv).toBe(true)
    expect(run.files).not.toContain('chunks/mcp-*.cjs')
  })

  test('the committed shim bin/dsh.js (the command npm links) runs the bundle as CommonJS, starting no ES module loader', async () => {
    const shim = join(ROOT, 'packages/host/cli/bin/dsh.js')
    const run = await dsh(['--version'], { cwd: ws.dir, bin: shim, env: { ...process.env, NODE_DEBUG: 'module' } })
    expect(run.stdout).toMatch(/^dsh \d+\.\d+\.\d+\n$/)
    // Node's CommonJS loader names the main module "."; an ES module entry is not loaded by it at all.
    expect(run.stderr).toContain(`load ${JSON.stringify(shim)} for module "."`)
  })

  test('dsh --version loads the entry alone', async () => {
    const run = await loadedFiles(['--version'])
    expect(run.stdout).toMatch(/^dsh \d+\.\d+\.\d+\n$/)
    expect(run.files).toEqual(['dsh.cjs'])
  })

  test("dsh mcp loads the MCP host's chunk, not the SDK's, and no ajv", async () => {
    const run = await loadedFiles(['mcp', '--cwd', '.'])
    expect(run.code).toBe(0)
    expect(run.files).toContain('chunks/mcp-*.cjs')
    // On stdio the host runs its own protocol engine: the SDK (with its zod schemas) is for --http and --remote.
    expect(run.files).not.toContain('chunks/mcp-sdk-*.cjs')
    expect(run.ajv).toBe(false)
  })
})

describe('the code cache (bin/load-bundle.cjs)', () => {
  /** A preload that reports, for every script the loader compiles, whether V8 took its code from the cache. */
  function cacheProbe(): string {
    const probe = join(ws.dir, 'cache-probe.cjs')
    writeFileSync(
      probe,
      [
        "const vm = require('node:vm')",
        'const Script = vm.Script',
        'vm.Script = class extends Script {',
        '  constructor(code, options) {',
        '    super(code, options)',
        "    process.stderr.write(`cache ${options.filename.split('/').pop()} ${options.cachedData === undefined ? 'none' : this.cachedDataRejected ? 'rejected' : 'used'}\\n`)",
        '  }',
        '}',
      ].join('\n'),
    )
    return probe
  }
  const verdicts = (stderr: string) =>
    [...stderr.matchAll(/^cache (\S+) (\w+)$/gm)].map(
      (m) => `${m[1]!.replace(/-[\w-]{8}\.code\.cjs$/, '-*.code.cjs')} ${m[2]}`,
    )

  test('a cold dsh call and dsh mcp run every chunk they load from the cache the build made', async () => {
    const call = await loadedFiles(['call', 'glob', '{"pattern":"notes.txt"}'], '', ['--require', cacheProbe()])
    expect(call.stdout).toBe('notes.txt\n')
    expect(verdicts(call.stderr).sort()).toEqual([
      'dsh.code.cjs used',
      'rolldown-runtime-*.code.cjs used',
      'runtime-*.code.cjs used',
      'runtime-*.code.cjs used',
    ])
    const mcp = await loadedFiles(['mcp', '--cwd', '.'], '', ['--require', cacheProbe()])
    expect(verdicts(mcp.stderr)).toContain('mcp-*.code.cjs used')
    expect(verdicts(mcp.stderr).filter((v) => !v.endsWith(' used'))).toEqual([])
  })

  test('cached code still imports an ES module at run time: the packaged ripgrep, when its platform package is missing', async () => {
    // The locator finds the binary without importing the package; a bogus arch makes it import the package for its
    // own error, through the loader's import (Node 20 loses the dynamic-import callback of cached code).
    const result = await dsh(['call', 'grep', '{"pattern":"two"}'], {
      cwd: ws.dir,
      env: { ...process.env, npm_config_arch: 'no-such-arch' },
    })
    expect(result.stdout).toBe(
      `Error: grep search failed: could not start ripgrep (@vscode/ripgrep): Could not find @vscode/ripgrep-${process.platform}-no-such-arch. Ensure optionalDependencies are installed for this platform (${process.platform}-no-such-arch).\n`,
    )
    expect(result.stderr).toBe('')
  })

  /** A copy of the built package inside the checkout (the packaged ripgrep resolves from it as from the package). */
  function copyPackage(): string {
    const copy = mkdtempSync(join(ROOT, 'node_modules', '.dsh-bundle-copy-'))
    onTestFinished(() => rmSync(copy, { recursive: true, force: true }))
    cpSync(join(ROOT, 'packages/host/cli/bin'), join(copy, 'bin'), { recursive: true })
    cpSync(DIST, join(copy, 'dist'), { recursive: true })
    cpSync(join(ROOT, 'packages/host/cli/package.json'), join(copy, 'package.json'))
    return copy
  }

  test('a copy of the package with other file times (as npm pack and install give) still runs from the caches', async () => {
    const copy = copyPackage()
    const run = await dsh(['call', 'grep', '{"pattern":"two"}'], {
      cwd: ws.dir,
      nodeArgs: ['--require', cacheProbe()],
      bin: join(copy, 'dist/dsh.cjs'),
    })
    expect(run.stdout).toBe('Found 1 match\n\nnotes.txt\nLine 2: two\n')
    expect(verdicts(run.stderr).length).toBeGreaterThan(0)
    expect(verdicts(run.stderr).filter((v) => !v.endsWith(' used'))).toEqual([])
  })

  test('a code file changed since the build runs without its cache (compiled as usual), and ripgrep still loads', async () => {
    // One code file grows by a comment (its size no longer matches the stamp); the entry's stub names another content
    // id than its cache's: neither cache is offered to V8.
    const copy = copyPackage()
    const runtime = readdirSync(join(copy, 'dist/chunks')).find(
      (name) => /^runtime-.*\.code\.cjs$/.test(name) && statSync(join(copy, 'dist/chunks', name)).size > 100_000,
    )!
    appendFileSync(join(copy, 'dist/chunks', runtime), '\n// changed\n')
    const stub = join(copy, 'dist/dsh.cjs')
    writeFileSync(stub, readFileSync(stub, 'utf8').replace(/'[0-9a-f]{32}'/, `'${'0'.repeat(32)}'`))
    const run = await dsh(['call', 'grep', '{"pattern":"two"}'], {
      cwd: ws.dir,
      nodeArgs: ['--require', cacheProbe()],
      bin: stub,
    })
    expect(run.stdout).toBe('Found 1 match\n\nnotes.txt\nLine 2: two\n')
    expect(verdicts(run.stderr)).toContain('dsh.code.cjs none')
    expect(verdicts(run.stderr)).toContain('runtime-*.code.cjs none')
  })
})

describe("the MCP SDK's validator, as the bundle rewrites it", () => {
  test('builds ajv only when first asked for a validator, and then validates as before', async () => {
    const source = join(ROOT, 'node_modules/@modelcontextprotocol/sdk/dist/esm/validation/ajv-provider.js')
    const rewritten = (lazySdkValidator as { transform(code: string, id: string): string }).transform(
      readFileSync(source, 'utf8'),
      source,
    )
    // Beside the original, so that its `require('ajv')` resolves as it does from the bundle.
    const copy = join(DIST, 'generated/ajv-provider.test.mjs')
    writeFileSync(
      copy,
      rewritten
        .replace('createRequire(import.meta.url)', `createRequire(${JSON.stringify(source)})`)
        .replace(/^\/\/# sourceMappingURL=.*$/m, ''),
    )
    try {
      const { AjvJsonSchemaValidator } = (await import(pathToFileURL(copy).href)) as {
        AjvJsonSchemaValidator: new () => {
          _built?: unknown
          getValidator(schema: object): (input: unknown) => { valid: boolean; errorMessage?: string }
        }
      }
      const provider = new AjvJsonSchemaValidator()
      expect(provider._built).toBeUndefined()
      const check = provider.getValidator({
        type: 'object',
        properties: { at: { type: 'string', format: 'date-time' } },
        required: ['at'],
      })
      expect(provider._built).toBeDefined()
      expect(check({ at: '2026-12-01T10:00:00Z' }).valid).toBe(true)
      expect(check({ at: 'yesterday' }).valid).toBe(false)
    } finally {
      rmSync(copy, { force: true })
    }
  })

  test('an SDK whose provider no longer matches fails the build instead of bundling it unchanged', () => {
    const transform = (lazySdkValidator as { transform(code: string, id: string): string }).transform
    expect(() =>
      transform(
        'export class AjvJsonSchemaValidator {}',
        '/x/node_modules/@modelcontextprotocol/sdk/dist/esm/validation/ajv-provider.js',
      ),
    ).toThrow(/changed: cannot make its ajv lazy/)
  })
})
