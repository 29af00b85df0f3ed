// Small shared helpers for the benchmarks: side-by-side and paired rounds, medians, ratios, peak RSS, and the rows
// of the one summary table that `npm run bench` prints (summaryRow).
import { appendFileSync } from 'node:fs'
import os from 'node:os'
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
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss())
  }, everyMs)
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

/**
 * Paired rounds against a floor: every round times the floor, then each candidate (in an order that rotates, so
 * no candidate always runs right after the floor), and divides. Returns the floor's median ms and, per candidate,
 * the median of its per-round ratios (noise that hits one round hits its floor too) and its median ms.
 */
export async function pairedRatios(floor, candidates, { rounds = 11, warmup = 1, settle } = {}) {
  const names = Object.keys(candidates)
  const floorMs = []
  const samples = Object.fromEntries(names.map((name) => [name, { ratios: [], ms: [] }]))
  for (let round = 0; round < warmup + rounds; round++) {
    // settle (untimed): lets work a run deferred past its last call finish, so it is not timed in the next run.
    if (settle) await settle()
    const base = await time(floor)
    const order = names.map((_, i) => names[(i + round) % names.length])
    for (const name of order) {
      if (settle) await settle()
      const ms = await time(candidates[name])
      if (round < warmup) continue
      samples[name].ratios.push(ms / base)
      samples[name].ms.push(ms)
    }
    if (round >= warmup) floorMs.push(base)
  }
  return {
    floorMs: median(floorMs),
    ...Object.fromEntries(
      names.map((name) => [name, { ratio: median(samples[name].ratios), ms: median(samples[name].ms) }]),
    ),
  }
}

export function loadAverage() {
  return os
    .loadavg()
    .map((value) => value.toFixed(2))
    .join(' ')
}

/**
 * One row of the table `npm run bench` prints at the end (bench/run.mjs collects the rows of every bench file):
 * `figure` what is measured, `value` now, `goal` its upper bound, in `unit` (`×` for a ratio against `floor`, a
 * floor measured in the same run; or `MiB`, `ms`). Also printed where it is measured; run alone, a bench file
 * prints only that.
 */
export function summaryRow({ figure, value, goal, unit = '×', floor = '' }) {
  const entry = { figure, value, goal, unit, floor, load: os.loadavg()[0] }
  row(
    `${figure}${floor ? ` (vs ${floor})` : ''}`,
    `${formatValue(value, unit)}  goal ≤ ${formatValue(goal, unit)}  ${value <= goal ? 'met' : 'NOT met'}`,
  )
  if (process.env.DSH_BENCH_SUMMARY) appendFileSync(process.env.DSH_BENCH_SUMMARY, `${JSON.stringify(entry)}\n`)
}

export function formatValue(value, unit) {
  if (unit === '×') return `${value.toFixed(2)}×`
  if (unit === 'MiB') return `${value.toFixed(1)} MiB`
  return `${value.toFixed(1)} ${unit}`
}
