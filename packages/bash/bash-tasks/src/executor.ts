import type { Context } from 'cordis'
import {
  BashExecutor,
  type BashExecRequest, type BashExecSpec, type BashRunResult, type BashTask, type BashTaskDoneListener, type BashTaskRead,
  type BashWaitOptions, type BashWaitOutcome,
} from '@deepseek-ai/dsh-bash'
import type { TaskProcess } from './process.ts'
import { TaskTable, type TaskOffsets, type TaskTableOptions } from './table.ts'

/**
 * Where the executor keeps its table. A method called through Cordis runs on a tracing proxy, on which every string
 * property read looks itself up in the context's reflection table (and allocates a proxy for that); symbol reads
 * pass straight through.
 */
const TABLE: unique symbol = Symbol('table')

/**
 * A `BashExecutor` whose background tasks live in the shared task table. A provider implements `resolve`, `run`
 * and `spawnTask` only; `run` may hand a foreground command's leftovers to `adopt`. The table kills a session's
 * tasks when `ctx.tools.endSession(id)` runs, sends completion notices through `ctx.tools.notify`, and stops every
 * task when the executor is disposed.
 */
export abstract class TaskBashExecutor extends BashExecutor {
  private readonly [TABLE]: TaskTable

  constructor(ctx: Context, options: TaskTableOptions = {}) {
    super(ctx)
    const table = new TaskTable(ctx, options)
    this[TABLE] = table
    ctx.on('tools/session-end', (sessionId) => table.endSession(sessionId))
    ctx.effect(() => () => table.close(), 'bash tasks')
  }

  abstract override resolve(request: BashExecRequest): BashExecSpec

  abstract override run(spec: BashExecSpec): Promise<BashRunResult>

  /**
   * Starts `spec` as a background process (no timeout; ignore `spec.signal`: the table wires it to `kill`). Rejects
   * like `run` when nothing could start. Only called while the executor is open.
   */
  protected abstract spawnTask(spec: BashExecSpec): Promise<TaskProcess>

  /**
   * Registers a process that already runs as a task of `spec.owner` (what a foreground command left running);
   * `offsets` is where its unread output starts (what the foreground result already showed is not repeated).
   */
  protected adopt(spec: BashExecSpec, process: TaskProcess, offsets: TaskOffsets): BashTask {
    return this[TABLE].adopt(spec, process, offsets)
  }

  /** Throws BASH_DISPOSED once disposal began (for `run`'s own checks). */
  protected assertOpen(): void {
    this[TABLE].assertOpen()
  }

  start(spec: BashExecSpec): Promise<BashTask> {
    return this[TABLE].start(spec, () => this.spawnTask(spec))
  }

  get(id: string): BashTask | undefined {
    return this[TABLE].get(id)
  }

  list(): BashTask[] {
    return this[TABLE].list()
  }

  ownerOf(id: string): string | undefined {
    return this[TABLE].ownerOf(id)
  }

  readOutput(id: string): BashTaskRead {
    return this[TABLE].readOutput(id)
  }

  waitFor(id: string, options: BashWaitOptions): Promise<BashWaitOutcome> {
    return this[TABLE].waitFor(id, options)
  }

  kill(id: string): Promise<boolean> {
    return this[TABLE].kill(id)
  }

  onTaskDone(listener: BashTaskDoneListener): () => Promise<void> {
    // `this.ctx` is the caller's context here: the listener goes away with the plugin that registered it.
    return this.ctx.effect(() => this[TABLE].addListener(listener), 'bash.onTaskDone')
  }
}
