import { Context, type Fiber, type Message } from 'cordis'
import { ToolsService } from '@deepseek-ai/dsh-tools'

export interface TestContext {
  readonly ctx: Context
  /** Plugin errors (and warnings) reported through the logger since the context was made. */
  readonly problems: readonly Message[]
  /**
   * Waits (bounded) until `fiber` is active: `await ctx.plugin(P)` returns before a plugin with injections
   * has run. Throws if it failed or stays pending.
   */
  active(fiber: Fiber): Promise<void>
  /** Disposes the whole context, then throws if any plugin reported an error. */
  dispose(): Promise<void>
}

function describe(message: Message): string {
  return `[${message.type}] ${message.name}: ${message.args.map((arg) => (arg instanceof Error ? arg.stack ?? arg.message : String(arg))).join(' ')}`
}

/**
 * A fresh root Context with an exporter that records every plugin error, so a test fails on errors that
 * Cordis would otherwise only log. `withTools` (default true) loads `ctx.tools`.
 */
export async function createTestContext(options: { withTools?: boolean; allowWarnings?: boolean } = {}): Promise<TestContext> {
  const ctx = new Context()
  const problems: Message[] = []
  ctx.logger.exporter({
    export(message) {
      if (message.type === 'error' || (message.type === 'warn' && !options.allowWarnings)) problems.push(message)
    },
  })
  if (options.withTools ?? true) await ctx.plugin(ToolsService)
  return {
    ctx,
    problems,
    active,
    async dispose() {
      await ctx.fiber.dispose()
      if (problems.length) throw new Error(`plugin errors were reported:\n${problems.map(describe).join('\n')}`)
    },
  }
}

// FiberState is a const enum in Cordis' declarations, which isolatedModules cannot read: mirror the values.
const ACTIVE = 2
const FAILED = 3

export async function active(fiber: Fiber, maxTurns = 200): Promise<void> {
  for (let turn = 0; turn < maxTurns; turn++) {
    if (fiber.inertia) await fiber.inertia
    if (fiber.state === ACTIVE && !fiber.inertia) return
    if (fiber.state === FAILED) throw new Error(`plugin ${fiber.name} failed to load`)
    await new Promise((resolve) => setImmediate(resolve))
  }
  throw new Error(`plugin ${fiber.name} is still not active (state ${fiber.state}): a missing injected service?`)
}
