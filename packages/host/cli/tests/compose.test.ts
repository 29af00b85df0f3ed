import { Context, Service, type Fiber } from 'cordis'
import { describe, expect, test } from 'vitest'
import { createDefaultContext, DshErrorCode } from '../src/index.ts'
import { safetyNet, waitActive } from '../src/compose.ts'

async function rejection(promise: Promise<unknown>): Promise<{ message: string; code: string }> {
  try {
    await promise
  } catch (error) {
    return { message: (error as Error).message, code: (error as { code: string }).code }
  }
  throw new Error('expected a rejection')
}

/** A bare root Context whose plugin errors are collected instead of printed. */
function bareContext(): { ctx: Context; errors: string[] } {
  const ctx = new Context()
  const errors: string[] = []
  ctx.logger.exporter({
    export: (message) => {
      if (message.type === 'error') errors.push(String(message.args[0]))
    },
  })
  return { ctx, errors }
}

describe('default composition', () => {
  test('every plugin of the composition is active, in order, with every tool and its prompt section', async () => {
    const lines: string[] = []
    const host = await createDefaultContext({ log: (line) => lines.push(line) })
    try {
      expect(host.plugins).toEqual([
        'tools',
        'system-prompt',
        'timeout-policy',
        'subprocess-local',
        'spill-local',
        'tasks-local',
        'bash-local',
        'spill-policy',
        'tool-bash',
        'tool-fs',
        'tool-fs-search',
      ])
      expect(host.ctx.tools.list().map((tool) => tool.name)).toEqual([
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
      expect(host.ctx.systemPrompt.list().map((section) => section.id)).toEqual([
        'tool:read',
        'tool:glob',
        'tool:grep',
        'tool:bash',
        'tool:write-edit',
      ])
      for (const service of ['subprocess', 'spillStore', 'bash'] as const)
        expect(host.ctx.get(service), service).toBeDefined()
      expect(lines).toEqual([])
    } finally {
      await host.dispose()
    }
  })

  test('the spill policy is on as the safety net at the largest tool budget, unless maxInlineBytes is set', () => {
    expect(safetyNet({})).toEqual({ maxInlineBytes: 30_000 })
    expect(safetyNet({ 'spill-policy': { headRatio: 0.3, exclude: ['read'] } })).toEqual({
      headRatio: 0.3,
      exclude: ['read'],
      maxInlineBytes: 30_000,
    })
    expect(safetyNet({ 'tool-bash': { maxResultBytes: 50_000 } })).toEqual({ maxInlineBytes: 50_000 })
    expect(
      safetyNet({
        'tool-bash': { maxResultBytes: 12_000 },
        'tool-fs': { maxResultBytes: 12_000 },
        'tool-fs-search': { maxResultBytes: 12_000 },
      }),
    ).toEqual({ maxInlineBytes: 12_000 })
    expect(safetyNet({ 'spill-policy': { maxInlineBytes: 999 }, 'tool-bash': { maxResultBytes: 50_000 } })).toEqual({
      maxInlineBytes: 999,
    })
  })

  test('a config section reaches its plugin', async () => {
    const host = await createDefaultContext({ config: { 'tool-fs-search': { globMaxResults: 7 } } })
    try {
      expect(host.ctx.tools.get('glob')?.description).toContain('At most 7 paths')
    } finally {
      await host.dispose()
    }
  })

  test('an invalid config is rejected before any plugin runs', async () => {
    const lines: string[] = []
    expect(
      await rejection(createDefaultContext({ config: { 'tool-fs': { nope: 1 } }, log: (line) => lines.push(line) })),
    ).toMatchObject({
      code: DshErrorCode.DSH_CONFIG_INVALID,
      message: expect.stringMatching(/^unknown key "tool-fs\.nope"/),
    })
    expect(lines).toEqual([])
  })

  test('a remote takes no local config and no sandbox: either is DSH_CONFIG_INVALID before anything starts', async () => {
    const remote = { command: [process.execPath, '-e', 'process.exit(9)'] }
    const lines: string[] = []
    expect(
      await rejection(createDefaultContext({ remote, sandbox: true, log: (line) => lines.push(line) })),
    ).toMatchObject({
      code: DshErrorCode.DSH_CONFIG_INVALID,
      message:
        '--sandbox confines local tools, which a remote replaces: start the remote dsh with --sandbox in its own command',
    })
    expect(
      await rejection(createDefaultContext({ remote, config: { 'tool-fs': {} }, log: (line) => lines.push(line) })),
    ).toMatchObject({
      code: DshErrorCode.DSH_CONFIG_INVALID,
      message:
        'a config sets local plugins, which a remote replaces: give the remote dsh its own --config in its command',
    })
    expect(lines).toEqual([])
  })

  test('dispose can be called twice', async () => {
    const host = await createDefaultContext()
    await host.dispose()
    await host.dispose()
  })
})

describe('waiting for plugins', () => {
  test('resolves once every plugin is active, also behind a provider that starts asynchronously', async () => {
    const { ctx } = bareContext()
    let release!: () => void
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    class SlowService extends Service {
      constructor(inner: Context) {
        super(inner, 'slowService')
      }

      async [Service.init]() {
        await gate
      }
    }
    const started: { key: string; fiber: Fiber }[] = [
      { key: 'consumer', fiber: ctx.plugin({ name: 'consumer', inject: ['slowService'], apply() {} }) },
      { key: 'provider', fiber: ctx.plugin(SlowService) },
    ]
    const waiting = waitActive(ctx, started, 10_000)
    setImmediate(release)
    await waiting
    expect(started.map((item) => item.fiber.state)).toEqual([2, 2])
    await ctx.fiber.dispose()
  })

  test('a plugin whose injected service never arrives is named with the missing service, without waiting for the bound', async () => {
    const { ctx } = bareContext()
    const started = [
      { key: 'fine', fiber: ctx.plugin({ name: 'fine', apply() {} }) },
      { key: 'tool-lonely', fiber: ctx.plugin({ name: 'tool-lonely', inject: ['fine', 'neverProvided'], apply() {} }) },
    ]
    // A bound this large would time the test out: the answer must come from the stall, not the clock.
    expect(await rejection(waitActive(ctx, started, 10 * 60_000))).toEqual({
      code: DshErrorCode.DSH_PLUGIN_FAILED,
      message: 'plugin tool-lonely cannot start: it needs fine, neverProvided, which no loaded plugin provides',
    })
    await ctx.fiber.dispose()
  })

  test('a plugin that fails to start is named with its error', async () => {
    const { ctx, errors } = bareContext()
    const started = [
      {
        key: 'spill-local',
        fiber: ctx.plugin({
          name: 'spill-local',
          apply() {
            throw new Error('root is not writable')
          },
        }),
      },
    ]
    expect(await rejection(waitActive(ctx, started, 10_000))).toEqual({
      code: DshErrorCode.DSH_PLUGIN_FAILED,
      message: 'plugin spill-local failed to start: root is not writable',
    })
    expect(errors).toHaveLength(1)
    await ctx.fiber.dispose()
  })

  test('a plugin whose start never finishes is named once the bound has passed', async () => {
    const { ctx } = bareContext()
    let release!: () => void
    const started = [
      {
        key: 'bash-local',
        fiber: ctx.plugin({
          name: 'bash-local',
          apply: () =>
            new Promise<void>((resolve) => {
              release = resolve
            }),
        }),
      },
    ]
    expect(await rejection(waitActive(ctx, started, 20))).toEqual({
      code: DshErrorCode.DSH_PLUGIN_FAILED,
      message: 'plugin bash-local did not start within 20ms',
    })
    release()
    await ctx.fiber.dispose()
  })
})
