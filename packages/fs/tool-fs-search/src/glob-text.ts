import type { Static } from '@sinclair/typebox'
// The builders one by one, not the `Type` object: the bundle then keeps only these (docs/decisions/2026-12-01-start-up-schemas.md).
import * as Type from '@sinclair/typebox'
import { capFooter, partialNote, showPath, stoppedNote, trailerBytes, utf8Bytes, withinBudget } from './common-text.ts'
import type { GlobValue, Page } from './values.ts'

export const GLOB_PROMPT_ID = 'tool:glob'
export const GLOB_PROMPT_ORDER = 103

export const GLOB_PROMPT = [
  "To find files by name or path pattern, use this server's glob tool rather than shell commands such as find or ls.",
  'glob lists hidden files and files ignored by .gitignore too (unless respect_gitignore is true); only the contents of version-control directories (.git, .svn, .hg, .bzr, .jj, .sl) are never listed.',
].join('\n')

export function globDescription(caps: { maxResults: number; maxResultBytes: number }): string {
  return [
    'Find files whose path matches a glob pattern, e.g. "**/*.ts" or "src/**/test_*.py".',
    'Syntax: "*" matches within one path component, "**" across directories, "?" one character, "[abc]" a class, "{a,b}" alternatives; a pattern without "/" matches file names at any depth, a pattern with "/" is matched relative to path.',
    'Lists hidden files and files ignored by .gitignore; never the contents of .git, .svn, .hg, .bzr, .jj or .sl directories.',
    `Prints one path per line, relative to the working directory, most recently modified first (ties in path order). At most ${caps.maxResults} paths and ${caps.maxResultBytes} bytes are shown; when there are more, the result says where the complete list was saved.`,
    'A leading "./" is ignored, an absolute pattern inside path is made relative to it; a "!" negation is not accepted, nor a comma-separated list (use braces: "src/*.{spec,bench}.ts").',
    'respect_gitignore: true leaves out files that .gitignore, .ignore or .rgignore files ignore (node_modules, build output).',
  ].join(' ')
}

export const GlobParameters = Type.Object(
  {
    pattern: Type.String({
      minLength: 1,
      description: 'Glob pattern matched against file paths below path, e.g. "**/*.{ts,tsx}".',
    }),
    path: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          'Directory to search in, absolute or relative to the working directory. Default: the working directory.',
      }),
    ),
    respect_gitignore: Type.Optional(
      Type.Boolean({
        description:
          'Leave out files that .gitignore (or .ignore, .rgignore) ignores, such as node_modules. Default false: they are listed.',
      }),
    ),
  },
  { additionalProperties: false },
)
export type GlobArgs = Static<typeof GlobParameters>

export interface GlobCaps {
  readonly maxResults: number
  /** No text of the result exceeds this many UTF-8 bytes. */
  readonly maxBytes: number
}

export const NO_FILES = 'No files found'

function notes(value: GlobValue): string[] {
  const out: string[] = []
  if (value.insideVcs)
    out.push(
      `[${showPath(value.insideVcs.root)} is inside a ${value.insideVcs.dir} directory, whose contents glob never lists]`,
    )
  if (value.ignored !== undefined) out.push(ignoredNote(value.ignored, value.total))
  if (value.stoppedAfterMs !== undefined) out.push(stoppedNote('glob', value.stoppedAfterMs))
  if (value.warning !== undefined) out.push(partialNote(value.warning))
  return out
}

/** Most of a capped list lies where .gitignore ignores it: how much, and the argument that leaves it out. */
export function ignoredNote(ignored: number, total: number): string {
  return `[${ignored} of these ${total} files are in paths that .gitignore (or .ignore, .rgignore) ignores, such as node_modules; pass respect_gitignore: true to leave them out.]`
}

/** The whole list as its page shows it, when every path fits the page (count and bytes); else undefined. */
export function wholeGlob(value: GlobValue, caps: GlobCaps): string | undefined {
  const { paths } = value
  if (value.total === 0) return withinBudget([NO_FILES, ...notes(value)].join('\n\n'), caps.maxBytes)
  if (value.total > caps.maxResults || paths.length < value.total) return undefined
  const whole = [paths.map(showPath).join('\n'), ...notes(value)].join('\n\n')
  return utf8Bytes(whole) <= caps.maxBytes ? whole : undefined
}

/** The inline page: up to `maxResults` paths within `maxBytes` of text, then the footer and notes. */
export function pageGlob(value: GlobValue, caps: GlobCaps): Page {
  const whole = wholeGlob(value, caps)
  if (whole !== undefined) return { text: whole, complete: true }
  const after = notes(value)
  const { paths } = value
  const spill = value.spill ?? { unsaved: 'it was not offered to a store' }
  const footer = (shown: number) => capFooter('glob', shown, value.total, 'files', spill)
  let room = caps.maxBytes - trailerBytes([footer(value.total), ...after])
  const rows: string[] = []
  for (const path of paths) {
    if (rows.length >= caps.maxResults) break
    const row = showPath(path)
    // Rows are joined by newlines; the blank line before the footer is in trailerBytes already.
    const cost = utf8Bytes(row) + (rows.length === 0 ? 0 : 1)
    if (cost > room) break
    rows.push(row)
    room -= cost
  }
  const blocks = rows.length === 0 ? [footer(0), ...after] : [rows.join('\n'), footer(rows.length), ...after]
  return { text: withinBudget(blocks.join('\n\n'), caps.maxBytes), complete: false }
}

/** One row of the complete list as saved (one path per line, in the order shown), with its newline. */
export function savedGlobRow(path: string): string {
  return `${showPath(path)}\n`
}
