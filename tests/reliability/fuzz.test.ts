import { sessionFor } from '@deepseek-ai/dsh-testing'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { ToolResult } from '@deepseek-ai/dsh-tools'
import { assertWellFormed, FUZZ_RUNS, FUZZ_SEED, host, snapshot, temp, type Temp } from './helpers.ts'

// Every rejection nobody handled, anywhere in this worker, while the properties run.
const unhandled: unknown[] = []
const collect = (reason: unknown) => {
  unhandled.push(reason)
}
process.on('unhandledRejection', collect)

/** The file name every hostile string tries to create; it must appear nowhere. */
const CANARY = 'CANARY_FILE'

const HOSTILE = [
  '',
  '.',
  '..',
  '/',
  '//',
  '~',
  '-',
  '--',
  '-r',
  '--files',
  '--pre=touch',
  `--pre=touch ${CANARY}`,
  '-e',
  '--help',
  '-v',
  `$(touch ${CANARY})`,
  `\`touch ${CANARY}\``,
  `; touch ${CANARY}`,
  `&& touch ${CANARY}`,
  `| touch ${CANARY}`,
  `; rm -rf ../canary`,
  '; rm -rf /',
  `'$(touch ${CANARY})'`,
  `"; touch ${CANARY}; "`,
  `${CANARY}\ntouch ${CANARY}`,
  '../canary',
  '../canary/keep.txt',
  '../../',
  '/etc/passwd',
  '/proc/self/mem',
  '/dev/zero',
  '/dev/stdin',
  'file://x',
  'a\u0000b',
  '\u0000',
  '\n',
  '\r\n',
  'line\nbreak',
  '\t',
  '\u001b[31mred',
  '\uFFFD',
  '\uD800',
  '\uDC00x',
  'a\uD83Db',
  '\u00ff\u00fe\u0080',
  '*',
  '**',
  '**/*',
  '{a',
  '[',
  '[z-a]',
  '(',
  '(?:a()',
  '\\',
  '\\x00',
  '.*',
  '(a+)+$',
  '!*.md',
  '*.ts,*.js',
  '{,}',
  '{{{{{{{{{{a}}}}}}}}}}',
  'a'.repeat(10_000),
  '/'.repeat(10_000),
  '.*'.repeat(5_000),
  `${'../'.repeat(3000)}etc/passwd`,
  'é'.repeat(10_000),
  'bash-1',
  'bash-0',
  'bash-999999999999999999999',
  'bash--1',
]

/** Strings from every family: the fixed hostile list, arbitrary UTF-16 (lone surrogates too), latin1-decoded bytes, mixes. */
const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...HOSTILE) },
  {
    weight: 2,
    arbitrary: fc.string({
      unit: fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code)),
      maxLength: 40,
    }),
  },
  { weight: 2, arbitrary: fc.uint8Array({ maxLength: 40 }).map((bytes) => Buffer.from(bytes).toString('latin1')) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.constantFrom(...HOSTILE), fc.string({ maxLength: 10 }), fc.constantFrom(...HOSTILE))
      .map((parts) => parts.join('')),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom('-', '--', '../', '/'), fc.string({ maxLength: 20 }))
      .map(([lead, rest]) => lead + rest),
  },
)

/** Mostly strings; sometimes a value of the wrong type (the registry must answer INVALID_ARGS). */
const value = fc.oneof({ weight: 8, arbitrary: hostileString }, { weight: 1, arbitrary: fc.anything({ maxDepth: 1 }) })
const optional = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined, freq: 3 })
const integerish = fc.oneof(
  fc.integer({ min: -5, max: 5 }),
  fc.integer(),
  fc.double(),
  fc.constant(Number.MAX_SAFE_INTEGER),
  hostileString,
)

/** Drops the keys whose value is undefined: an absent argument, not an explicit undefined. */
function args(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined))
}

/** How many calls ended how, per tool: printed at the end, and checked so a property cannot pass on one outcome only. */
const outcomes = new Map<string, number>()

let root: Temp
let fixture: string
let canary: string
let fixtureBefore: string[]
let canaryBefore: string[]
let dsh: Awaited<ReturnType<typeof host>>
const session = () => sessionFor('fuzz', fixture)

beforeAll(async () => {
  // The session cwd is `fixture`; `canary` is its sibling (reachable as ../canary) and must never change.
  root = temp('fuzz', {
    'fixture/a.txt': 'alpha\nbeta\n',
    'fixture/src/b.ts': 'export const b = 2 // TODO\n',
    'fixture/bin.dat': Buffer.from([0, 1, 2, 0xff, 0xfe]),
    'fixture/latin1.txt': Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]),
    'fixture/.hidden/h.txt': 'hidden\n',
    'canary/keep.txt': 'do not touch\n',
    'canary/sub/deep.txt': 'deep\n',
    'spill/.keep': '',
  })
  fixture = join(root.dir, 'fixture')
  canary = join(root.dir, 'canary')
  dsh = await host({
    'spill-local': { root: join(root.dir, 'spill') },
    'spill-policy': { maxInlineBytes: 4000 },
    // A short budget so that a pathological regex ends as TOOL_TIMEOUT instead of holding the run.
    'tool-fs-search': { timeoutMs: 5000 },
    'bash-local': { graceMs: 500, maxTimeoutMs: 5000 },
  })
  fixtureBefore = snapshot(fixture)
  canaryBefore = snapshot(canary)
})

