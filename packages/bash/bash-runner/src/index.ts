export { Config } from './config.ts'
export { CHILD_ENV } from './env.ts'
export { DRAIN_MS, outputEnds, subprocessTask } from './process.ts'
export { BashRunner, type Launcher } from './runner.ts'
