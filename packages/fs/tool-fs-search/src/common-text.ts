import type { SpillOutcome, ToolName } from './values.ts'
import { clip, cutUtf8, escapeControl, QUOTE_MAX_BYTES, systemErrorReason, tildeHint } from '@deepseek-ai/dsh-text'

/*
 * Every text both tools share. Pure functions of their arguments: each exact text is a unit test.
 */

const NARROW: Record<ToolName, string> = {
  glob: 'use a more specific pattern or a deeper path',
  grep: 'use a more specific pattern, a deeper path, or include',
}

/** A path as the model sees it: one line, no terminal escapes; the working directory itself is `.`. */
export function showPath(path: string): string {
  return path === '' ? '.' : escapeControl(path, { keepTab: false })
}

/** An argument as an error quotes it: one line, at most QUOTE_MAX_BYTES, cut with `…`. */
export function quoteArg(text: string): string {
  return clip(escapeControl(text, { keepTab: false }), QUOTE_MAX_BYTES)
}

/** A path as an error names it: showPath, bounded like quoteArg. */
export function errorPath(path: string): string {
  return clip(showPath(path), QUOTE_MAX_BYTES)
}

/** The footer of a cut result: shown and total, then where the rest is, or why it is not kept and what to do. */
export function capFooter(tool: ToolName, shown: number, total: number, noun: string, spill: SpillOutcome): string {
  const head = `[Showing ${shown} of ${total} ${noun}.`
  if ('saved' in spill)
    return `${head} The complete result is saved at ${showPath(spill.saved.locator)}. ${spill.saved.retrievalHint}]`
  return `${head} The complete result could not be saved (${spill.unsaved}). To see the rest, ${NARROW[tool]}.]`
}

/** Why the complete result could not be kept. */
export const UNSAVED = {
  noStore: 'no spill store is loaded',
  noSession: 'the call has no session to own the file',
  failed: (message: string) => `saving failed: ${message}`,
} as const

const NOTE_LINES = 3

/** ripgrep exited 2 but found something: what it could not read, briefly. */
export function partialNote(stderr: string): string {
  const lines = stderrLines(stderr)
  const shown = lines
    .slice(0, NOTE_LINES)
    .map((line) => clip(line, QUOTE_MAX_BYTES))
    .join('; ')
  const more = lines.length > NOTE_LINES ? ` (and ${lines.length - NOTE_LINES} more)` : ''
  return `[Some paths could not be searched, so the results may be incomplete: ${shown || 'ripgrep gave no reason'}${more}]`
}

function stderrLines(stderr: string): string[] {
  return stderr
    .split('\n')
    .map((line) => escapeControl(line.trimEnd(), { keepTab: true }))
    .filter((line) => line !== '')
}

const STDERR_MAX_BYTES = 2000

/** ripgrep's stderr for an error message: its own line breaks kept, nothing else raw, bounded. */
function stderrText(stderr: string): string {
  return clip(
    stderrLines(stderr)
      .map((line) => clip(line, QUOTE_MAX_BYTES))
      .join('\n'),
    STDERR_MAX_BYTES,
  )
}

export function launchFailedMessage(tool: ToolName, binary: string, cause: string): string {
  return `${tool} search failed: could not start ripgrep (${quoteArg(binary)}): ${quoteArg(cause)}`
}

export function abortedMessage(tool: ToolName): string {
  return `${tool} search aborted: the call was cancelled or ran out of time, and ripgrep was stopped`
}

/** The complete result passed the bound on what a saved result may hold on disk (savedResultMaxBytes). */
export function savedOverflowMessage(tool: ToolName, maxBytes: number, found: number): string {
  const what =
    tool === 'grep' ? `after ${found} matching lines its complete result` : `after ${found} files its complete list`
  return `${tool} search stopped: ${what} passed ${maxBytes} bytes, the most a saved result may hold (savedResultMaxBytes). To ${tool === 'grep' ? 'search' : 'list'} less, ${NARROW[tool]}.`
}

/** One record of ripgrep's output (one matching line with its JSON) passed the bound on its own. */
export function recordOverflowMessage(tool: ToolName, maxBytes: number): string {
  return `${tool} search stopped: one record of ripgrep's output passed ${maxBytes} bytes, the most a search may hold (rawOutputMaxBytes); a file with an enormous line is the likely cause. To search less, ${NARROW[tool]}.`
}

export function outOfMemoryMessage(tool: ToolName, limitBytes: number): string {
  return `${tool} search failed: ripgrep used more than its memory limit (${limitBytes} bytes, rgMaxMemoryBytes) and was stopped. A huge or endless ignore file (.gitignore, .ignore, .rgignore — a link to a device, say) or an enormous line is the usual cause; search a narrower path, or a single file.`
}

/** ripgrep aborted because an allocation failed (a memory limit of the machine or the process, not the tool's). */
export function abortedOutOfMemoryMessage(tool: ToolName, allocationBytes: number): string {
  return `${tool} search failed: ripgrep ran out of memory and aborted (an allocation of ${allocationBytes} bytes failed). A huge or endless ignore file (.gitignore, .ignore, .rgignore — a link to a device, say) or an enormous line is the usual cause; search a narrower path, or a single file.`
}

