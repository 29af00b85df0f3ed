import type { Static } from '@sinclair/typebox'
// The builders one by one, not the `Type` object (docs/decisions/2026-12-01-start-up-schemas.md).
import * as Type from '@sinclair/typebox'
import { cutChars } from '@deepseek-ai/dsh-text'
import type { MatchKind, Region } from './change.ts'
import { quotePath, renderRow, type ReadRow } from './text.ts'

/*
 * Everything the model reads from write and edit: prompt, descriptions, schemas, results, error messages.
 * Pure functions of their arguments, so every exact text is a unit test.
 */

export const CHANGE_PROMPT_ID = 'tool:write-edit'
export const CHANGE_PROMPT_ORDER = 110

export function changePrompt(): string {
  return [
    "To change a file, use this server's edit tool (replace an exact piece of text) rather than shell commands such as sed, perl -i or a heredoc; use write only for a new file or to replace a whole file.",
    'Read a file before you change it: edit and write refuse a file this session has not read, or that changed since it last saw it (then read it again).',
    'Copy old_string from read\'s rows without the "N: " line-number prefix, with enough surrounding lines to occur exactly once. Line endings, a BOM and the final newline are kept as the file had them.',
    "For several changes to one file, pass edit's edits list; for changes to several files (add, update, move, delete), use apply_patch. Each applies all of its changes or none.",
  ].join('\n')
}

export function writeDescription(): string {
  return [
    'Create a UTF-8 text file with the given content (missing parent directories are created), or replace a whole file.',
    'Replacing an existing file needs a read of it in this session first, and keeps its line endings (LF or CRLF), BOM and final newline.',
    'For a change to part of a file, use edit.',
  ].join(' ')
}

export function editDescription(): string {
  return [
    'Replace an exact piece of text in a UTF-8 text file: old_string must occur exactly once (include surrounding lines to make it unique), or pass replace_all to replace every occurrence.',
    'Needs a read of the file in this session first. Line endings (LF or CRLF), BOM and the final newline are kept.',
    'The result shows the changed lines as "N: line" rows with the file\'s new line numbers.',
    'For several changes to one file in one call, pass edits: [{ old_string, new_string, replace_all? }, …] instead: applied in order, all or none.',
  ].join(' ')
}

export const writeParameters = Type.Object(
  {
    path: Type.String({
      minLength: 1,
      description: 'The file to create or replace, absolute or relative to the working directory.',
    }),
    content: Type.String({ description: 'The whole new content of the file.' }),
  },
  { additionalProperties: false },
)
export type WriteArgs = Static<typeof writeParameters>

export const editParameters = Type.Object(
  {
    path: Type.String({
      minLength: 1,
      description: 'The file to change, absolute or relative to the working directory.',
    }),
    old_string: Type.Optional(
      Type.String({
        description: 'The exact text to replace, as the file has it (without read\'s "N: " prefixes).',
      }),
    ),
    new_string: Type.Optional(
      Type.String({ description: 'The text to put in its place (different from old_string).' }),
    ),
    replace_all: Type.Optional(
      Type.Boolean({
        description: 'Replace every occurrence of old_string. Default false: it must occur exactly once.',
      }),
    ),
    edits: Type.Optional(
      Type.Array(
        Type.Object(
          {
            old_string: Type.String({ description: 'The exact text to replace.' }),
            new_string: Type.String({ description: 'The text to put in its place.' }),
            replace_all: Type.Optional(Type.Boolean({ description: 'Replace every occurrence. Default false.' })),
          },
          { additionalProperties: false },
        ),
        {
          minItems: 1,
          description:
            'Several replacements in this file, instead of old_string/new_string: applied in order (each sees the text the previous ones made), all or none.',
        },
      ),
    ),
  },
  { additionalProperties: false },
)
export type EditArgs = Static<typeof editParameters>
export type OneEdit = NonNullable<EditArgs['edits']>[number]

/** What write did, as a plain value. */
export interface WriteOutcome {
  /** The path as given, made absolute. */
  readonly path: string
  readonly created: boolean
  readonly lines: number
}

