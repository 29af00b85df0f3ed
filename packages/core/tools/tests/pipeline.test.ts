import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { createTestContext, type TestContext, sessionFor } from '@deepseek-ai/dsh-testing'
import {
  CoreErrorCode,
  createSession,
  HarnessError,
  type ToolDefinition,
  type ToolExecution,
} from '@deepseek-ai/dsh-tools'

let t: TestContext
beforeEach(async () => {
  t = await createTestContext()
})
afterEach(async () => {
  await t.dispose()
})

const params = {
  type: 'object',
  properties: {
    pattern: { type: 'string', description: 'what to look for' },
    limit: { type: 'integer', minimum: 1, description: 'how many' },
  },
  required: ['pattern'],
  additionalProperties: false,
} as const

function recorder(name = 'probe'): ToolDefinition & { calls: Array<{ args: unknown; exec: ToolExecution }> } {
  const calls: Array<{ args: unknown; exec: ToolExecution }> = []
  return {
    name,
    description: 'records its calls',
    parameters: params,
    calls,
    execute(args, exec) {
      calls.push({ args, exec })
      return `ok ${String(args.pattern)}`
    },
  }
}

describe('execute', () => {
  test('a call that fits the schema returns the tool text as a non-error result', async () => {
    const tool = recorder()
    t.ctx.tools.register(tool)
    const result = await t.ctx.tools.execute(
      'probe',
      { pattern: 'x' },
      { session: sessionFor('s1', '/tmp'), callId: 'c-7' },
    )
    expect(result).toEqual({ content: [{ type: 'text', text: 'ok x' }], isError: false })
    const exec = tool.calls[0]!.exec
    expect(exec.callId).toBe('c-7')
    expect(exec.name).toBe('probe')
    expect(exec.session).toBe(sessionFor('s1', '/tmp'))
    expect(exec.signal).toBeInstanceOf(AbortSignal)
  })

  test('the signal is always present, even without a caller signal or session', async () => {
    const tool = recorder()
    t.ctx.tools.register(tool)
    await t.ctx.tools.execute('probe', { pattern: 'x' })
    expect(tool.calls[0]!.exec.signal.aborted).toBe(false)
    expect(tool.calls[0]!.exec.session).toBeUndefined()
  })

  test('a tool may return { text, value }: the value travels beside the text', async () => {
    t.ctx.tools.register({
      name: 'structured',
      description: 'd',
      parameters: { type: 'object' },
      execute: () => ({ text: 't', value: { n: 1 } }),
    })
    expect(await t.ctx.tools.execute('structured', {})).toEqual({
      content: [{ type: 'text', text: 't' }],
      isError: false,
      value: { n: 1 },
    })
  })

  test('an already-aborted caller signal never dispatches', async () => {
    const tool = recorder()
    t.ctx.tools.register(tool)
    const controller = new AbortController()
    controller.abort()
    const result = await t.ctx.tools.execute('probe', { pattern: 'x' }, { signal: controller.signal })
    expect(result).toEqual({
      content: [{ type: 'text', text: 'Error: tool call aborted before dispatch' }],
      isError: true,
      error: {
        message: 'tool call aborted before dispatch',
        name: 'HarnessError',
        code: 'TOOL_ABORTED_BEFORE_DISPATCH',
      },
    })
    expect(tool.calls).toHaveLength(0)
  })

  test('an unknown tool is an UNKNOWN_TOOL error naming what exists', async () => {
    t.ctx.tools.register(recorder('alpha'))
    t.ctx.tools.register(recorder('beta'))
    const result = await t.ctx.tools.execute('gamma', {})
    expect(result.isError).toBe(true)
    expect(result.content[0].text).toBe('Error: unknown tool "gamma" (available: alpha, beta)')
    expect(result.error?.code).toBe(CoreErrorCode.UNKNOWN_TOOL)
  })

  test('a thrown HarnessError keeps its name and code', async () => {
    class SearchError extends HarnessError {
      override name = 'SearchError'
    }
    t.ctx.tools.register({
      name: 'fails',
      description: 'd',
      parameters: { type: 'object' },
      execute: () => {
        throw new SearchError('grep search failed (exit 2): nope', { code: 'SEARCH_FAILED' })
      },
    })
    expect(await t.ctx.tools.execute('fails', {})).toEqual({
      content: [{ type: 'text', text: 'Error: grep search failed (exit 2): nope' }],
      isError: true,
      error: { message: 'grep search failed (exit 2): nope', name: 'SearchError', code: 'SEARCH_FAILED' },
    })
  })

  test('any other thrown value still gets a code: TOOL_FAILED', async () => {
    t.ctx.tools.register({
      name: 'bug',
      description: 'd',
      parameters: { type: 'object' },
      execute: () => {
        throw new TypeError('x is undefined')
      },
    })
    t.ctx.tools.register({
      name: 'str',
      description: 'd',
      parameters: { type: 'object' },
      execute: async () => {
        throw 'plain string'
      },
    })
    expect((await t.ctx.tools.execute('bug', {})).error).toEqual({
      message: 'x is undefined',
      name: 'TypeError',
      code: 'TOOL_FAILED',
    })
    expect(await t.ctx.tools.execute('str', {})).toMatchObject({
      content: [{ text: 'Error: plain string' }],
      error: { code: 'TOOL_FAILED' },
    })
  })

  test('a non-HarnessError thrown after the caller aborted is ABORTED', async () => {
    const controller = new AbortController()
    t.ctx.tools.register({
      name: 'slow',
      description: 'd',
      parameters: { type: 'object' },
      execute: (_args, exec) =>
        new Promise((_resolve, reject) => {
          exec.signal.addEventListener('abort', () => reject(new Error('stopped')))
          controller.abort()
        }),
    })
    const result = await t.ctx.tools.execute('slow', {}, { signal: controller.signal })
    expect(result).toMatchObject({
      isError: true,
      content: [{ text: 'Error: tool call aborted' }],
      error: { code: 'ABORTED' },
    })
  })
})