/** ripgrep was stopped at the tool's own time budget; what it had found stands. */
export function stoppedNote(tool: ToolName, deadlineMs: number): string {
  const what = tool === 'glob' ? 'files listed' : 'matches found'
  return `[The search was stopped after ${deadlineMs} ms, its time budget, before ripgrep finished: these are the ${what} until then, and more may exist. To search less, ${NARROW[tool]}.]`
}

export function malformedMessage(tool: ToolName, detail: string): string {
  return `${tool} search failed: could not read ripgrep's output (${quoteArg(detail)})`
}

export function killedMessage(tool: ToolName, signal: string): string {
  return `${tool} search failed: ripgrep was killed by ${signal}`
}

export function exitMessage(tool: ToolName, exitCode: number | null, stderr: string): string {
  return `${tool} search failed (exit ${exitCode}): ${stderrText(stderr) || 'ripgrep printed no error'}`
}

/**
 * ripgrep rejected the pattern. It quotes its own rewritten form of it (`(?:(`), once per line of a long one: the
 * message quotes the model's pattern instead (bounded) and keeps ripgrep's reason (`error: unclosed group`).
 */
export function invalidPatternMessage(tool: ToolName, pattern: string, stderr: string): string {
  const reason = patternReason(stderr)
  return `invalid ${tool} pattern "${quoteArg(pattern)}": ${reason}${tool === 'grep' ? escapeHint(pattern, reason) : ''}`
}

// The metacharacter each of ripgrep's parse errors is about, when it was likely meant literally.
const UNESCAPED: readonly (readonly [RegExp, (pattern: string) => string | undefined])[] = [
  [/: unclosed group$/, () => '('],
  [/: unopened group$/, () => ')'],
  [/: unclosed character class$/, () => '['],
  [/: repetition operator missing expression$/, (pattern) => /[*+?]/.exec(pattern)?.[0]],
  [/: (?:unclosed counted repetition|repetition quantifier expects a valid decimal|decimal literal empty)$/, () => '{'],
]
const METACHARACTERS = /[()[\]{}+*?|^$.]/g

/**
 * How to escape the metacharacter a regex parse error is about (`foo(` → `foo\(`), for a pattern that was likely
 * meant as text; '' when the error is of another kind. A trailing lone backslash gets its own hint.
 */
function escapeHint(pattern: string, reason: string): string {
  if (!reason.startsWith('regex parse error')) return ''
  if (/(?:^|[^\\])(?:\\\\)*\\$/.test(pattern))
    return '. The pattern ends with a lone backslash, which escapes nothing: write \\\\ to match a backslash'
  const char = UNESCAPED.find(([kind]) => kind.test(reason))?.[1](pattern)
  if (char === undefined) return ''
  if (pattern.includes('\\')) return `. To match ${char} literally, escape it with a backslash: \\${char}`
  return `. To match ${char} literally, escape it with a backslash; the whole pattern as literal text is ${quoteArg(pattern.replace(METACHARACTERS, '\\$&'))}`
}

function patternReason(stderr: string): string {
  const lines = stderrLines(stderr)
  const kind =
    lines
      .find((line) => line.startsWith('rg: '))
      ?.slice(4)
      .replace(/:$/, '') ?? 'ripgrep rejected it'
  const reason = lines.find((line) => line.startsWith('error: '))?.slice(7)
  if (/error building NFA|exceeds size limit/.test(kind))
    return `${clip(kind, QUOTE_MAX_BYTES)} (the regex is too large or repeats too much to compile; simplify it)`
  return reason === undefined
    ? clip(kind, QUOTE_MAX_BYTES)
    : `${clip(kind, QUOTE_MAX_BYTES)}: ${clip(reason, QUOTE_MAX_BYTES)}`
}

export function missingPathMessage(tool: ToolName, path: string): string {
  return `${tool} search failed: ${errorPath(path)}: no such file or directory${tildeHint(path)}`
}

/** A root whose stat failed for another reason than its absence (a link loop, a permission): the system error, named once. */
export function unusablePathMessage(tool: ToolName, path: string, cause: unknown): string {
  return `${tool} search failed: ${errorPath(path)}: ${systemErrorReason(cause)}`
}

/** A FIFO, socket or device named as `path`: refused from its stat, without opening it (opening a FIFO is a side effect). */
export function specialPathMessage(tool: ToolName, path: string, kind: string): string {
  return `${tool} path ${errorPath(path)} is ${kind}, not a regular file or a directory; ${tool} searches only those`
}

export function nulInPathMessage(tool: ToolName): string {
  return `${tool} path must not contain a NUL byte`
}

export function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8')
}

/**
 * The last guard of the budget: a text within `maxBytes`, cut with `…` if it is not. Pages are laid out within
 * the budget; only a budget smaller than their fixed lines (header, footer, notes) ever gets cut here.
 */
export function withinBudget(text: string, maxBytes: number): string {
  if (utf8Bytes(text) <= maxBytes) return text
  return maxBytes < 3 ? cutUtf8(text, maxBytes).text : clip(text, maxBytes)
}

/** What a page reserves for the blocks after its rows (footer, notes), each after a blank line. */
export function trailerBytes(blocks: readonly string[]): number {
  let total = 0
  for (const block of blocks) total += 2 + utf8Bytes(block)
  return total
}
