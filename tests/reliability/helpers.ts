import { createHash } from 'node:crypto'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { ToolResult } from '@deepseek-ai/dsh-tools'
import { createDefaultContext, type DefaultContext } from 'dsh-agent-tools'

// The shared process helpers: a unique sleep marker, a /proc scan for it, a bounded poll.
export { processesWith, straySleeps, uniqueSleep, until } from '@deepseek-ai/dsh-testing'

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
export { BIN } from '../../packages/host/cli/tests/helpers.ts'
export const RG = join(ROOT, 'node_modules/@vscode/ripgrep-linux-x64/bin/rg')

/** Fuzz runs per property: a CI-sized default, more with DSH_FUZZ_RUNS. */
export const FUZZ_RUNS = Number(process.env.DSH_FUZZ_RUNS ?? '') > 0 ? Number(process.env.DSH_FUZZ_RUNS) : 500
/** The fixed seed of every property (override with DSH_FUZZ_SEED to explore). */
export const FUZZ_SEED = Number(process.env.DSH_FUZZ_SEED ?? '') || 20261130

/** A default composition whose logged warnings and errors are collected (a test asserts there are none). */
export async function host(config: unknown = {}): Promise<DefaultContext & { problems: string[] }> {
  const problems: string[] = []
  const context = await createDefaultContext({ config, log: (line) => problems.push(line) })
  return Object.assign(context, { problems })
}

export interface Temp {
  readonly dir: string
  cleanup(): void
}

/** A fresh temp directory holding `files` (path → content); remove with `cleanup`. */
export function temp(prefix: string, files: Record<string, string | Buffer> = {}): Temp {
  const dir = mkdtempSync(join(tmpdir(), `dsh-rel-${prefix}-`))
  for (const [path, content] of Object.entries(files)) {
    const full = join(dir, path)
    mkdirSync(dirname(full), { recursive: true })
    writeFileSync(full, content)
  }
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) }
}

/** Every entry under `dir` with a digest of its content: two equal snapshots mean nothing changed. */
export function snapshot(dir: string): string[] {
  const out: string[] = []
  const walk = (sub: string) => {
    for (const entry of readdirSync(join(dir, sub), { withFileTypes: true }).sort((a, b) =>
      a.name < b.name ? -1 : 1,
    )) {
      const rel = sub ? `${sub}/${entry.name}` : entry.name
      if (entry.isDirectory()) {
        out.push(`${rel}/`)
        walk(rel)
      } else {
        out.push(
          `${rel} ${createHash('sha256')
            .update(readFileSync(join(dir, rel)))
            .digest('hex')}`,
        )
      }
    }
  }
  walk('')
  return out
}

/** The shape every call must have: a result, and when it is an error, a code string. */
export function assertWellFormed(result: ToolResult): void {
  if (typeof result !== 'object' || result === null) throw new Error(`not a ToolResult: ${String(result)}`)
  const block = result.content?.[0]
  if (block?.type !== 'text' || typeof block.text !== 'string')
    throw new Error(`no text block: ${JSON.stringify(result)}`)
  if (result.isError) {
    if (typeof result.error?.code !== 'string' || result.error.code === '')
      throw new Error(`error without a code: ${JSON.stringify(result)}`)
  }
}

export const textOf = (result: ToolResult) => result.content[0].text

/** Open descriptors of this process, with what each points at (for a readable failure). */
export function openFds(): string[] {
  const out: string[] = []
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      out.push(`${fd} -> ${readlinkSync(`/proc/self/fd/${fd}`)}`)
    } catch {}
  }
  return out
}

/** Peak resident set of this process so far, MiB (VmHWM). */
export function peakRssMiB(): number {
  const kb = /VmHWM:\s*(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]
  return Number(kb ?? 0) / 1024
}
