import { resolve } from 'node:path'
import type { Context } from 'cordis'
import Schema from 'schemastery'
import type {} from '@deepseek-ai/dsh-system-prompt'
import { tildeHint } from '@deepseek-ai/dsh-text'
import { invalidArgs, type ToolSession } from '@deepseek-ai/dsh-tools'
import {
  changePrompt,
  CHANGE_PROMPT_ID,
  CHANGE_PROMPT_ORDER,
  editDescription,
  editParameters,
  writeDescription,
  writeParameters,
  type EditArgs,
  type WriteArgs,
} from './change-text.ts'
import { Observations, seenBy } from './seen-files.ts'
import { readPage } from './read.ts'
import { runEdit, runWrite } from './write-edit.ts'
import { runPatch } from './patch.ts'
import { patchDescription, patchParameters, type PatchArgs } from './patch-text.ts'
import {
  capsWithin,
  messages,
  EDIT_ALIASES,
  READ_ALIASES,
  WRITE_ALIASES,
  readDescription,
  readParameters,
  readPrompt,
  READ_PROMPT_ID,
  READ_PROMPT_ORDER,
  render,
  type ReadArgs,
} from './text.ts'

export { FsError, FsErrorCode } from './errors.ts'
export { readPage, type ReadRequest } from './read.ts'
export {
  changeMessages,
  changePrompt,
  CHANGE_PROMPT_ID,
  CHANGE_PROMPT_ORDER,
  editDescription,
  editParameters,
  renderEdit,
  renderStale,
  renderWrite,
  writeDescription,
  writeParameters,
  type EditArgs,
  type EditOutcome,
  type StaleFacts,
  type WriteArgs,
  type WriteOutcome,
} from './change-text.ts'
export {
  patchDescription,
  patchMessages,
  patchParameters,
  renderPatch,
  type PatchArgs,
  type PatchFileOutcome,
  type PatchOutcome,
} from './patch-text.ts'
export {
  capsWithin,
  messages,
  MAX_QUOTED_PATH_BYTES,
  quotePath,
  readDescription,
  readParameters,
  readPrompt,
  READ_PROMPT_ID,
  READ_PROMPT_ORDER,
  render,
  renderFooter,
  renderRow,
  TRUNCATED_MARK,
  type ReadArgs,
  type ReadCaps,
  type ReadEnd,
  type ReadPage,
  type ReadRow,
} from './text.ts'

export const name = 'tool-fs'
export const inject = ['tools', 'systemPrompt']

export interface Config {
  maxLines: number
  maxBytes: number
  maxLineChars: number
  maxResultBytes: number
  timeoutMs: number
  editMaxBytes: number
  requireRead: boolean
  maxImageBytes: number
}

export const Config: Schema<Partial<Config>, Config> = Schema.object({
  maxLines: Schema.natural().min(1).default(2000).description('Default and maximum lines per read.'),
  maxBytes: Schema.natural()
    .min(256)
    .default(51200)
    .description('Most bytes of rows per read (each row with its newline).'),
  maxLineChars: Schema.natural()
    .min(1)
    .default(2000)
    .description('Longer lines are cut to this many characters and marked "(line truncated)".'),
  maxResultBytes: Schema.natural()
    .min(1024)
    .default(30000)
    .description(
      'Longest result text in UTF-8 bytes, footer included; the page stops before it and the footer says where to continue.',
    ),
  timeoutMs: Schema.natural()
    .min(1)
    .default(30_000)
    .description(
      'Time budget of one read, write or edit call, enforced by the timeout policy (TOOL_TIMEOUT): a read that scans far into a huge file ends; a write or edit that runs out of time before its rename leaves the file as it was.',
    ),
  editMaxBytes: Schema.natural()
    .min(1)
    .default(64 * 1024 * 1024)
    .description(
      'Largest file that write and edit read, and largest content they write, in bytes (FS_TOO_LARGE past it: bash changes such a file). One call holds a few copies of the file, so this bounds its memory.',
    ),
  maxImageBytes: Schema.natural()
    .min(1024)
    .default(3_932_160)
    .description(
      'Largest PNG, JPEG, GIF or WebP file read returns as an image (base64 in an MCP image block; 3.75 MiB is 5 MiB of base64); a larger one is FS_IMAGE_TOO_LARGE.',
    ),
  requireRead: Schema.boolean()
    .default(true)
    .description(
      'write and edit of an existing file need this session to have seen its current content (FS_NOT_READ, FS_STALE). dsh call turns it off: the person or script running it is the one who has seen the file.',
    ),
})

