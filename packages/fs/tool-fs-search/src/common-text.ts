import type { SavedText } from '@deepseek-ai/dsh-spill'
import { escapeControl } from './paths.ts'

/*
 * Every text both tools share. Pure functions of their arguments: each exact text is a unit test.
 */

export type ToolName = 'glob' | 'grep'

/** What became of the complete result when the inline page was cut. */
export type SpillOutcome =
  | { readonly saved: Pick<SavedText, 'locator' | 'retrievalHint'> }
  | { readonly unsaved: string }

const NARROW: Record<ToolName, string> = {
  glob: 'use a more specific pattern or a deeper path',
  grep: 'use a more specific pattern, a deeper path, or include',
}

/** A path as the model sees it: one line, no terminal escapes; the working directory itself is `.`. */
export function showPath(path: string): string {
  return path === '' ? '.' : escapeControl(path, { keepTab: false })
}

/** The footer of a cut result: shown and total, then where the rest is, or why it is not kept and what to do. */
export function capFooter(tool: ToolName, shown: number, total: number, noun: string, spill: SpillOutcome): string {
  const head = `[Showing ${shown} of ${total} ${noun}.`
  if ('saved' in spill) return `${head} The complete result is saved at ${showPath(spill.saved.locator)}. ${spill.saved.retrievalHint}]`
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
  const shown = lines.slice(0, NOTE_LINES).join('; ')
  const more = lines.length > NOTE_LINES ? ` (and ${lines.length - NOTE_LINES} more)` : ''
  return `[Some paths could not be searched, so the results may be incomplete: ${shown || 'ripgrep gave no reason'}${more}]`
}

function stderrLines(stderr: string): string[] {
  return stderr.split('\n').map((line) => escapeControl(line.trimEnd(), { keepTab: true })).filter((line) => line !== '')
}

const STDERR_MAX_CHARS = 2000

/** ripgrep's stderr for an error message: its own line breaks kept, nothing else raw, bounded. */
function stderrText(stderr: string): string {
  const text = stderrLines(stderr).join('\n')
  return text.length > STDERR_MAX_CHARS ? `${text.slice(0, STDERR_MAX_CHARS)}…` : text
}

export function launchFailedMessage(tool: ToolName, binary: string, cause: string): string {
  return `${tool} search failed: could not start ripgrep (${escapeControl(binary, { keepTab: false })}): ${escapeControl(cause, { keepTab: false })}`
}

export function abortedMessage(tool: ToolName): string {
  return `${tool} search aborted: the call was cancelled or ran out of time, and ripgrep was stopped`
}

export function overflowMessage(tool: ToolName, maxBytes: number): string {
  return `${tool} search stopped: ripgrep printed more than ${maxBytes} bytes of raw output. To search less, ${NARROW[tool]}.`
}

export function malformedMessage(tool: ToolName, detail: string): string {
  return `${tool} search failed: could not read ripgrep's output (${escapeControl(detail, { keepTab: false })})`
}

export function killedMessage(tool: ToolName, signal: string): string {
  return `${tool} search failed: ripgrep was killed by ${signal}`
}

export function exitMessage(tool: ToolName, exitCode: number | null, stderr: string): string {
  return `${tool} search failed (exit ${exitCode}): ${stderrText(stderr) || 'ripgrep printed no error'}`
}

export function invalidPatternMessage(tool: ToolName, stderr: string): string {
  return `invalid ${tool} pattern: ${stderrText(stderr)}`
}

export function missingPathMessage(tool: ToolName, path: string): string {
  return `${tool} search failed: ${showPath(path)}: no such file or directory`
}

export function unusablePathMessage(tool: ToolName, path: string, cause: string): string {
  return `${tool} search failed: ${showPath(path)}: ${escapeControl(cause, { keepTab: false })}`
}

export function nulInPathMessage(tool: ToolName): string {
  return `${tool} path must not contain a NUL byte`
}