describe('argument validation', () => {
  let calls = 0
  const invalid = async (args: unknown): Promise<string> => {
    const tool = recorder(`probe${++calls}`)
    t.ctx.tools.register(tool)
    const result = await t.ctx.tools.execute(tool.name, args)
    expect(result.isError).toBe(true)
    expect(result.error?.code).toBe('INVALID_ARGS')
    expect(tool.calls).toHaveLength(0)
    return result.content[0].text
  }

  test('a missing required property', async () => {
    expect(await invalid({})).toBe('Error: invalid arguments: missing required property "pattern"')
  })

  test('a wrong type', async () => {
    expect(await invalid({ pattern: 3 })).toBe('Error: invalid arguments: property "pattern" must be a string')
  })

  test('an extra property is rejected, so a misspelt option never passes silently', async () => {
    expect(await invalid({ pattern: 'x', limt: 3 })).toBe('Error: invalid arguments: unexpected property "limt"')
  })

  test('every problem of one call is reported at once', async () => {
    expect(await invalid({ limit: 0, extra: true })).toBe(
      'Error: invalid arguments: missing required property "pattern"; unexpected property "extra"; property "limit" must be >= 1',
    )
  })

  test('arguments that are not an object', async () => {
    expect(await invalid([])).toBe('Error: invalid arguments: arguments must be an object')
    expect(await invalid('pattern')).toBe('Error: invalid arguments: arguments must be an object')
  })

  test('values that are not plain JSON never reach a tool', async () => {
    expect(await invalid({ pattern: 'x', limit: NaN })).toBe(
      'Error: invalid arguments: property "limit" must be a JSON value, got NaN',
    )
    expect(await invalid({ pattern: () => 1 })).toBe(
      'Error: invalid arguments: property "pattern" must be a JSON value, got function',
    )
    expect(await invalid({ pattern: undefined })).toBe(
      'Error: invalid arguments: property "pattern" must be a JSON value, got undefined',
    )
    expect(await invalid({ pattern: new Date(0) })).toBe(
      'Error: invalid arguments: property "pattern" must be a JSON value, got Date',
    )
    const cycle: Record<string, unknown> = { pattern: 'x' }
    cycle.self = cycle
    expect(await invalid(cycle)).toBe(
      'Error: invalid arguments: property "self" must be a JSON value, got a circular reference',
    )
  })

  test("a schema ajv cannot compile fails that tool's calls with TOOL_FAILED, not the registry", async () => {
    t.ctx.tools.register({
      name: 'broken',
      description: 'd',
      parameters: { type: 'object', properties: { a: { type: 'strnig' } } },
      execute: () => 'never',
    })
    const result = await t.ctx.tools.execute('broken', { a: 'x' })
    expect(result.error?.code).toBe('TOOL_FAILED')
    expect(result.content[0].text).toMatch(/^Error: tool "broken" has an unusable parameter schema: .*strnig/)
  })

  test('missing arguments count as an empty object', async () => {
    t.ctx.tools.register({
      name: 'noargs',
      description: 'd',
      parameters: { type: 'object', properties: {}, additionalProperties: false },
      execute: () => 'fine',
    })
    expect((await t.ctx.tools.execute('noargs')).content[0].text).toBe('fine')
  })
})