export function apply(ctx: Context, config: Config): void {
  const caps = capsWithin(config)
  // What each session has seen of each file, kept in the session: read, write and edit feed it; write and edit consult it.
  const guard = seenBy(new Observations())
  ctx.systemPrompt.register({ id: READ_PROMPT_ID, order: READ_PROMPT_ORDER, text: readPrompt(caps) })
  ctx.tools.register<ReadArgs>({
    name: 'read',
    title: 'Read a file',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    description: readDescription(caps),
    parameters: readParameters(caps),
    aliases: READ_ALIASES,
    maxResultBytes: config.maxResultBytes,
    timeoutMs: config.timeoutMs,
    async execute(args, exec) {
      if (args.path.includes('\0')) throw invalidArgs(messages.nulInPath())
      const cwd = exec.session?.cwd ?? process.cwd()
      const path = resolve(cwd, args.path)
      // The workspace policy (optional service): the opened file is checked, by its descriptor's real path.
      const policy = ctx.get('workspace')?.policy(exec.session ?? cwd, 'read')
      const observer = guard(exec.session).observeRead()
      const page = await readPage(
        {
          path,
          policy,
          cwd,
          offset: args.offset ?? 1,
          limit: args.limit ?? caps.maxLines,
          signal: exec.signal,
          notFoundHint: tildeHint(args.path),
          observer,
          maxImageBytes: config.maxImageBytes,
        },
        caps,
      )
      if ('kind' in page) {
        const text = messages.image(path, page.mimeType, page.bytes.length)
        const value = { kind: page.kind, mimeType: page.mimeType, bytes: page.bytes.length }
        return {
          text,
          value,
          images: [{ type: 'image', data: page.bytes.toString('base64'), mimeType: page.mimeType }],
        }
      }
      observer.done()
      return { text: render(page, caps), value: page }
    },
  })

  const deps = {
    guard,
    requireRead: config.requireRead,
    caps: { maxLineChars: config.maxLineChars, maxResultBytes: config.maxResultBytes },
    maxBytes: config.editMaxBytes,
    policy: (where: ToolSession | string, tool: string) => ctx.get('workspace')?.policy(where, tool),
  }
  const changing = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false } as const
  ctx.systemPrompt.register({ id: CHANGE_PROMPT_ID, order: CHANGE_PROMPT_ORDER, text: changePrompt() })
  ctx.tools.register<WriteArgs>({
    name: 'write',
    title: 'Create or replace a file',
    annotations: changing,
    description: writeDescription(),
    parameters: writeParameters,
    aliases: WRITE_ALIASES,
    maxResultBytes: config.maxResultBytes,
    timeoutMs: config.timeoutMs,
    execute: (args, exec) => runWrite(args, exec, deps),
  })
  ctx.tools.register<EditArgs>({
    name: 'edit',
    title: 'Edit a file',
    annotations: changing,
    description: editDescription(),
    parameters: editParameters,
    aliases: EDIT_ALIASES,
    maxResultBytes: config.maxResultBytes,
    timeoutMs: config.timeoutMs,
    execute: (args, exec) => runEdit(args, exec, deps),
  })
  ctx.tools.register<PatchArgs>({
    name: 'apply_patch',
    title: 'Apply a patch to files',
    annotations: changing,
    description: patchDescription(),
    parameters: patchParameters,
    maxResultBytes: config.maxResultBytes,
    timeoutMs: config.timeoutMs,
    execute: (args, exec) => runPatch(args, exec, deps),
  })
}

export default { name, inject, Config, apply }
