import { type Context, Service } from 'cordis'
import { CoreErrorCode, HarnessError } from './errors.ts'
import { errorResult, outputToResult } from './results.ts'
import type {
  ExecuteOptions,
  SessionNotice,
  ToolCall,
  ToolDefinition,
  ToolDenial,
  ToolResult,
  ToolSchema,
} from './types.ts'
import { cut, listProblems, quote } from './error-text.ts'
import type { ToolSession } from './session.ts'
import { aliasProblem, type CheckedArguments, checkArguments } from './validation.ts'

declare module 'cordis' {
  interface Context {
    tools: ToolsService
  }
  interface Events {
    /** Before the tool runs: may replace `call.signal`, or deny the call by returning `{ deny: reason }`. */
    'tools/pre-execute'(call: ToolCall): void | ToolDenial | Promise<void | ToolDenial>
    /** After the tool ran (or was denied): may replace `call.result`. Listeners run in registration order. */
    'tools/post-execute'(call: ToolCall & { result: ToolResult }): void | Promise<void>
    /** A notice for one session's model, outside any call (see `ToolsService.notify`). */
    'tools/session-notice'(notice: SessionNotice): void
  }
}

const NAME = /^[a-zA-Z0-9_-]{1,64}$/
/** Notices kept per session until its next result; older ones are dropped (and counted) past this. */
const MAX_PENDING_NOTICES = 20
const PIPELINE = Symbol('dsh.tools.pipeline')
/** A session's notices not yet delivered in a result, kept in the session. */
const PENDING = Symbol('dsh.tools.pending-notices')

function pendingOf(session: ToolSession): { notices: SessionNotice[]; dropped: number } {
  return session.slot(PENDING, () => ({ notices: [], dropped: 0 }))
}
/** The blank line between a result and its notices. */
const SEPARATOR_BYTES = 2

/** How many of `lines`, from the first, joined by newlines take at most `room` UTF-8 bytes. */
function linesWithin(lines: readonly string[], room: number): number {
  let used = -1
  for (let i = 0; i < lines.length; i++) {
    used += 1 + Buffer.byteLength(lines[i] as string, 'utf8')
    if (used > room) return i
  }
  return lines.length
}

/**
 * The registry and the pipeline's state and behaviour, kept out of the Cordis service object: every property read on
 * a service reached through `ctx.tools` goes through Cordis' tracing proxy (a method read builds a derived context
 * and two proxies), which cost about half of a trivial call's pipeline when every step read `this`.
 */
class Pipeline {
  readonly definitions = new Map<string, ToolDefinition>()
  private callCounter = 0

  // The event methods, read once: each read of `ctx.serial` builds a traceable wrapper anew.
  private readonly serial: Context['serial']
  private readonly emit: Context['emit']

  constructor(private readonly ctx: Context) {
    this.serial = ctx.serial
    this.emit = ctx.emit
  }

