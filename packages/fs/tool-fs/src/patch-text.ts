import type { Static } from '@sinclair/typebox'
// The builders one by one, not the `Type` object (docs/decisions/2026-12-01-start-up-schemas.md).
import * as Type from '@sinclair/typebox'
import { HUNK_SEPARATOR, type EditOutcome, editCutNote } from './change-text.ts'
import { quotePath, renderRow, type ReadRow } from './text.ts'

/*
 * Everything the model reads from apply_patch: description, schema, results, error messages. Pure functions of
 * their arguments, so every exact text is a unit test.
 */

export function patchDescription(): string {
  return [
    'Apply a patch in the apply_patch format to one or more UTF-8 text files: all files change, or none.',
    'The patch starts with "*** Begin Patch" and ends with "*** End Patch"; in between, "*** Add File: <path>" followed by its lines each starting with "+", "*** Delete File: <path>", or "*** Update File: <path>" (optionally followed by "*** Move to: <new path>") followed by hunks:',
    'each hunk starts with "@@" (optionally "@@ <a line just above the change>", to say where), then its lines, each starting with " " (unchanged context, about 3 lines above and below), "-" (removed) or "+" (added); "*** End of File" after a hunk anchors it at the end of the file.',
    'A file changed, moved or deleted needs a read of it in this session first. Line endings (LF or CRLF), BOM and the final newline are kept. The result lists each file changed with its changed lines as "N: line" rows.',
  ].join(' ')
}

export const patchParameters = Type.Object(
  {
    patch: Type.String({
      minLength: 1,
      description: 'The whole patch, from "*** Begin Patch" to "*** End Patch".',
    }),
  },
  { additionalProperties: false },
)
export type PatchArgs = Static<typeof patchParameters>

/** What apply_patch did to one file. */
export type PatchFileOutcome =
  | { readonly kind: 'added'; readonly path: string; readonly lines: number; readonly replaced: boolean }
  | { readonly kind: 'deleted'; readonly path: string }
  | {
      readonly kind: 'updated'
      readonly path: string
      /** The new path of a moved file. */
      readonly to: string | undefined
      readonly hunks: EditOutcome['hunks']
      readonly cutAt: number | undefined
    }

export interface PatchOutcome {
  readonly files: readonly PatchFileOutcome[]
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`

export function patchFileHeading(file: PatchFileOutcome): string {
  switch (file.kind) {
    case 'added':
      return `${file.replaced ? 'Replaced' : 'Created'} ${quotePath(file.path)} (${plural(file.lines, 'line', 'lines')})`
    case 'deleted':
      return `Deleted ${quotePath(file.path)}`
    case 'updated':
      return file.to === undefined
        ? `Updated ${quotePath(file.path)}`
        : `Moved ${quotePath(file.path)} to ${quotePath(file.to)}`
  }
}

export function patchHeading(count: number): string {
  return `Applied the patch: ${plural(count, 'file', 'files')} changed`
}

export function renderPatch(outcome: PatchOutcome): string {
  const parts = outcome.files.map((file) => {
    const heading = patchFileHeading(file)
    if (file.kind !== 'updated' || (file.hunks.length === 0 && file.cutAt === undefined)) return heading
    const body = file.hunks.map((rows) => rows.map(renderRow).join('\n')).join(`\n${HUNK_SEPARATOR}\n`)
    const cut = file.cutAt === undefined ? '' : `${body ? '\n' : ''}${editCutNote(file.cutAt)}`
    return `${heading}\n${body}${cut}`
  })
  return `${patchHeading(outcome.files.length)}\n\n${parts.join('\n\n')}`
}

/** The format, in one line, for every refusal of a malformed patch. */
const FORMAT =
  'the format is "*** Begin Patch", then for each file "*** Add File: <path>" with "+" lines, "*** Delete File: <path>", or "*** Update File: <path>" with "@@" hunks of " ", "-" and "+" lines, then "*** End Patch"'

export const patchMessages = {
  /** A malformed patch: which line (1-based, in the patch), what it holds, what was expected there. */
  invalid: (line: number, text: string, expected: string) =>
    `apply_patch refused: line ${line} of the patch${text === '' ? ' (empty)' : `, ${JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text)},`} is not valid here: ${expected}; nothing was changed (${FORMAT})`,
  empty: () => `apply_patch refused: the patch changes no file; nothing was changed (${FORMAT})`,
  twice: (path: string) =>
    `apply_patch refused: the patch changes ${quotePath(path)} more than once; put all its changes in one "*** Update File" section; nothing was changed`,
  exists: (path: string, verb: string) =>
    `apply_patch refused: cannot ${verb} ${quotePath(path)}: it already exists; update it instead, or pick another path; nothing was changed`,
  noMatch: (path: string, hunk: number, patchLine: number, closest: readonly ReadRow[]) =>
    `apply_patch refused: hunk ${hunk} of ${quotePath(path)} (patch line ${patchLine}) does not match the file: its context and "-" lines were not found${
      closest.length === 0
        ? ''
        : `. The closest region, lines ${closest[0]!.line}-${closest.at(-1)!.line}:\n${closest.map(renderRow).join('\n')}\n`
    }${closest.length === 0 ? '; ' : ''}copy the " " and "-" lines from the file exactly (read it again if unsure); nothing was changed`,
  contextNotFound: (path: string, hunk: number, patchLine: number, context: string) =>
    `apply_patch refused: hunk ${hunk} of ${quotePath(path)} (patch line ${patchLine}) is anchored at "@@ ${context}", a line the file does not have (after the hunks before it); use a line of the file as it is, or plain "@@"; nothing was changed`,
  notFound: (path: string) =>
    `file not found: ${quotePath(path)}; to create a file, use "*** Add File: <path>"; nothing was changed`,
  rolledBack: (message: string) => `${message} (the files the patch had already changed were put back as they were)`,
} as const
