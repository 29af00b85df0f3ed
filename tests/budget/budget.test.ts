import type { ToolSession } from '@deepseek-ai/dsh-tools'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { until, sessionFor } from '@deepseek-ai/dsh-testing'
import type { ToolResult } from '@deepseek-ai/dsh-tools'
import { createDefaultContext, type DefaultContext } from 'dsh-agent-tools'

/*
 * docs/model-surface.md#budgets: no tool result's text exceeds the budget, whatever the tool and the config. read, write, edit, bash and
 * bash_output keep their own budget; every tool of the shipped composition (glob, grep, and a tool from elsewhere that knows
 * nothing of budgets) stays within the spill policy's safety net, which the composition turns on at the budget.
 */

const SEED = Number(process.env.DSH_FUZZ_SEED ?? '') || 20261201

let dir: string

/** Files whose pages and outputs are long in every way: many short lines, long multi-byte lines, one huge line. */
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'dsh-budget-'))
  const files: Record<string, string> = {
    'many-lines.txt': `${Array.from({ length: 400_000 }, (_, i) => `${i + 1}`).join('\n')}\n`,
    'wide-lines.txt': `${Array.from({ length: 300 }, (_, i) => `${i} ${'é€😀x'.repeat(200 + (i % 7) * 150)}`).join('\n')}\n`,
    'minified.js': `function a(){${'var x=1;'.repeat(150_000)}}`,
    'mixed.md': Array.from({ length: 5000 }, (_, i) => (i % 50 === 0 ? 'y'.repeat(9000) : `line ${i} function`)).join(
      '\n',
    ),
    'empty.txt': '',
  }
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content)
  mkdirSync(join(dir, 'tree'))
  for (let i = 0; i < 1500; i++)
    writeFileSync(join(dir, 'tree', `file-${'n'.repeat(i % 40)}-${i}.ts`), `export const v${i} = 'function'\n`)
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const FILES = ['many-lines.txt', 'wide-lines.txt', 'minified.js', 'mixed.md', 'empty.txt', 'missing.txt', 'tree']
/**
 * Session notices (`ctx.tools.notify`: a background task's completion) count like any text: core appends them before
 * `tools/post-execute`, so the spill policy bounds a result that carries them.
 */
let noticed = 0
function bytes(result: ToolResult): number {
  const text = result.content[0].text
  if (/\n\nbackground task bash-\d+ finished /.test(text)) noticed++
  return Buffer.byteLength(text, 'utf8')
}

/** One call a model might make, with arguments drawn wide. */
type Call =
  | { tool: 'read'; path: string; offset: number | undefined; limit: number | undefined }
  | { tool: 'bash'; out: [string, number]; err: [string, number]; background: boolean }
  | { tool: 'glob' | 'grep'; pattern: string }
  | { tool: 'echo'; text: string }

const file = fc.constantFrom(...FILES)
const call: fc.Arbitrary<Call> = fc.oneof(
  fc.record({
    tool: fc.constant('read' as const),
    path: file,
    offset: fc.option(fc.integer({ min: 1, max: 400_010 }), { nil: undefined }),
    limit: fc.option(fc.integer({ min: 1, max: 5000 }), { nil: undefined }),
  }),
  fc.record({
    tool: fc.constant('bash' as const),
    out: fc.tuple(file, fc.integer({ min: 0, max: 3_000_000 })),
    err: fc.tuple(file, fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 200_000 }))),
    background: fc.boolean(),
  }),
  fc.record({
    tool: fc.constantFrom('glob' as const, 'grep' as const),
    pattern: fc.constantFrom('**/*', '*.ts', 'function', 'x', '1', 'é'),
  }),
  fc.record({
    tool: fc.constant('echo' as const),
    text: fc.oneof(
      fc.string({ maxLength: 200 }),
      fc.integer({ min: 0, max: 200_000 }).map((n) => 'é\n'.repeat(n)),
    ),
  }),
)

/** The tools that keep a budget of their own accept `maxResultBytes`; tool-fs-search only once it does. */
async function budgetConfig(budget: number): Promise<Record<string, Record<string, number | string>>> {
  const search = (await import('@deepseek-ai/dsh-tool-fs-search')) as { Config?: { dict?: Record<string, unknown> } }
  const config: Record<string, Record<string, number | string>> = {
    'tool-bash': { maxResultBytes: budget },
    'tool-fs': { maxResultBytes: budget },
    // Saved results and full outputs stay in this test's own directory, not the shared temp dir.
    'spill-local': { root: join(dir, '.saved') },
    'subprocess-local': { spillDir: join(dir, '.outputs') },
  }
  if (search.Config?.dict?.maxResultBytes) config['tool-fs-search'] = { maxResultBytes: budget }
  return config
}

