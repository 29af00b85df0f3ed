import { createRequire } from 'node:module'
import type { Worker } from 'node:worker_threads'

/**
 * How long one test of a `wait_for` pattern against a task's new output may run. A JavaScript regex backtracks: a
 * pattern such as `(a+)+$` takes exponential time on a line of a's, and on the event loop it would stop every
 * timer — the wait's own timeout, every other call's, the host's. Far above what a sane pattern needs on megabytes.
 */
export const PATTERN_TEST_MS = 1000

// The worker's whole program: compile the pattern as given, test it on each text, answer whether any matched.
// lastIndex starts at 0 for every text.
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads')
parentPort.on('message', ({ source, flags, texts }) => {
  let matched = false
  try {
    const pattern = new RegExp(source, flags)
    matched = texts.some((text) => { pattern.lastIndex = 0; return pattern.test(text) })
  } catch {}
  parentPort.postMessage(matched)
})
`

interface Job {
  readonly pattern: RegExp
  readonly texts: readonly string[]
  readonly resolve: (outcome: boolean | 'too-slow') => void
}

/** How long a worker with nothing to test is kept before it is ended (the next test starts another). */
export const PATTERN_IDLE_MS = 10_000

/**
 * Tests model-supplied patterns off the event loop, one at a time, on one worker thread started on the first test.
 * A test that runs past its time is given up: the worker is terminated (a regex cannot be interrupted otherwise) and
 * the next test starts a new one. The worker never keeps the process alive, ends after `idleMs` without a test, and
 * `close` ends it. The task table keeps one tester per session, so one session's slow patterns never queue another's.
 */
export class PatternTester {
  private worker: Worker | undefined
  private readonly queue: Job[] = []
  private running: Job | undefined
  private timer: NodeJS.Timeout | undefined
  private idle: NodeJS.Timeout | undefined
  private closed = false

  constructor(
    private readonly limitMs: number = PATTERN_TEST_MS,
    private readonly idleMs: number = PATTERN_IDLE_MS,
  ) {}

  /** Whether `pattern` matches any of `texts` (one round trip); 'too-slow' when testing took longer than the limit. */
  test(pattern: RegExp, texts: readonly string[]): Promise<boolean | 'too-slow'> {
    if (this.closed) return Promise.resolve(false)
    return new Promise((resolve) => {
      this.queue.push({ pattern, texts, resolve })
      this.next()
    })
  }

  /** Ends the worker; tests still queued or running answer false. */
  async close(): Promise<void> {
    this.closed = true
    for (const job of this.queue.splice(0)) job.resolve(false)
    this.settle(false)
    await this.stop()
  }

  private next(): void {
    if (this.running || this.closed) return
    const job = this.queue.shift()
    if (!job) {
      clearTimeout(this.idle)
      if (this.worker)
        this.idle = setTimeout(() => {
          if (!this.running) void this.stop()
        }, this.idleMs).unref()
      return
    }
    clearTimeout(this.idle)
    this.running = job
    const worker = (this.worker ??= this.start())
    worker.ref()
    this.timer = setTimeout(() => {
      this.settle('too-slow')
      void this.stop().then(() => this.next())
    }, this.limitMs)
    worker.postMessage({ source: job.pattern.source, flags: job.pattern.flags, texts: job.texts })
  }

  private start(): Worker {
    // Loaded on the first test, not at import: node:worker_threads costs 2–4 ms of every cold start.
    const { Worker: Thread } = createRequire(import.meta.url)(
      'node:worker_threads',
    ) as typeof import('node:worker_threads')
    const worker = new Thread(WORKER_SOURCE, { eval: true, stdout: true, stderr: true })
    // Only the current worker speaks for the running test: one given up may still answer on its way out.
    worker.on('message', (matched: unknown) => {
      if (this.worker !== worker) return
      this.settle(matched === true)
      this.next()
    })
    // A worker that dies (out of memory on a huge text) answers no match; the next test starts another.
    worker.on('error', () => {
      if (this.worker !== worker) return
      this.worker = undefined
      this.settle(false)
      this.next()
    })
    worker.unref()
    return worker
  }

  private settle(outcome: boolean | 'too-slow'): void {
    const job = this.running
    if (!job) return
    this.running = undefined
    clearTimeout(this.timer)
    this.worker?.unref()
    job.resolve(outcome)
  }

  private async stop(): Promise<void> {
    clearTimeout(this.idle)
    const worker = this.worker
    this.worker = undefined
    await worker?.terminate()
  }
}
