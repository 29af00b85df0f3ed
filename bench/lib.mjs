// Small shared helpers for the benchmarks: side-by-side rounds, medians, ratios, peak RSS.
import { performance } from 'node:perf_hooks'

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

/** Times `fn` once, in ms. */
export async function time(fn) {
  const start = performance.now()
  await fn()
  return performance.now() - start
}

/**
 * Runs the candidates interleaved (a, b, a, b, …) for `rounds` rounds so that machine noise hits both alike,
 * and returns the median ms of each.
 */
export async function sideBySide(candidates, { rounds = 7, warmup = 1 } = {}) {
  const samples = Object.fromEntries(Object.keys(candidates).map((k) => [k, []]))
  for (let round = 0; round < warmup + rounds; round++) {
    for (const [name, fn] of Object.entries(candidates)) {
      const ms = await time(fn)
      if (round >= warmup) samples[name].push(ms)
    }
  }
  return Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)]))
}

export function ratio(value, limit) {
  return `${(value / limit).toFixed(3)}×`
}

export function mib(bytes) {
  return `${(bytes / 1048576).toFixed(1)} MiB`
}

/** Samples RSS every `everyMs` while `fn` runs; returns { result, peakGrowth } relative to the start. */
export async function peakRssDuring(fn, everyMs = 5) {
  globalThis.gc?.()
  const base = process.memoryUsage.rss()
  let peak = base
  const timer = setInterval(() => { peak = Math.max(peak, process.memoryUsage.rss()) }, everyMs)
  try {
    const result = await fn()
    peak = Math.max(peak, process.memoryUsage.rss())
    return { result, peakGrowth: peak - base }
  } finally {
    clearInterval(timer)
  }
}

export function row(label, value) {
  console.log(`${label.padEnd(58)} ${value}`)
}