/** Results of one call, each with the tool that returned it. */
async function perform(host: DefaultContext, c: Call, session: ToolSession): Promise<[string, ToolResult][]> {
  const tools = host.ctx.tools
  switch (c.tool) {
    case 'read':
      return [
        [
          'read',
          await tools.execute(
            'read',
            { path: c.path, ...(c.offset ? { offset: c.offset } : {}), ...(c.limit ? { limit: c.limit } : {}) },
            { session },
          ),
        ],
      ]
    case 'glob':
    case 'grep':
      return [[c.tool, await tools.execute(c.tool, { pattern: c.pattern }, { session })]]
    case 'echo':
      return [['echo', await tools.execute('echo', { text: c.text }, { session })]]
    case 'bash': {
      const command = `head -c ${c.out[1]} ${c.out[0]} 2>/dev/null; head -c ${c.err[1]} ${c.err[0]} >&2 2>/dev/null; true`
      if (!c.background)
        return [['bash', await tools.execute('bash', { command, description: 'print a lot' }, { session })]]
      const started = await tools.execute(
        'bash',
        { command, description: 'print a lot', run_in_background: true },
        { session },
      )
      const id = /bash-\d+/.exec(started.content[0].text)![0]
      const results: [string, ToolResult][] = [['bash', started]]
      await until(async () => {
        const read = await tools.execute('bash_output', { task_id: id }, { session })
        results.push(['bash_output', read])
        return !read.content[0].text.endsWith('[status: running]')
      }, `${id} finished`)
      return results
    }
  }
}

/** Tools that keep the budget themselves; the others are held by the net. */
const OWN_BUDGET = new Set(['read', 'bash', 'bash_output'])

test('no result of read, bash, bash_output — nor, through the spill policy on by default, of any tool — passes the budget (property)', async () => {
  const seen = new Map<string, number>()
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1024, max: 40_000 }),
      fc.array(call, { minLength: 4, maxLength: 10 }),
      async (budget, calls) => {
        const config = await budgetConfig(budget)
        const host = await createDefaultContext({ config, log: () => {} })
        host.ctx.tools.register({
          name: 'echo',
          description: 'returns its text, however long',
          parameters: { type: 'object', properties: { text: { type: 'string' } } },
          execute: (args: Record<string, unknown>) => String(args.text),
        })
        try {
          const session = sessionFor(`budget-${budget}`, dir)
          // The net sits at the largest tool budget; a tool-fs-search without the key keeps its default of 30 000.
          const net = config['tool-fs-search'] ? budget : Math.max(budget, 30_000)
          for (const c of calls) {
            for (const [tool, result] of await perform(host, c, session)) {
              seen.set(tool, Math.max(seen.get(tool) ?? 0, bytes(result)))
              // Errors included: every result counts.
              expect(bytes(result), `${tool} ${JSON.stringify(c).slice(0, 200)}`).toBeLessThanOrEqual(
                OWN_BUDGET.has(tool) ? budget : net,
              )
            }
          }
        } finally {
          await host.dispose()
        }
      },
    ),
    { seed: SEED, numRuns: 12 },
  )
  console.log(
    `largest result per tool (bytes): ${[...seen].map(([tool, size]) => `${tool} ${size}`).join(', ')}; ${noticed} results carried session notices`,
  )
  // The property cannot pass on small results only: some results came close to the budget.
  expect(Math.max(...seen.values())).toBeGreaterThan(1000)
  expect([...seen.keys()]).toEqual(expect.arrayContaining(['bash', 'bash_output', 'echo', 'read', 'glob', 'grep']))
}, 300_000)

test("a read page at its budget with a finished task's notice pending: the page stays within the budget and the notice comes with the next result", async () => {
  const budget = 4096
  const host = await createDefaultContext({ config: await budgetConfig(budget), log: () => {} })
  try {
    const session = sessionFor('budget-notice', dir)
    const emitted: string[] = []
    host.ctx.on('tools/session-notice', (notice) => void emitted.push(notice.text))
    await host.ctx.tools.execute(
      'bash',
      { command: 'true', description: 'finish at once', run_in_background: true },
      { session },
    )
    await until(() => emitted.length > 0, "the task's completion notice")
    const page = await host.ctx.tools.execute('read', { path: 'many-lines.txt', limit: 5000 }, { session })
    expect(Buffer.byteLength(page.content[0].text, 'utf8')).toBeLessThanOrEqual(budget)
    // The page fills its budget (the footer says where to go on), so the notice waits.
    expect(Buffer.byteLength(page.content[0].text, 'utf8')).toBeGreaterThan(budget - 100)
    expect(page.content[0].text).not.toContain('background task')
    const next = await host.ctx.tools.execute('read', { path: 'many-lines.txt', limit: 1 }, { session })
    expect(next.content[0].text).toContain(`\n\n${emitted[0]}`)
  } finally {
    await host.dispose()
  }
})

/**
 * Error results are never paged nor spilled, so each tool must bound what its error texts repeat of the model's
 * arguments. Values drawn wide: up to 200 000 repeats of one unit (multi-byte, quotes, control characters,
 * regex syntax), after a short random head. No `/` or `.` in paths, so that no drawn path names a real directory
 * outside the test's own; commands over the argument limit, so that no drawn command ever runs; waits of 1 ms.
 */
