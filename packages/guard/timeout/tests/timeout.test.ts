import { expect, test, vi } from 'vitest'
import fc from 'fast-check'
import { HarnessError } from '@deepseek-ai/dsh-tools'
import { clampTimeout, deadline } from '@deepseek-ai/dsh-timeout'

test('the deadline aborts with a coded HarnessError when its budget runs out', () => {
  vi.useFakeTimers()
  try {
    const d = deadline(new AbortController().signal, 50, 'TOOL_TIMEOUT')
    vi.advanceTimersByTime(49)
    expect(d.signal.aborted).toBe(false)
    vi.advanceTimersByTime(1)
    expect(d.signal.aborted).toBe(true)
    expect(d.expired).toBe(true)
    expect(d.signal.reason).toBeInstanceOf(HarnessError)
    expect((d.signal.reason as HarnessError).code).toBe('TOOL_TIMEOUT')
  } finally {
    vi.useRealTimers()
  }
})

test("a parent abort comes first: the reason is the parent's and the deadline never counts as expired", () => {
  vi.useFakeTimers()
  try {
    const parent = new AbortController()
    const d = deadline(parent.signal, 50)
    parent.abort('caller went away')
    expect(d.signal.aborted).toBe(true)
    expect(d.signal.reason).toBe('caller went away')
    vi.advanceTimersByTime(100)
    expect(d.expired).toBe(false)
    expect(vi.getTimerCount()).toBe(0)
  } finally {
    vi.useRealTimers()
  }
})

test('an already-aborted parent gives an aborted signal and no timer', () => {
  vi.useFakeTimers()
  try {
    const parent = new AbortController()
    parent.abort()
    const d = deadline(parent.signal, 50)
    expect(d.signal.aborted).toBe(true)
    expect(vi.getTimerCount()).toBe(0)
  } finally {
    vi.useRealTimers()
  }
})

test('dispose stops the timer and detaches from the parent', () => {
  vi.useFakeTimers()
  try {
    const parent = new AbortController()
    const d = deadline(parent.signal, 50)
    d.dispose()
    expect(vi.getTimerCount()).toBe(0)
    parent.abort()
    vi.advanceTimersByTime(100)
    expect(d.signal.aborted).toBe(false)
    expect(d.expired).toBe(false)
  } finally {
    vi.useRealTimers()
  }
})

test('clampTimeout defaults, floors and clamps', () => {
  const bounds = { defaultMs: 120_000, maxMs: 600_000 }
  expect(clampTimeout(undefined, bounds)).toBe(120_000)
  expect(clampTimeout(1_000_000, bounds)).toBe(600_000)
  expect(clampTimeout(0, bounds)).toBe(1)
  expect(clampTimeout(1500.7, bounds)).toBe(1500)
  expect(clampTimeout(Number.NaN, bounds)).toBe(120_000)
})

test('clampTimeout always lands inside [min, max]', () => {
  fc.assert(
    fc.property(
      fc.option(fc.double(), { nil: undefined }),
      fc.integer({ min: 1, max: 1e6 }),
      fc.integer({ min: 1, max: 1e6 }),
      (requested, a, b) => {
        const [minMs, maxMs] = a <= b ? [a, b] : [b, a]
        const value = clampTimeout(requested, { defaultMs: minMs, maxMs, minMs })
        return Number.isInteger(value) && value >= minMs && value <= maxMs
      },
    ),
    { seed: 42, numRuns: 500 },
  )
})
