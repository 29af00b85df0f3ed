import { CoreErrorCode, HarnessError } from '@deepseek-ai/dsh-tools'

export interface Deadline {
  /** Aborts on the parent's abort or when the budget runs out, whichever comes first. */
  readonly signal: AbortSignal
  /** True once the budget (not the parent) aborted the signal. */
  readonly expired: boolean
  /** Stops the timer and detaches from the parent; the signal stays as it is. */
  dispose(): void
}

/**
 * A derived signal for a budget of `ms`. The first cause wins: a parent abort keeps the parent's reason;
 * the timer's reason is a HarnessError carrying `code` (TOOL_TIMEOUT by default).
 */
export function deadline(parent: AbortSignal, ms: number, code: string = CoreErrorCode.TOOL_TIMEOUT): Deadline {
  const controller = new AbortController()
  let expired = false
  const onParentAbort = (): void => {
    controller.abort(parent.reason)
    dispose()
  }
  const dispose = (): void => {
    clearTimeout(timer)
    parent.removeEventListener('abort', onParentAbort)
  }
  const timer = setTimeout(() => {
    if (controller.signal.aborted) return
    expired = true
    controller.abort(new HarnessError(`timed out after ${ms}ms`, { code }))
    dispose()
  }, ms)
  if (parent.aborted) {
    controller.abort(parent.reason)
    clearTimeout(timer)
  } else {
    parent.addEventListener('abort', onParentAbort, { once: true })
  }
  return {
    signal: controller.signal,
    get expired() {
      return expired
    },
    dispose,
  }
}

export interface TimeoutBounds {
  /** Used when the request names no timeout. */
  defaultMs: number
  /** Longer requests are clamped to this. */
  maxMs: number
  /** Shorter requests are raised to this (default 1). */
  minMs?: number
}

/** The effective timeout for a request: the default when absent, clamped into [minMs, maxMs]. */
export function clampTimeout(requested: number | undefined, bounds: TimeoutBounds): number {
  const min = bounds.minMs ?? 1
  const value = requested === undefined || !Number.isFinite(requested) ? bounds.defaultMs : Math.floor(requested)
  return Math.min(bounds.maxMs, Math.max(min, value))
}
