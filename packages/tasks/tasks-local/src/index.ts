import type { Context } from 'cordis'
import Schema from 'schemastery'
import {
  TaskService,
  type Task,
  type TaskDoneListener,
  type TaskInit,
  type TaskRead,
  type TaskWaitOptions,
  type TaskWaitOutcome,
} from '@deepseek-ai/dsh-tasks'
import type {} from '@deepseek-ai/dsh-tools'
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
 * The local `ctx.tasks`: one in-memory table. A session's end (`ctx.tools.endSession`) kills its tasks; completion
 * notices go out through `ctx.tools.notify`; disposal stops every task it holds and waits for it.
 */
export class LocalTaskService extends TaskService {
  static readonly Config = Config
  private readonly [TABLE]: TaskTable

  constructor(ctx: Context, config: Partial<Config> = {}) {
    super(ctx)
    const table = new TaskTable(ctx, Config(config))
    this[TABLE] = table
    ctx.on('tools/session-end', (sessionId) => table.endSession(sessionId))
    ctx.effect(() => () => table.close(), 'tasks')
  }

  add(init: TaskInit): Task {
    return this[TABLE].add(init)
  }

  get(id: string): Task | undefined {
    return this[TABLE].get(id)
  }

  list(): Task[] {
    return this[TABLE].list()
  }

  ownerOf(id: string): string | undefined {
    return this[TABLE].ownerOf(id)
  }

  readOutput(id: string): TaskRead {
    return this[TABLE].readOutput(id)
  }

  waitFor(id: string, options: TaskWaitOptions): Promise<TaskWaitOutcome> {
    return this[TABLE].waitFor(id, options)
  }

  write(id: string, text: string): Promise<void> {
    return this[TABLE].write(id, text)
  }

  kill(id: string): Promise<boolean> {
    return this[TABLE].kill(id)
  }

  onTaskDone(listener: TaskDoneListener): () => Promise<void> {
    // `this.ctx` is the caller's context here: the listener goes away with the plugin that registered it.
    return this.ctx.effect(() => this[TABLE].addListener(listener), 'tasks.onTaskDone')
  }

  endSession(owner: string): Promise<void> {
    return this[TABLE].endSession(owner)
  }
}

export default LocalTaskService