  list(): ToolDefinition[] {
    return [...this.definitions.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  }

  notify(notice: SessionNotice): void {
    if (notice.session.disposed) return
    const queue = pendingOf(notice.session)
    queue.notices.push(notice)
    if (queue.notices.length > MAX_PENDING_NOTICES) {
      queue.notices.shift()
      queue.dropped++
    }
    try {
      this.emit('tools/session-notice', notice)
    } catch (error) {
      this.ctx.logger('tools').warn('a session-notice listener failed: %s', (error as Error)?.message ?? String(error))
    }
  }

  withdrawNotice(session: ToolSession, key: string): void {
    const queue = pendingOf(session)
    queue.notices = queue.notices.filter((notice) => notice.key !== key)
  }

  async execute(name: string, args: unknown, options: ExecuteOptions): Promise<ToolResult> {
    const callerSignal = options.signal ?? new AbortController().signal
    if (callerSignal.aborted) {
      return errorResult(
        new HarnessError('tool call aborted before dispatch', { code: CoreErrorCode.TOOL_ABORTED_BEFORE_DISPATCH }),
      )
    }
    const definition = this.definitions.get(name)
    if (!definition) {
      const known =
        this.list()
          .map((d) => d.name)
          .join(', ') || 'none'
      return errorResult(
        new HarnessError(`unknown tool ${quote(String(name))} (available: ${known})`, {
          code: CoreErrorCode.UNKNOWN_TOOL,
        }),
      )
    }
    // The arguments as the tool sees them: other clients' names for ours already renamed (docs/model-surface.md#tools).
    let checked: CheckedArguments
    try {
      checked = await checkArguments(definition.parameters, args, definition.aliases)
    } catch (error) {
      return errorResult(
        new HarnessError(
          `tool "${name}" has an unusable parameter schema: ${cut(String((error as Error)?.message ?? error), 1000)}`,
          { code: CoreErrorCode.TOOL_FAILED, cause: error },
        ),
      )
    }
    if (checked.problems.length) {
      return errorResult(
        new HarnessError(`invalid arguments: ${listProblems(checked.problems)}`, { code: CoreErrorCode.INVALID_ARGS }),
      )
    }
    // A session never follows its root elsewhere (docs/seams.md#sessions): every tool, whatever else it confines.
    try {
      options.session?.root?.check(name)
    } catch (error) {
      return errorResult(error)
    }
    const call: ToolCall = {
      definition,
      callId: options.callId ?? `call-${++this.callCounter}`,
      arguments: checked.arguments as Record<string, unknown>,
      ...(options.session ? { session: options.session } : {}),
      callerSignal,
      signal: callerSignal,
    }
    const denial = await this.preExecute(call)
    const result =
      denial !== undefined
        ? errorResult(new HarnessError(`tool call denied: ${denial}`, { code: CoreErrorCode.TOOL_DENIED }))
        : await this.run(call)
    // Notices join the result before post-execute, so the listeners (the spill policy's budget) see the final text.
    call.result = call.session ? this.withNotices(result, call.session, definition.maxResultBytes) : result
    await this.postExecute(call as ToolCall & { result: ToolResult })
    return call.result
  }

  /**
   * Appends the session's undelivered notices to its result, once, oldest first. Within the tool's `maxResultBytes`
   * (docs/model-surface.md#budgets) only as many as fit join it; the others wait for the session's next result, in order.
   */
  private withNotices(result: ToolResult, session: ToolSession, maxBytes: number | undefined): ToolResult {
    const queue = pendingOf(session)
    if (queue.notices.length === 0 && queue.dropped === 0) return result
    const lines = queue.notices.map((notice) => notice.text)
    if (queue.dropped) lines.unshift(`(${queue.dropped} earlier notice${queue.dropped === 1 ? '' : 's'} dropped)`)
    const text = result.content[0].text
    const fitting =
      maxBytes === undefined
        ? lines.length
        : linesWithin(lines, maxBytes - Buffer.byteLength(text, 'utf8') - SEPARATOR_BYTES)
    if (fitting === 0) return result
    const delivered = queue.dropped ? fitting - 1 : fitting
    queue.dropped = 0
    queue.notices.splice(0, delivered)
    const joined = `${text}\n\n${lines.slice(0, fitting).join('\n')}`
    const [, ...images] = result.content
    return { ...result, content: [{ type: 'text', text: joined }, ...images] }
  }

  private async preExecute(call: ToolCall): Promise<string | undefined> {
    try {
      const verdict = await this.serial('tools/pre-execute', call)
      return verdict && typeof verdict === 'object' && typeof verdict.deny === 'string' ? verdict.deny : undefined
    } catch (error) {
      return `a pre-execute hook failed: ${(error as Error)?.message ?? String(error)}`
    }
  }

  private async run(call: ToolCall): Promise<ToolResult> {
    const exec = {
      callId: call.callId,
      name: call.definition.name,
      arguments: call.arguments,
      signal: call.signal,
      ...(call.budgetMs === undefined ? {} : { budgetMs: call.budgetMs }),
      ...(call.session ? { session: call.session } : {}),
    }
    try {
      return outputToResult(await call.definition.execute(call.arguments, exec))
    } catch (error) {
      if (!(error instanceof HarnessError) && call.callerSignal.aborted) {
        return errorResult(new HarnessError('tool call aborted', { code: CoreErrorCode.ABORTED, cause: error }))
      }
      return errorResult(error)
    }
  }

  private async postExecute(call: ToolCall & { result: ToolResult }): Promise<void> {
    try {
      await this.serial('tools/post-execute', call)
    } catch (error) {
      // A broken hook must not lose the tool's work: keep the result and report the hook.
      this.ctx.logger('tools').warn('a post-execute hook failed: %s', (error as Error)?.message ?? String(error))
    }
  }
}

/** `ctx.tools`: the registry of model-facing tools and the one pipeline every call goes through. */
export class ToolsService extends Service {
  static readonly provide = 'tools'
  /** Under a symbol, which Cordis' proxy passes through untouched. */
  private readonly [PIPELINE]: Pipeline