test('no error result passes the budget, however long and strange the arguments (property)', async () => {
  const value = fc
    .tuple(
      fc.string({ maxLength: 12 }),
      fc.integer({ min: 0, max: 200_000 }),
      fc.constantFrom('a', 'é', '😀', '(', '"', '\\', '\n', '\x1b', '\0', '*', '{', '['),
    )
    .map(([head, n, unit]) => `${head}${unit.repeat(n)}`)
  const path = value.map((text) => `missing-${text.replace(/[/.]/g, '_')}`)
  const tooLong = value.map((text) => `true #${'x'.repeat(131_072)}${text}`)
  const anyCall = fc.oneof(
    fc.record({
      tool: fc.constant('glob'),
      args: fc.oneof(fc.record({ pattern: value }), fc.record({ pattern: fc.constant('*'), path })),
    }),
    fc.record({
      tool: fc.constant('grep'),
      args: fc.oneof(
        fc.record({ pattern: value }),
        fc.record({ pattern: fc.constant('x'), path }),
        fc.record({ pattern: fc.constant('x'), include: value }),
      ),
    }),
    fc.record({ tool: fc.constant('read'), args: fc.record({ path }) }),
    fc.record({
      tool: fc.constant('bash'),
      args: fc.oneof(
        fc.record({ command: tooLong, description: value }),
        fc.record({ command: fc.constant('true'), description: fc.constant('x'), workdir: path }),
      ),
    }),
    fc.record({
      tool: fc.constant('bash_output'),
      args: fc.oneof(
        fc.record({ task_id: value }),
        fc.record({ task_id: fc.constant('bash-1'), wait_for: value, timeout_ms: fc.constant(1) }),
      ),
    }),
    fc.record({
      tool: fc.constant('bash_input'),
      args: fc.oneof(
        fc.record({ task_id: value, text: value }),
        fc.record({ task_id: fc.constant('bash-1'), text: value, wait_for: value, timeout_ms: fc.constant(1) }),
      ),
    }),
    fc.record({ tool: fc.constant('bash_kill'), args: fc.record({ task_id: value }) }),
    // write and edit: a missing or never-read file, a directory, and an old_string that matches nothing in a file
    // the session read (its closest region is shown). "functionZ" occurs nowhere, so no drawn edit ever succeeds.
    fc.record({
      tool: fc.constant('edit'),
      args: fc.oneof(
        fc.record({ path, old_string: value, new_string: fc.constant('x') }),
        fc.record({
          path: fc.constant('mixed.md'),
          old_string: value.map((text) => `line 1 functionZ ${text}\nline 2 function`),
          new_string: value,
        }),
      ),
    }),
    // apply_patch: a malformed patch (its line is quoted), a hunk that matches nothing (closest region), a path.
    fc.record({
      tool: fc.constant('apply_patch'),
      args: fc.oneof(
        fc.record({ patch: value }),
        fc.record({
          patch: value.map(
            (text) => `*** Begin Patch\n*** Update File: mixed.md\n@@\n-line 1 functionZ ${text}\n+x\n*** End Patch`,
          ),
        }),
        fc.record({ patch: path.map((p) => `*** Begin Patch\n*** Delete File: ${p}\n*** End Patch`) }),
      ),
    }),
    fc.record({
      tool: fc.constant('write'),
      args: fc.oneof(
        fc.record({ path: fc.constant('tree'), content: value }),
        fc.record({ path: fc.constant('many-lines.txt'), content: value }),
      ),
    }),
  )
  const budget = 1024
  const host = await createDefaultContext({ config: await budgetConfig(budget), log: () => {} })
  const largest = new Map<string, number>()
  try {
    const session = sessionFor('budget-errors', dir)
    await host.ctx.tools.execute(
      'bash',
      { command: 'sleep 60', description: 'a task to name', run_in_background: true },
      { session },
    )
    await host.ctx.tools.execute('read', { path: 'mixed.md', limit: 1 }, { session })
    await fc.assert(
      fc.asyncProperty(anyCall, async ({ tool, args }) => {
        const result = await host.ctx.tools.execute(tool, args, { session })
        if (!result.isError) return
        largest.set(tool, Math.max(largest.get(tool) ?? 0, bytes(result)))
        expect(bytes(result), `${tool} ${JSON.stringify(args).slice(0, 200)}`).toBeLessThanOrEqual(budget)
      }),
      { seed: SEED, numRuns: 150 },
    )
  } finally {
    await host.dispose()
  }
  console.log(
    `largest error result per tool (bytes): ${[...largest].map(([tool, size]) => `${tool} ${size}`).join(', ')}`,
  )
  // Every tool was driven into an error, and some texts repeated enough of their arguments to come near the bound.
  expect([...largest.keys()].sort()).toEqual([
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
  expect(Math.max(...largest.values())).toBeGreaterThan(400)
}, 300_000)
