import { type Static, Type } from '@sinclair/typebox'
import { capFooter, showPath, partialNote, type SpillOutcome } from './common-text.ts'

export const GLOB_PROMPT_ID = 'tool:glob'
export const GLOB_PROMPT_ORDER = 103

export const GLOB_PROMPT = [
  'To find files by name or path pattern, use this server\'s glob tool rather than shell commands such as find or ls.',
  'glob lists hidden files and files ignored by .gitignore too; only the contents of version-control directories (.git, .svn, .hg, .bzr, .jj, .sl) are never listed.',
].join('\n')

export function globDescription(maxResults: number): string {
  return [
    'Find files whose path matches a glob pattern, e.g. "**/*.ts" or "src/**/test_*.py".',
    'Syntax: "*" matches within one path component, "**" across directories, "?" one character, "[abc]" a class, "{a,b}" alternatives; a pattern without "/" matches file names at any depth, a pattern with "/" is matched relative to path.',
    'Lists hidden files and files ignored by .gitignore; never the contents of .git, .svn, .hg, .bzr, .jj or .sl directories.',
    `Prints one path per line, relative to the working directory, oldest modification first (ties in path order). At most ${maxResults} paths are shown; when there are more, the result says where the complete list was saved.`,
  ].join(' ')
}

export const GlobParameters = Type.Object({
  pattern: Type.String({ minLength: 1, description: 'Glob pattern matched against file paths below path, e.g. "**/*.{ts,tsx}".' }),
  path: Type.Optional(Type.String({ minLength: 1, description: 'Directory to search in, absolute or relative to the working directory. Default: the working directory.' })),
}, { additionalProperties: false })
export type GlobArgs = Static<typeof GlobParameters>

/** What a glob call found, before it becomes text. */
export interface GlobValue {
  /** In modification order; as shown (relative to the cwd or absolute), not yet escaped. */
  readonly paths: readonly string[]
  /** ripgrep's stderr when it exited 2 but listed files (some directories could not be read). */
  readonly warning?: string
  /** Set when the search root is itself inside a version-control directory, whose contents glob never lists. */
  readonly insideVcs?: { readonly root: string; readonly dir: string }
  /** Set when `paths` is longer than the page. */
  readonly spill?: SpillOutcome
}

export const NO_FILES = 'No files found'

/** The model-facing text: at most `maxResults` paths, then the footer and notes. */
export function renderGlob(value: GlobValue, caps: { maxResults: number }): string {
  const blocks: string[] = []
  if (value.paths.length === 0) blocks.push(NO_FILES)
  else {
    const shown = Math.min(value.paths.length, caps.maxResults)
    blocks.push(value.paths.slice(0, shown).map(showPath).join('\n'))
    if (shown < value.paths.length) {
      blocks.push(capFooter('glob', shown, value.paths.length, 'files', value.spill ?? { unsaved: 'it was not offered to a store' }))
    }
  }
  if (value.insideVcs) blocks.push(`[${showPath(value.insideVcs.root)} is inside a ${value.insideVcs.dir} directory, whose contents glob never lists]`)
  if (value.warning !== undefined) blocks.push(partialNote(value.warning))
  return blocks.join('\n\n')
}