describe('hooks', () => {
  test('a pre-execute listener may deny with a reason; the tool is not called', async () => {
    const tool = recorder()
    t.ctx.tools.register(tool)
    t.ctx.on('tools/pre-execute', (call) =>
      call.definition.name === 'probe' ? { deny: 'read-only session' } : undefined,
    )
    const result = await t.ctx.tools.execute('probe', { pattern: 'x' })
    expect(result).toMatchObject({
      isError: true,
      content: [{ text: 'Error: tool call denied: read-only session' }],
      error: { code: 'TOOL_DENIED' },
    })
    expect(tool.calls).toHaveLength(0)
  })

  test('a pre-execute listener that throws denies the call instead of running it unchecked', async () => {
    const tool = recorder()
    t.ctx.tools.register(tool)
    t.ctx.on('tools/pre-execute', () => {
      throw new Error('policy store offline')
    })
    const result = await t.ctx.tools.execute('probe', { pattern: 'x' })
    expect(result.content[0].text).toBe('Error: tool call denied: a pre-execute hook failed: policy store offline')
    expect(tool.calls).toHaveLength(0)
  })

  test('post-execute listeners run in order and may replace the result', async () => {
    t.ctx.tools.register(recorder())
    t.ctx.on('tools/post-execute', (call) => {
      call.result = { ...call.result, content: [{ type: 'text', text: `${call.result.content[0].text} +a` }] }
    })
    t.ctx.on('tools/post-execute', (call) => {
      call.result = { ...call.result, content: [{ type: 'text', text: `${call.result.content[0].text} +b` }] }
    })
    expect((await t.ctx.tools.execute('probe', { pattern: 'x' })).content[0].text).toBe('ok x +a +b')
  })

  test('a post-execute listener that throws keeps the tool result (and is reported)', async () => {
    const local = await createTestContext({ allowWarnings: true })
    try {
      local.ctx.tools.register(recorder())
      local.ctx.on('tools/post-execute', () => {
        throw new Error('broken hook')
      })
      expect((await local.ctx.tools.execute('probe', { pattern: 'x' })).content[0].text).toBe('ok x')
    } finally {
      await local.dispose()
    }
  })
})

describe('registry', () => {
  test('a duplicate name is rejected', () => {
    t.ctx.tools.register(recorder('dup'))
    expect(() => t.ctx.tools.register(recorder('dup'))).toThrow('a tool named "dup" is already registered')
  })

  test('the disposer removes the tool and frees the name', async () => {
    const dispose = t.ctx.tools.register(recorder('temp'))
    expect(t.ctx.tools.get('temp')).toBeDefined()
    await dispose()
    expect(t.ctx.tools.get('temp')).toBeUndefined()
    t.ctx.tools.register(recorder('temp'))
  })

  test('a tool registered by a plugin is gone after that plugin is disposed', async () => {
    const fiber = t.ctx.plugin({
      name: 'provider',
      inject: ['tools'],
      apply: (ctx) => {
        ctx.tools.register(recorder('owned'))
      },
    })
    await t.active(fiber)
    expect(t.ctx.tools.list().map((d) => d.name)).toEqual(['owned'])
    await fiber.dispose()
    expect(t.ctx.tools.list()).toEqual([])
  })

  test('schemas() lists name, description and parameters only, in name order', () => {
    t.ctx.tools.register({ ...recorder('zeta'), timeoutMs: 5 })
    t.ctx.tools.register(recorder('alpha'))
    const schemas = t.ctx.tools.schemas()
    expect(schemas.map((s) => s.name)).toEqual(['alpha', 'zeta'])
    expect(Object.keys(schemas[1]!)).toEqual(['name', 'description', 'parameters'])
  })
})

test('a consumer that injects a missing service stays pending and becomes active when a provider loads', async () => {
  const local = await createTestContext({ withTools: false })
  try {
    const seen: string[] = []
    const consumer = local.ctx.plugin({
      name: 'consumer',
      inject: ['tools'],
      apply: (ctx) => {
        ctx.tools.register(recorder('late'))
        seen.push('applied')
      },
    })
    await Promise.resolve()
    expect(seen).toEqual([])
    const { ToolsService } = await import('@deepseek-ai/dsh-tools')
    await local.ctx.plugin(ToolsService)
    await local.active(consumer)
    expect(seen).toEqual(['applied'])
    expect(local.ctx.tools.get('late')).toBeDefined()
  } finally {
    await local.dispose()
  }
})

test('a call of a session whose root was moved fails WORKSPACE_ROOT_MOVED before the tool runs, for any tool', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-pipeline-root-'))
  const ran: string[] = []
  t.ctx.tools.register({
    name: 'touch',
    description: 'records that it ran',
    parameters: { type: 'object' },
    execute: () => {
      ran.push('touch')
      return 'ran'
    },
  })
  mkdirSync(join(dir, 'sub'))
  const session = createSession({ id: 'y', cwd: join(dir, 'sub') })
  try {
    expect((await t.ctx.tools.execute('touch', {}, { session })).isError).toBeFalsy()
    renameSync(join(dir, 'sub'), join(dir, 'sub.real'))
    symlinkSync(tmpdir(), join(dir, 'sub'))
    const moved = await t.ctx.tools.execute('touch', {}, { session })
    expect(moved).toMatchObject({ isError: true, error: { code: 'WORKSPACE_ROOT_MOVED' } })
    expect(moved.content[0].text).toMatch(/^Error: touch refused: the session's root .* was moved or replaced/)
    expect(ran).toEqual(['touch'])
  } finally {
    await session.dispose()
    rmSync(dir, { recursive: true, force: true })
  }
})