afterAll(async () => {
  await dsh?.dispose()
  root?.cleanup()
  process.off('unhandledRejection', collect)
})

/** One call: well-formed result, nothing written in the fixture or the canary, no stray canary file in the process cwd. */
async function check(tool: string, callArgs: Record<string, unknown>): Promise<ToolResult> {
  const result = await dsh.ctx.tools.execute(tool, callArgs, { session: session() })
  assertWellFormed(result)
  // TOOL_FAILED is the registry's code for an error the tool did not classify: each tool must code its own.
  expect(result.error?.code, JSON.stringify(result.error)).not.toBe('TOOL_FAILED')
  const key = `${tool} ${result.isError ? result.error!.code : 'ok'}`
  outcomes.set(key, (outcomes.get(key) ?? 0) + 1)
  expect(snapshot(canary)).toEqual(canaryBefore)
  expect(snapshot(fixture)).toEqual(fixtureBefore)
  expect(existsSync(join(process.cwd(), CANARY))).toBe(false)
  return result
}

/**
 * A run that does not settle within `timeout` fails the property: a hang is a failure. The bound is far above every
 * tool's own budget (search 5 s, bash at most 5 s, plus the kill grace), so only a real hang reaches it.
 */
const OPTIONS = { numRuns: FUZZ_RUNS, seed: FUZZ_SEED, endOnFailure: true, timeout: 30_000 }
const TEST_TIMEOUT = Math.max(300_000, FUZZ_RUNS * 200)
const run = <T>(property: fc.IAsyncPropertyWithHooks<[T]>) => fc.assert(property, OPTIONS)