  constructor(ctx: Context) {
    super(ctx, 'tools')
    this[PIPELINE] = new Pipeline(ctx)
    // Cordis' own services do the same: a method read through `ctx.tools` is then the method itself, not a proxy
    // over a derived context built per read (about 100 µs of every `ctx.tools.execute(…)`). `this.ctx` inside a
    // method is still the caller's context (the proxy answers it), which is what `register` relies on.
    const tracker = (this as unknown as Record<symbol, { noShadow?: boolean } | undefined>)[Service.tracker]
    if (tracker) tracker.noShadow = true
  }

  /** Registers a tool for as long as the calling plugin lives; the returned function removes it sooner. */
  register<A>(definition: ToolDefinition<A>): () => Promise<void> {
    if (!NAME.test(definition.name)) {
      throw new HarnessError(
        `invalid tool name ${quote(String(definition.name))}: use 1-64 letters, digits, "_" or "-"`,
        { code: 'INVALID_TOOL_DEFINITION' },
      )
    }
    const aliases =
      definition.aliases === undefined ? undefined : aliasProblem(definition.parameters, definition.aliases)
    if (aliases !== undefined) {
      throw new HarnessError(`tool ${quote(definition.name)}: ${aliases}`, { code: 'INVALID_TOOL_DEFINITION' })
    }
    const { definitions } = this[PIPELINE]
    if (definitions.has(definition.name)) {
      throw new HarnessError(`a tool named ${quote(definition.name)} is already registered`, { code: 'DUPLICATE_TOOL' })
    }
    const def = definition as unknown as ToolDefinition
    // `this.ctx` is the caller's context here (Cordis' proxy): the tool lives as long as the registering plugin.
    return this.ctx.effect(() => {
      definitions.set(def.name, def)
      return () => {
        if (definitions.get(def.name) === def) definitions.delete(def.name)
      }
    }, `tools.register(${def.name})`)
  }

  get(name: string): ToolDefinition | undefined {
    return this[PIPELINE].definitions.get(name)
  }

  /** Registered tools, sorted by name so that everything derived from the list is byte-stable. */
  list(): ToolDefinition[] {
    return this[PIPELINE].list()
  }

  /** What the model sees of each tool: name, description, parameters, in name order. */
  schemas(): ToolSchema[] {
    return this[PIPELINE].list().map(({ name, title, description, parameters, annotations }) => ({
      name,
      ...(title === undefined ? {} : { title }),
      description,
      parameters,
      ...(annotations === undefined ? {} : { annotations }),
    }))
  }

  /**
   * Tells one session's model something outside any call: emits `tools/session-notice` now, and appends the text,
   * once, after a blank line, to the session's next tool result (whichever tool). Bounded per session.
   */
  notify(notice: SessionNotice): void {
    this[PIPELINE].notify(notice)
  }

  /** Drops a notice not yet delivered in a result (the model already learned it another way). */
  withdrawNotice(session: ToolSession, key: string): void {
    this[PIPELINE].withdrawNotice(session, key)
  }

  /** Runs one call through the whole pipeline. Never rejects: every failure is an error result with a code. */
  execute(name: string, args: unknown = {}, options: ExecuteOptions = {}): Promise<ToolResult> {
    return this[PIPELINE].execute(name, args, options)
  }
}