/** What edit did: the changed regions (with context) as read rows, as many as the result budget holds. */
export interface EditOutcome {
  readonly path: string
  /** How many edits of an `edits` list were applied (undefined for one old_string/new_string). */
  readonly edits?: number | undefined
  readonly count: number
  readonly match: MatchKind
  readonly hunks: readonly (readonly ReadRow[])[]
  /** The first line the result could not show, when the budget stopped it. */
  readonly cutAt: number | undefined
}

export interface ChangeCaps {
  readonly maxLineChars: number
  readonly maxResultBytes: number
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`

export function renderWrite(outcome: WriteOutcome): string {
  return `${outcome.created ? 'Created' : 'Updated'} ${quotePath(outcome.path)} (${plural(outcome.lines, 'line', 'lines')})`
}

export function editHeading(outcome: Pick<EditOutcome, 'path' | 'count' | 'match' | 'edits'>): string {
  const edits = outcome.edits === undefined ? '' : `${plural(outcome.edits, 'edit', 'edits')}, `
  const head = `Updated ${quotePath(outcome.path)}: ${edits}replaced ${plural(outcome.count, 'occurrence', 'occurrences')}`
  return outcome.match === 'row-prefixes'
    ? `${head}\n(old_string matched once the "N: " line-number prefixes that read shows were removed; leave them out next time)`
    : head
}

export const HUNK_SEPARATOR = '…'

export function editCutNote(line: number): string {
  return `[more changed lines follow; read from offset=${line} to see them]`
}

export const EMPTY_NOW = '[the file is now empty]'

export function renderEdit(outcome: EditOutcome): string {
  if (outcome.hunks.length === 0 && outcome.cutAt === undefined) return `${editHeading(outcome)}\n\n${EMPTY_NOW}`
  const body = outcome.hunks.map((rows) => rows.map(renderRow).join('\n')).join(`\n${HUNK_SEPARATOR}\n`)
  const cut = outcome.cutAt === undefined ? '' : `\n${editCutNote(outcome.cutAt)}`
  return `${editHeading(outcome)}\n\n${body}${cut}`
}

/** Rows of a region, each cut like read's. */
export function rowsOf(region: Region, maxLineChars: number): ReadRow[] {
  return region.lines.map((text, i) => {
    const cut = cutChars(text, maxLineChars)
    return { line: region.firstLine + i, text: cut.text, truncated: cut.truncated }
  })
}

/** What changed in a file since the session saw it, as far as it still holds what it saw. */
export type StaleFacts =
  | {
      readonly kind: 'region'
      readonly firstLine: number
      readonly removed: number
      readonly rows: readonly ReadRow[]
      readonly more: boolean
    }
  | { readonly kind: 'size'; readonly before: number; readonly after: number }
  /** Its identity (size, times, inode) moved and nothing held tells whether its bytes did. */
  | { readonly kind: 'modified' }

export function renderStale(facts: StaleFacts): string {
  switch (facts.kind) {
    case 'modified':
      return 'it was modified or replaced since (its bytes could not be compared)'
    case 'size':
      return facts.before === facts.after
        ? `its content differs (still ${facts.before} bytes)`
        : `it is now ${facts.after} bytes (it was ${facts.before})`
    case 'region': {
      if (facts.rows.length === 0)
        return facts.more
          ? `lines from ${facts.firstLine} on changed`
          : `${plural(facts.removed, 'line was', 'lines were')} removed at line ${facts.firstLine}`
      const last = facts.firstLine + facts.rows.length - 1
      const where =
        facts.rows.length === 1 ? `line ${facts.firstLine} is now` : `lines ${facts.firstLine}-${last} are now`
      return `${where}:\n${facts.rows.map(renderRow).join('\n')}${facts.more ? '\n(and more below)' : ''}`
    }
  }
}

/** `64 MiB`, `1.5 GiB`, `900 bytes`: a size as a person reads it. */
const sizeText = (bytes: number) =>
  bytes >= 2 ** 30
    ? `${(bytes / 2 ** 30).toFixed(1)} GiB`
    : bytes >= 2 ** 20
      ? `${(bytes / 2 ** 20).toFixed(1).replace(/\.0$/, '')} MiB`
      : `${bytes} bytes`

export const changeMessages = {
  tooLarge: (tool: string, path: string, size: number, max: number) =>
    `${tool} refused: ${quotePath(path)} is ${sizeText(size)}, more than the ${sizeText(max)} that ${tool} handles (tool-fs.editMaxBytes); change it with bash instead (e.g. sed -i 's/old/new/' on it), or split it into smaller files`,
  tooLargeResult: (tool: string, path: string, size: number, max: number) =>
    `${tool} refused: the new content of ${quotePath(path)} would be ${sizeText(size)}, more than the ${sizeText(max)} that ${tool} handles (tool-fs.editMaxBytes); the file is unchanged. Write it in parts with bash (e.g. cat >> on it), or split it into smaller files`,
  notRead: (tool: string, path: string) =>
    `${tool} refused: ${quotePath(path)} has not been read in this session; read it first (any page), so that you change what is there now`,
  stale: (tool: string, path: string, facts: StaleFacts) =>
    `${tool} refused: ${quotePath(path)} changed since you last read it; read it again, then retry. What changed: ${renderStale(facts)}`,
  changedDuring: (tool: string, path: string) =>
    `${tool} refused: ${quotePath(path)} was replaced or moved while ${tool} ran; read it again, then retry`,
  notFound: (path: string) => `file not found: ${quotePath(path)}; to create a file, use write`,
  directory: (tool: string, path: string) =>
    `${quotePath(path)} is a directory, not a file; ${tool} only changes files (use glob to list the files in it)`,
  notRegular: (tool: string, path: string, kind: string) =>
    `${quotePath(path)} is not a regular file (it is ${kind}); ${tool} only changes regular files`,
  parentNotDirectory: (path: string) =>
    `cannot create ${quotePath(path)}: a component of its parent path is a file, not a directory`,
  danglingLink: (path: string, target: string) =>
    `cannot create ${quotePath(path)}: it is a symbolic link to a missing file (${quotePath(target)}); write to the path you mean, not through the link`,
  binary: (tool: string, path: string) =>
    `${quotePath(path)} looks binary (a NUL byte in its first 8 KiB); ${tool} only changes UTF-8 text files`,
  invalidUtf8: (tool: string, path: string, line: number) =>
    `${quotePath(path)} is not valid UTF-8 text (line ${line}); ${tool} only changes UTF-8 text files`,
  writeFailed: (path: string, reason: string) => `cannot write ${quotePath(path)}: ${reason}; the file is unchanged`,
  readFailed: (path: string, reason: string) => `cannot read ${quotePath(path)}: ${reason}; the file is unchanged`,
  emptyOld: () => 'old_string must not be empty; to create a file or replace all of it, use write',
  loneSurrogate: (name: string) =>
    `${name} holds a lone UTF-16 surrogate (an escape such as \\ud800 without its pair), which is not text; pass whole characters`,
  same: () =>
    'old_string and new_string are the same, so the edit would change nothing; pass the text you want in new_string',
  noMatch: (path: string, closest: readonly ReadRow[]) =>
    closest.length === 0
      ? `old_string was not found in ${quotePath(path)} (nor with other line endings or without "N: " prefixes), and no line of the file resembles it; read the file to see what it holds now`
      : `old_string was not found in ${quotePath(path)} (nor with other line endings or without "N: " prefixes). The closest region, lines ${closest[0]!.line}-${closest.at(-1)!.line}:\n${closest.map(renderRow).join('\n')}\nCopy old_string from the file exactly (what follows each "N: "), or read the file again`,
  oneOrList: () =>
    'pass old_string and new_string (one replacement) or edits: [{ old_string, new_string }, …] (several), not both',
  missingOld: () =>
    'invalid arguments: missing required property "old_string"; pass old_string and new_string, or edits: [{ old_string, new_string }, …]',
  inList: (index: number, total: number, message: string) =>
    `edits[${index}] (edit ${index + 1} of ${total}) failed, so none of the edits was applied: ${message}`,
  manyMatches: (path: string, count: number, lines: readonly number[]) =>
    `old_string occurs ${count} times in ${quotePath(path)} (at ${lines.length === 1 ? 'line' : 'lines'} ${lines.join(', ')}${count > lines.length ? ', …' : ''}); include more surrounding lines to make it unique, or pass replace_all: true to replace every one`,
} as const