describe(`fuzzed arguments (${FUZZ_RUNS} runs per property, seed ${FUZZ_SEED})`, () => {
  test(
    'glob: every pattern and path gives a result or a coded error, and touches nothing',
    async () => {
      const arbitrary = fc.record({ pattern: value, path: optional(value) }).map(args)
      await run(
        fc.asyncProperty(arbitrary, async (a) => {
          await check('glob', a)
        }),
      )
    },
    TEST_TIMEOUT,
  )

  test(
    'grep: every pattern, path and include gives a result or a coded error, and touches nothing',
    async () => {
      const arbitrary = fc.record({ pattern: value, path: optional(value), include: optional(value) }).map(args)
      await run(
        fc.asyncProperty(arbitrary, async (a) => {
          await check('grep', a)
        }),
      )
    },
    TEST_TIMEOUT,
  )

  test(
    'read: every path, offset and limit gives a result or a coded error, and touches nothing',
    async () => {
      const path = fc.oneof(
        value,
        fc.constantFrom(
          'a.txt',
          'src/b.ts',
          'bin.dat',
          'latin1.txt',
          '.hidden/h.txt',
          'src',
          '../canary/keep.txt',
          '/proc/self/mem',
        ),
      )
      const arbitrary = fc.record({ path, offset: optional(integerish), limit: optional(integerish) }).map(args)
      await run(
        fc.asyncProperty(arbitrary, async (a) => {
          await check('read', a)
        }),
      )
    },
    TEST_TIMEOUT,
  )

  test(
    'bash: hostile workdir, timeoutMs and description around a harmless command give a result or a coded error',
    async () => {
      const arbitrary = fc
        .record({
          command: fc.constantFrom('echo ok', 'pwd', 'true'),
          description: fc.oneof({ weight: 4, arbitrary: fc.constant('fuzzed call') }, { weight: 1, arbitrary: value }),
          workdir: optional(fc.oneof(value, fc.constantFrom('src', '.', '..', fixture))),
          timeoutMs: optional(integerish),
          run_in_background: optional(fc.oneof(fc.boolean(), value)),
        })
        .map(args)
      await run(
        fc.asyncProperty(arbitrary, async (a) => {
          await check('bash', a)
        }),
      )
    },
    TEST_TIMEOUT,
  )

  test(
    'bash_output and bash_kill: every task_id gives a result or a coded error',
    async () => {
      // One real task, so that a fuzzed id can also hit a live one.
      const started = await dsh.ctx.tools.execute(
        'bash',
        { command: 'true', description: 'seed task', run_in_background: true },
        { session: session() },
      )
      expect(started.isError).toBe(false)
      const arbitrary = fc.record({
        tool: fc.constantFrom('bash_output', 'bash_kill'),
        task_id: fc.oneof(
          value,
          fc.nat(5).map((n) => `bash-${n}`),
        ),
      })
      await run(
        fc.asyncProperty(arbitrary, async ({ tool, task_id }) => {
          await check(tool, { task_id })
        }),
      )
    },
    TEST_TIMEOUT,
  )

  test(
    'bash_input: every task_id and text (control characters, NUL, lone surrogates) gives a result or a coded error',
    async () => {
      // A live interactive task (cat echoes whatever arrives) and a live plain one, so that fuzzed ids can hit both.
      const ids: string[] = []
      for (const [command, interactive] of [
        ['cat', true],
        ['sleep 30', false],
      ] as const) {
        const started = await dsh.ctx.tools.execute(
          'bash',
          { command, description: 'seed task', run_in_background: true, interactive },
          { session: session() },
        )
        expect(started.isError).toBe(false)
        ids.push(/bash-\d+/.exec(started.content[0].text)![0])
      }
      const arbitrary = fc.record({
        task_id: fc.oneof(
          value,
          fc.constantFrom(...ids),
          fc.nat(5).map((n) => `bash-${n}`),
        ),
        text: value,
        timeout_ms: fc.constant(50),
      })
      await run(
        fc.asyncProperty(arbitrary, async (args) => {
          await check('bash_input', args)
        }),
      )
    },
    TEST_TIMEOUT,
  )

  test(
    'write and edit (confined to a scratch root): every path and string gives a result or a coded error; nothing outside the root changes',
    async () => {
      const scratch = join(root.dir, 'scratch')
      mkdirSync(scratch)
      writeFileSync(join(scratch, 'a.txt'), 'alpha\nbeta\n')
      writeFileSync(join(scratch, 'crlf.txt'), 'one\r\ntwo\r\n')
      writeFileSync(join(scratch, 'bin.dat'), Buffer.from([0, 1, 2]))
      // A workspace section alone: the roots are on (the session cwd), bash stays as it is.
      const confined = await host({ workspace: { roots: [] }, 'spill-local': { root: join(root.dir, 'spill') } })
      const as = { session: sessionFor('fuzz-change', scratch) }
      try {
        for (const name of ['a.txt', 'crlf.txt'])
          expect((await confined.ctx.tools.execute('read', { path: name }, as)).isError).toBe(false)
        const path = fc.oneof(
          value,
          fc.constantFrom(
            'a.txt',
            'crlf.txt',
            'bin.dat',
            'new.txt',
            'sub/dir/new.txt',
            '.',
            '../canary/keep.txt',
            '../canary/new.txt',
            '../fixture/a.txt',
            '/etc/passwd',
            '/proc/self/mem',
            '/dev/null',
          ),
        )
        const text = fc.oneof(value, fc.constantFrom('alpha', 'beta\n', 'one\ntwo', '1: alpha', ''))
        const arbitrary = fc.oneof(
          fc.record({ tool: fc.constant('write'), a: fc.record({ path, content: text }).map(args) }),
          fc.record({
            tool: fc.constant('edit'),
            a: fc
              .record({
                path,
                old_string: text,
                new_string: text,
                replace_all: optional(fc.oneof(fc.boolean(), value)),
              })
              .map(args),
          }),
        )
        await run(
          fc.asyncProperty(arbitrary, async ({ tool, a }) => {
            const result = await confined.ctx.tools.execute(tool, a, as)
            assertWellFormed(result)
            expect(result.error?.code, JSON.stringify(result.error)).not.toBe('TOOL_FAILED')
            const key = `${tool} ${result.isError ? result.error!.code : 'ok'}`
            outcomes.set(key, (outcomes.get(key) ?? 0) + 1)
            expect(snapshot(canary)).toEqual(canaryBefore)
            expect(snapshot(fixture)).toEqual(fixtureBefore)
            expect(existsSync(join(process.cwd(), CANARY))).toBe(false)
          }),
        )
        expect(confined.problems).toEqual([])
      } finally {
        await confined.dispose()
      }
      for (const tool of ['write', 'edit']) {
        expect(
          [...outcomes.keys()].filter((key) => key.startsWith(`${tool} `) && key !== `${tool} ok`).length,
          tool,
        ).toBeGreaterThan(0)
        expect(outcomes.get(`${tool} ok`) ?? 0, tool).toBeGreaterThan(0)
      }
    },
    TEST_TIMEOUT,
  )

  test('no unhandled rejection and no plugin error during the fuzzing', async () => {
    // Rejections surface a macrotask later: give them a turn before looking.
    await new Promise((done) => setTimeout(done, 50))
    expect(unhandled).toEqual([])
    expect(dsh.problems).toEqual([])
    console.log(
      [...outcomes]
        .sort()
        .map(([key, count]) => `${key}: ${count}`)
        .join('\n'),
    )
    // Each tool both succeeded and failed under fuzzing: the generators reach past the argument checks.
    for (const tool of ['glob', 'grep', 'read', 'bash', 'bash_input']) {
      expect(
        [...outcomes.keys()].filter((key) => key.startsWith(`${tool} `) && key !== `${tool} ok`).length,
        tool,
      ).toBeGreaterThan(0)
      expect(outcomes.get(`${tool} ok`) ?? 0, tool).toBeGreaterThan(0)
    }
  })
})
