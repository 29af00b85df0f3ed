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
  /**
   * Set when the list is capped and .gitignore was not respected: how many of the files listed in all lie where
   * `.gitignore` (or `.ignore`, `.rgignore`) ignores them.
   */
  readonly ignored?: number
}

export interface GrepLineValue {
  readonly line: number
  /**
   * Without the line terminator, already cut to the byte cap; null when the line is not UTF-8. A long line whose
   * first match lies past the cap is shown around that match, with `…` where it was cut before and after.
   */
  readonly preview: string | null
  readonly truncated: boolean
  /** A line shown around a match (context, before, after), not itself a match. */
  readonly context?: true
  /** A multiline match that spans lines: its preview holds their line breaks, and it is shown a row per line. */
  readonly multiline?: true
}

export interface GrepFileValue {
  /** As shown (relative to the cwd or absolute), not yet escaped. */
  readonly path: string
  /** Ascending. */
  readonly lines: readonly GrepLineValue[]
}

/** What was asked: the saved result's header repeats it. `path` as shown ('' for the working directory). */
export interface GrepQuery {
  readonly pattern: string
  readonly path: string
  readonly include?: string
  readonly type?: string
}

/** The model's own page of a result (`offset`, `head_limit`): then nothing is saved, and the footer says what is next. */
export interface GrepWindow {
  /** Entries (matches, files) skipped before the page. */
  readonly offset: number
  /** Most entries on the page (`head_limit`; the page caps still apply). */
  readonly limit: number
}

/** The notes every mode of grep may carry after its rows. */
export interface GrepNotes {
  readonly query: GrepQuery
  /** Set when nothing matched: whether the pattern's text, searched literally, would have matched. */
  readonly literalMatches?: boolean
  /** ripgrep's stderr when it exited 2 but found matches (some paths could not be read). */
  readonly warning?: string
  /** Set when ripgrep was stopped at the tool's time budget (that many ms): the matches are those found until then. */
  readonly stoppedAfterMs?: number
  /** Ignore files ripgrep was told to skip, with why (see the skipped-ignore note). */
  readonly skippedIgnoreFiles?: readonly string[]
  /** Set when the model asked for a page of its own. */
  readonly window?: GrepWindow
  /** Set when the result is over the page and no window was asked for. */
  readonly spill?: SpillOutcome
}

/** What a grep call found, before it becomes text: one of its three output modes. */
export type GrepResultValue = GrepValue | GrepFilesValue | GrepCountValue

/** output_mode "files_with_matches": the matching files, most recently modified first (ties in path order). */
export interface GrepFilesValue extends GrepNotes {
  readonly mode: 'files_with_matches'
  /** The files of the page (from the window's offset, at most what a page shows), as shown, not yet escaped. */
  readonly paths: readonly string[]
  /** Matching files in all. */
  readonly total: number
}

/** output_mode "count": matching lines per file, files in path order. */
export interface GrepCountValue extends GrepNotes {
  readonly mode: 'count'
  /** The files of the page (from the window's offset, at most what a page shows) with their counts. */
  readonly counts: readonly { readonly path: string; readonly count: number }[]
  /** Matching files in all. */
  readonly total: number
  /** Matching lines in all files. */
  readonly matches: number
}

/** output_mode "content" (the default): the matching lines. */
export interface GrepValue extends GrepNotes {
  readonly mode?: 'content'
  /** Lines shown around each match (context, before, after), when asked for: rows then read as `read`'s. */
  readonly around?: { readonly before: number; readonly after: number }
  /**
   * The first matching lines in path order, grouped by file, lines ascending: at most `grepMaxMatches` of them (what
   * a page can show; all of them when `total` is within it), from the window's offset when there is one; with
   * `around`, the lines around them too (`context: true`). The complete result is saved.
   */
  readonly files: readonly GrepFileValue[]
  /** Matching lines in all files. */
  readonly total: number
}
