export { until } from '@deepseek-ai/dsh-testing'
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { createTestContext, type TestContext, sessionFor } from '@deepseek-ai/dsh-testing'
import { SystemPromptService } from '@deepseek-ai/dsh-system-prompt'
import type { SpawnRequest, SubprocessHandle } from '@deepseek-ai/dsh-subprocess'
import { SpillStore, type SaveTextRequest, type SavedText } from '@deepseek-ai/dsh-spill'
import type { ToolResult } from '@deepseek-ai/dsh-tools'
import Subprocess from '@deepseek-ai/dsh-subprocess-local'
import FsSearch, { type Config } from '../src/index.ts'

export { Subprocess }

/** Test-only observer: the real local provider (LocalSubprocess), recording every request and handle. */
export class RecordingSubprocess extends Subprocess {
  static readonly requests: SpawnRequest[] = []
  static readonly handles: SubprocessHandle[] = []
  override async spawn(request: SpawnRequest): Promise<SubprocessHandle> {
    RecordingSubprocess.requests.push(request)
    const handle = await super.spawn(request)
    RecordingSubprocess.handles.push(handle)
    return handle
  }

  static reset(): void {
    RecordingSubprocess.requests.length = 0
    RecordingSubprocess.handles.length = 0
  }
}

/** Test-only spill store that keeps saved texts in memory (stands in for a backend). */
export class MemorySpillStore extends SpillStore {
  static readonly saved: SaveTextRequest[] = []
  async saveText(request: SaveTextRequest): Promise<SavedText> {
    MemorySpillStore.saved.push(request)
    return {
      locator: `/memory/${request.owner.id}/${MemorySpillStore.saved.length}-${request.suggestedName}`,
      bytes: Buffer.byteLength(request.content),
      retrievalHint: 'Page through it with read (offset, limit) or search it with grep.',
    }
  }
}

/** Test-only spill store whose every save fails. */
export class BrokenSpillStore extends SpillStore {
  async saveText(): Promise<SavedText> {
    throw new Error('disk full')
  }
}

export interface Harness extends TestContext {
  readonly dir: string
  call(
    tool: 'glob' | 'grep',
    args: Record<string, unknown>,
    options?: { cwd?: string; session?: boolean; signal?: AbortSignal },
  ): Promise<ToolResult>
  text(
    tool: 'glob' | 'grep',
    args: Record<string, unknown>,
    options?: { cwd?: string; session?: boolean },
  ): Promise<string>
  cleanup(): Promise<void>
}

export interface HarnessOptions {
  config?: Partial<Config>
  subprocess?: typeof Subprocess
  spill?: typeof SpillStore | undefined
  plugins?: (t: TestContext) => Promise<void>
}

/** A fresh context with the prompt service, a subprocess provider, the search plugin and a temp dir. */
export async function harness(options: HarnessOptions = {}): Promise<Harness> {
  const t = await createTestContext()
  const dir = mkdtempSync(join(tmpdir(), 'dsh-search-'))
  await t.ctx.plugin(SystemPromptService)
  await t.ctx.plugin(options.subprocess ?? Subprocess)
  if (options.spill) await t.ctx.plugin(options.spill as unknown as typeof MemorySpillStore)
  await options.plugins?.(t)
  await t.active(t.ctx.plugin(FsSearch, options.config ?? {}))
  const call: Harness['call'] = (tool, args, o = {}) =>
    t.ctx.tools.execute(tool, args, {
      ...(o.session === false ? {} : { session: sessionFor('session-1', o.cwd ?? dir) }),
      ...(o.signal ? { signal: o.signal } : {}),
    })
  return {
    ...t,
    dir,
    call,
    async text(tool, args, o) {
      const result = await call(tool, args, o)
      if (result.isError) throw new Error(`unexpected error result: ${result.content[0].text}`)
      return result.content[0].text
    },
    async cleanup() {
      try {
        await t.dispose()
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    },
  }
}

/** Writes files (string or bytes content) under `dir`; a `mtime` (seconds) pins the modification time. */
export function write(
  dir: string,
  files: Record<string, string | Buffer | { content: string | Buffer; mtime: number }>,
): void {
  for (const [name, spec] of Object.entries(files)) writeFile(Buffer.from(join(dir, name)), spec)
}

export function writeFile(path: Buffer, spec: string | Buffer | { content: string | Buffer; mtime: number }): void {
  mkdirSync(dirname(path.toString()), { recursive: true })
  const content = typeof spec === 'string' || Buffer.isBuffer(spec) ? spec : spec.content
  writeFileSync(path, content)
  if (typeof spec === 'object' && !Buffer.isBuffer(spec)) utimesSync(path, spec.mtime, spec.mtime)
}

/** Whether a process still runs (a zombie or a reaped child does not). */
export { processRuns as alive } from '@deepseek-ai/dsh-subprocess'
