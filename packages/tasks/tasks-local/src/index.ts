import type { Context } from 'cordis'
import Schema from 'schemastery'
import { TaskService, type SessionTasks, type TaskDoneListener } from '@deepseek-ai/dsh-tasks'
import type { ToolSession } from '@deepseek-ai/dsh-tools'
import { PATTERN_TEST_MS, PatternTester } from './pattern-tester.ts'
import { TaskTable } from './table.ts'

export const name = 'tasks-local'
export { PATTERN_TEST_MS, PatternTester }

export interface Config {
  maxFinishedTasks: number
  maxForgottenTasks: number
  patternTestMs: number
}

export const Config: Schema<Partial<Config>, Config> = Schema.object({
  maxFinishedTasks: Schema.natural()
    .min(1)
    .default(100)
    .description(
      "Finished tasks whose output is held until read; past this, the oldest one's output is dropped (its files stay).",
    ),
  maxForgottenTasks: Schema.natural()
    .min(0)
    .default(1000)
    .description('Dropped tasks that still answer with their final status; past this, the oldest become unknown.'),
  patternTestMs: Schema.natural()
    .min(1)
    .default(PATTERN_TEST_MS)
    .description(
      'How long one test of a wait_for pattern may run before the wait gives it up (catastrophic backtracking).',
    ),
})

/**
 * Where the service keeps its table. A method called through Cordis runs on a tracing proxy, on which every string
 * property read looks itself up in the context's reflection table (and allocates a proxy for that); symbol reads
 * pass straight through.
 */
const TABLE: unique symbol = Symbol('table')

/**
 * The local `ctx.tasks`: each session's tasks in a table kept in the session (ids from `bash-1`, another session's
 * unknown), ended by the session's `dispose()`; completion notices go out through `ctx.tools.notify`; disposal stops
 * every task it holds and waits for it.
 */
export class LocalTaskService extends TaskService {
  static readonly Config = Config
  private readonly [TABLE]: Tables

  constructor(ctx: Context, config: Partial<Config> = {}) {
    super(ctx)
    const tables = new Tables(ctx, Config(config))
    this[TABLE] = tables
    ctx.effect(() => () => tables.close(), 'tasks')
  }

  of(session: ToolSession | undefined): SessionTasks {
    return this[TABLE].of(session)
  }

  onTaskDone(listener: TaskDoneListener): () => Promise<void> {
    // `this.ctx` is the caller's context here: the listener goes away with the plugin that registered it.
    return this.ctx.effect(() => this[TABLE].addListener(listener), 'tasks.onTaskDone')
  }
}

/** The service's state: the table of tasks without a session, and every live table (for disposal; not keyed). */
class Tables {
  private readonly listeners = new Set<TaskDoneListener>()
  private readonly live = new Set<TaskTable>()
  private readonly unowned: TaskTable
  /** Where a session keeps its table of this service (a reloaded service starts afresh). */
  private readonly key = Symbol('dsh.tasks-local.table')
  private closed = false

  constructor(
    private readonly ctx: Context,
    private readonly options: Config,
  ) {
    this.unowned = this.make(undefined)
  }

  of(session: ToolSession | undefined): TaskTable {
    if (session === undefined) return this.unowned
    return session.slot(this.key, () => {
      const table = this.make(session)
      session.defer(async () => {
        this.live.delete(table)
        await table.end()
      })
      return table
    })
  }

  addListener(listener: TaskDoneListener): () => void {
    if (this.closed) return () => {}
    this.listeners.add(listener)
    return () => {
      this.listeners.delete(listener)
    }
  }

  async close(): Promise<void> {
    this.closed = true
    this.listeners.clear()
    await Promise.all([...this.live].map((table) => table.close()))
  }

  private make(session: ToolSession | undefined): TaskTable {
    const table = new TaskTable(this.ctx, this.options, session, this.listeners)
    if (this.closed) void table.close()
    this.live.add(table)
    return table
  }
}

export default LocalTaskService
