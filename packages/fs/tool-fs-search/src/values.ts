import type { SavedText } from '@deepseek-ai/dsh-spill'

/*
 * The facts a call gathers, before they become text: what the behaviour (glob.ts, grep.ts, records.ts) produces and
 * the text modules (*-text.ts) render. Types only, so that neither side imports the other.
 */

export type ToolName = 'glob' | 'grep'

/** What became of the complete result when the inline page was cut. */
export type SpillOutcome =
  | { readonly saved: Pick<SavedText, 'locator' | 'retrievalHint'> }
  | { readonly unsaved: string }

/** A rendered page, and whether it holds the whole result (nothing to save). */
export interface Page {
  readonly text: string
  readonly complete: boolean
}

/** What a glob call found, before it becomes text. */
export interface GlobValue {
  /**
   * The first paths, most recently modified first (at most `globMaxResults`: what a page can show; all of them when
   * `total` is within it); as shown (relative to the cwd or absolute), not yet escaped. The complete list is saved.
   */
  readonly paths: readonly string[]
  /** Files listed in all. */
  readonly total: number
  /** ripgrep's stderr when it exited 2 but listed files (some directories could not be read). */
  readonly warning?: string
  /** Set when the search root is itself inside a version-control directory, whose contents glob never lists. */
  readonly insideVcs?: { readonly root: string; readonly dir: string }
  /** Set when ripgrep was stopped at the tool's time budget (that many ms): the paths are those listed until then. */
  readonly stoppedAfterMs?: number
  /** Set when `total` is over the page. */
  readonly spill?: SpillOutcome
}

export interface GrepLineValue {
  readonly line: number
  /**
   * Without the line terminator, already cut to the byte cap; null when the line is not UTF-8. A long line whose
   * first match lies past the cap is shown around that match, with `…` where it was cut before and after.
   */
  readonly preview: string | null
  readonly truncated: boolean
}

export interface GrepFileValue {
  /** As shown (relative to the cwd or absolute), not yet escaped. */
  readonly path: string
  /** Ascending. */
  readonly lines: readonly GrepLineValue[]
}

/** What a grep call found, before it becomes text. */
export interface GrepValue {
  /** What was asked: the saved result's header repeats it. `path` as shown ('' for the working directory). */
  readonly query: { readonly pattern: string; readonly path: string; readonly include?: string }
  /**
   * The first matching lines in path order, grouped by file, lines ascending: at most `grepMaxMatches` of them (what
   * a page can show; all of them when `total` is within it). The complete result is saved.
   */
  readonly files: readonly GrepFileValue[]
  /** Matching lines in all files. */
  readonly total: number
  /** Set when nothing matched: whether the pattern's text, searched literally, would have matched. */
  readonly literalMatches?: boolean
  /** ripgrep's stderr when it exited 2 but found matches (some paths could not be read). */
  readonly warning?: string
  /** Set when ripgrep was stopped at the tool's time budget (that many ms): the matches are those found until then. */
  readonly stoppedAfterMs?: number
  /** Ignore files ripgrep was told to skip, with why (see the skipped-ignore note). */
  readonly skippedIgnoreFiles?: readonly string[]
  /** Set when `total` is over the page. */
  readonly spill?: SpillOutcome
}
