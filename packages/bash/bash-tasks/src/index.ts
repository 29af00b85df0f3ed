export { CHILD_ENV } from './env.ts'
export { TaskBashExecutor } from './executor.ts'
export { DRAIN_MS, outputEnds, subprocessTask, type TaskExit, type TaskProcess, type TaskStream } from './process.ts'
export type { TaskOffsets, TaskTableOptions } from './table.ts'
