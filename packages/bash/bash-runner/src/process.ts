import type { TaskExit, TaskProcess } from '@deepseek-ai/dsh-tasks'
import type { SubprocessHandle } from '@deepseek-ai/dsh-subprocess'

/** How long output may keep arriving after a shell exits before the call stops waiting for it, in ms. */
export const DRAIN_MS = 250

/** Microtask turns given to `done` before a timer is set (the local provider's `done` follows `exited` in four). */
const QUICK_TURNS = 8

/** True when `handle`'s output ends within `ms` (its `done` settles); false when something still holds it open. */
export async function outputEnds(handle: SubprocessHandle, ms: number): Promise<boolean> {
  let ended = false
  const ends = handle.done.then(() => {
    ended = true
    return true
  })
  // Mostly the output ended before the exit was seen, and `done` settles a few microtasks later: no timer then.
  for (let turn = 0; turn < QUICK_TURNS && !ended; turn++) await undefined
  if (ended) return true
  let timer: NodeJS.Timeout | undefined
  const bound = new Promise<boolean>((resolve) => {
    timer = setTimeout(resolve, ms, false)
  })
  try {
    return await Promise.race([ends, bound])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * A `ctx.subprocess` handle as a task's process: it ends once its whole process group is gone and its output ended. A process
 * that left the group but holds the output open keeps the task running (its output is still the task's) until a
 * stop: then the table waits `drainMs` for the output, gives it up and names the holders in `leftRunning`.
 */
export function subprocessTask(handle: SubprocessHandle, options: { drainMs?: number } = {}): TaskProcess {
  const drainMs = options.drainMs ?? DRAIN_MS
  let stop!: () => void
  let stopping = false
  const stopped = new Promise<void>((resolve) => {
    stop = resolve
  })
  const ended = (async (): Promise<TaskExit> => {
    const exit = await handle.exited
    await handle.waitForExit()
    const ends = handle.done.then(() => true)
    const drained = await Promise.race([ends, stopped.then(() => outputEnds(handle, drainMs))])
    // After a stop, the handle may have given the output up by itself already: it still knows who held it.
    const leftRunning = drained && !stopping ? [] : handle.abandonOutput()
    await handle.done
    return { exitCode: exit.exitCode, signal: exit.signal, leftRunning }
  })()
  return {
    stdout: handle.collected.stdout,
    stderr: handle.collected.stderr,
    ended,
    terminate() {
      stopping = true
      stop()
      handle.terminate()
    },
    onOutput: (listener) => handle.onOutput(listener),
  }
}
