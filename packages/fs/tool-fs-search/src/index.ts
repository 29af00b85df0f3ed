import type { Context } from 'cordis'
import type {} from '@deepseek-ai/dsh-system-prompt'
import type {} from '@deepseek-ai/dsh-subprocess'
import type {} from '@deepseek-ai/dsh-confinement'
import { Config } from './config.ts'
import { glob } from './glob.ts'
import {
  GLOB_PROMPT,
  GLOB_PROMPT_ID,
  GLOB_PROMPT_ORDER,
  type GlobArgs,
  GlobParameters,
  globDescription,
} from './glob-text.ts'
import { grep } from './grep.ts'
import {
  GREP_ALIASES,
  GREP_PROMPT,
  GREP_PROMPT_ID,
  GREP_PROMPT_ORDER,
  type GrepArgs,
  GrepParameters,
  grepDescription,
} from './grep-text.ts'
import { TrustedRipgrep } from './trusted-rg.ts'
import type { SearchServices } from './search.ts'
import type {} from '@deepseek-ai/dsh-spill'
import type { ToolExecution } from '@deepseek-ai/dsh-tools'
import type { Workspace } from '@deepseek-ai/dsh-workspace'

export const name = 'tool-fs-search'
export const inject = ['tools', 'systemPrompt', 'subprocess']
export { Config }
export { SearchError, SearchErrorCode } from './errors.ts'
export type { GlobArgs } from './glob-text.ts'
export type { GrepArgs } from './grep-text.ts'
export type {
  GlobValue,
  GrepCountValue,
  GrepFileValue,
  GrepFilesValue,
  GrepLineValue,
  GrepResultValue,
  GrepValue,
  SpillOutcome,
} from './values.ts'

/**
 * Registers `glob` and `grep` and their prompt sections. Nothing is spawned here; the ripgrep binary is found on
 * the first call, except with workspace roots, where its private copy is made now (trusted-rg.ts). The spill store
 * is optional and looked up at call time.
 */
export function apply(ctx: Context, config: Config): void {
  const services: SearchServices = {
    config,
    get subprocess() {
      return ctx.subprocess
    },
    spillStore: () => ctx.get('spillStore'),
    workspace: () => ctx.get('workspace'),
    confinement: () => ctx.get('confinement'),
    locator: new TrustedRipgrep(
      config.rgPath,
      () => ctx.get('workspace') !== undefined,
      (exec) => writableRoots(ctx.get('workspace'), exec),
    ),
  }
  ctx.tools.register<GlobArgs>({
    name: 'glob',
    title: 'Find files by name',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    description: globDescription({ maxResults: config.globMaxResults, maxResultBytes: config.maxResultBytes }),
    parameters: GlobParameters,
    timeoutMs: config.timeoutMs,
    maxResultBytes: config.maxResultBytes,
    execute: (args, exec) => glob(services, args, exec),
  })
  ctx.tools.register<GrepArgs>({
    name: 'grep',
    title: 'Search file contents',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    description: grepDescription({
      maxMatches: config.grepMaxMatches,
      maxLineBytes: config.grepMaxLineBytes,
      maxResultBytes: config.maxResultBytes,
    }),
    parameters: GrepParameters,
    aliases: GREP_ALIASES,
    timeoutMs: config.timeoutMs,
    maxResultBytes: config.maxResultBytes,
    execute: (args, exec) => grep(services, args, exec),
  })
  ctx.systemPrompt.register({ id: GLOB_PROMPT_ID, order: GLOB_PROMPT_ORDER, text: GLOB_PROMPT })
  ctx.systemPrompt.register({ id: GREP_PROMPT_ID, order: GREP_PROMPT_ORDER, text: GREP_PROMPT })
}

export default { name, inject, Config, apply }

/** The writable roots of the calling session; none when its root is refused (every tool refuses it then). */
function writableRoots(workspace: Workspace | undefined, exec: ToolExecution | undefined): readonly string[] {
  if (workspace === undefined || exec === undefined) return []
  try {
    return workspace.policy(exec.session?.cwd ?? process.cwd(), exec.name).writable
  } catch {
    return []
  }
}
