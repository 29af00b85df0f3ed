import type { ArgumentAliases } from '@deepseek-ai/dsh-tools'
import type { Static } from '@sinclair/typebox'
// The builders one by one, not the `Type` object: the bundle then keeps only these (docs/decisions/2026-12-01-start-up-schemas.md).
import * as Type from '@sinclair/typebox'
import {
  statusLine,
  type OutputIncrement,
  type Task,
  type TaskRead,
  type TaskWaitOutcome,
} from '@deepseek-ai/dsh-tasks'
import { droppedLine } from './common-text.ts'
import { DEFAULT_MAX_RESULT_BYTES, type StreamName } from './bash-text.ts'
import { layout, type Part, type StreamSource } from './stream-text.ts'

/** `timeout_ms` of a wait: default and maximum (larger values are lowered to it). */
export const WAIT_DEFAULT_MS = 30_000
export const WAIT_MAX_MS = 600_000

export const BASH_OUTPUT_DESCRIPTION = [
  'Read the output a background task (started by bash with run_in_background, or named by bash as still running) printed since the last bash_output call for it, or "(no new output)".',
  'Stderr follows in a "[stderr]" section. The last line is the status: "[status: running]", "[status: completed, exit code: N]" or "[status: killed by SIG]".',
  `To wait instead of polling, pass wait_for (a regular expression): the call returns as soon as new output matches it, the task ends, or timeout_ms passes (default ${WAIT_DEFAULT_MS}, at most ${WAIT_MAX_MS}), and a line before the status says which. timeout_ms alone waits for the task to end.`,
  'Without task_id, lists every background task of this session, running or finished: id, status, age and command; finished tasks whose output was read to the end come last, marked "(output read)".',
].join(' ')

export const TaskIdParameters = Type.Object(
  {
    task_id: Type.String({ minLength: 1, description: 'The task id that bash returned, e.g. "bash-1".' }),
  },
  { additionalProperties: false },
)
export type TaskIdArgs = Static<typeof TaskIdParameters>

export const BashOutputParameters = Type.Object(
  {
    task_id: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          'The task id that bash returned, e.g. "bash-1". Omit it to list every background task of this session.',
      }),
    ),
    wait_for: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          'A regular expression (JavaScript syntax, e.g. "Listening on|ready"): wait until new output of the task matches it, the task ends, or timeout_ms passes.',
      }),
    ),
    timeout_ms: Type.Optional(
      Type.Integer({
        minimum: 1,
        description: `How long to wait, in milliseconds (default ${WAIT_DEFAULT_MS}, at most ${WAIT_MAX_MS}). Without wait_for: wait until the task ends.`,
      }),
    ),
  },
  { additionalProperties: false },
)
export type BashOutputArgs = Static<typeof BashOutputParameters>

/** An increment for the renderer: whole text, counted (not numbered) lines in a cut marker. */
function readSource(name: StreamName, part: OutputIncrement): StreamSource<StreamName> {
  return {
    name,
    head: part.text,
    tail: part.text,
    complete: true,
    totalBytes: Buffer.byteLength(part.text),
    totalLines: undefined,
    spillPath: part.spillPath,
    numbered: false,
  }
}

/** The wait line when testing the pattern took too long: the output is shown, so nothing is lost. */
export const PATTERN_TOO_SLOW =
  '[wait_for given up: testing the pattern against the output took too long (nested repetition such as (a+)+ backtracks without end); wait again with a simpler pattern]'

/** How a wait ended, as the line before the status; none for a plain read, or a wait for the end that saw it. */
export function waitLine(
  outcome: TaskWaitOutcome | undefined,
  waitedFor: 'pattern' | 'end',
  timeoutMs: number,
): string | undefined {
  switch (outcome) {
    case 'matched':
      return '[wait_for matched]'
    case 'ended':
      return waitedFor === 'pattern' ? '[the task ended without a match for wait_for]' : undefined
    case 'timeout':
      return waitedFor === 'pattern'
        ? `[no match for wait_for within ${timeoutMs}ms]`
        : `[still running after waiting ${timeoutMs}ms]`
    case 'pattern-too-slow':
      return PATTERN_TOO_SLOW
    default:
      return undefined
  }
}

function readLayout(read: TaskRead, budget: number, wait: string | undefined): { text: string; cut: StreamName[] } {
  const parts: Part<StreamName>[] = []
  const increment = (name: StreamName) => {
    const part = read[name]
    if (part.lossy) parts.push(droppedLine(part.spillPath))
    if (part.text !== '') parts.push(readSource(name, part))
  }
  increment('stdout')
  if (read.stderr.text !== '' || read.stderr.lossy) {
    parts.push('[stderr]')
    increment('stderr')
  }
  if (parts.length === 0) parts.push('(no new output)')
  if (wait !== undefined) parts.push(wait)
  parts.push(statusLine(read.status))
  return layout(parts, budget)
}

/**
 * New output as printed (stdout, then a `[stderr]` section), then how a wait ended (`wait`, see waitLine), then the
 * status on its own line; at most `budget` bytes, a long increment showing head + cut marker + tail.
 */
export function renderRead(read: TaskRead, budget: number = DEFAULT_MAX_RESULT_BYTES, wait?: string): string {
  return readLayout(read, budget, wait).text
}

/** Increments the render would cut while no file holds their stream: worth saving first. */
export function unkeptReadCuts(read: TaskRead, budget: number = DEFAULT_MAX_RESULT_BYTES, wait?: string): StreamName[] {
  return readLayout(read, budget, wait).cut.filter((name) => read[name].spillPath === undefined)
}

/** `12s`, `3m 5s`, `2h 4m`, `3d 1h`. */
export function age(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000))
  if (s < 60) return `${s}s`
  const m = Math.floor(s / 60)
  if (m < 60) return `${m}m ${s % 60}s`
  const h = Math.floor(m / 60)
  if (h < 24) return `${h}h ${m % 60}m`
  return `${Math.floor(h / 24)}d ${h % 24}h`
}

const MAX_COMMAND_CHARS = 120

/** A command on one line: control characters escaped, cut at MAX_COMMAND_CHARS. */
export function oneLine(command: string): string {
  const flat = command.replace(/[\u0000-\u001f\u007f]/g, (c) =>
    c === '\n' ? '\\n' : c === '\t' ? '\\t' : `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`,
  )
  const chars = [...flat]
  return chars.length > MAX_COMMAND_CHARS ? `${chars.slice(0, MAX_COMMAND_CHARS).join('')}…` : flat
}

/**
 * Every task of the session, one per line: id, status, age, command; within `maxBytes`. Running tasks and finished
 * ones with output not yet read come first, in registration order; then the finished ones read to their end, marked
 * `(output read)`. When they do not all fit, the first ones that do are listed and a last line names the others.
 */
export function renderList(tasks: readonly Task[], now: number, maxBytes: number): string {
  if (tasks.length === 0) return 'no background tasks in this session'
  // Stable: registration order within each group. What the model may still act on goes first, within the budget.
  const ordered = [...tasks].sort((a, b) => Number(a.readToEnd) - Number(b.readToEnd))
  const head = `${tasks.length} background task${tasks.length === 1 ? '' : 's'} in this session:`
  const rows = ordered.map((task) => {
    const read = task.readToEnd ? ' (output read)' : ''
    return `${task.id} ${statusLine(task.status)} ${age(now - task.startedAt)}${read}: ${oneLine(task.command)}`
  })
  const whole = [head, ...rows].join('\n')
  if (Buffer.byteLength(whole, 'utf8') <= maxBytes) return whole
  const rest = (shown: number) =>
    `[${tasks.length - shown} more not shown, to stay within ${maxBytes} bytes: ${hiddenRanges(
      ordered.slice(shown),
    )}; read one with bash_output and its task_id]`
  // Bytes of the head and the first n rows, each with its newline.
  const upTo = [Buffer.byteLength(head, 'utf8')]
  for (const row of rows) upTo.push((upTo.at(-1) as number) + 1 + Buffer.byteLength(row, 'utf8'))
  let shown = rows.length - 1
  while (shown > 0 && (upTo[shown] as number) + 1 + Buffer.byteLength(rest(shown), 'utf8') > maxBytes) shown--
  return [head, ...rows.slice(0, shown), rest(shown)].join('\n')
}

/** The ids of tasks left out of a list, per group: `bash-4 to bash-9; bash-1 to bash-3 (output read)`. */
function hiddenRanges(hidden: readonly Task[]): string {
  const groups = [hidden.filter((task) => !task.readToEnd), hidden.filter((task) => task.readToEnd)]
  return groups
    .map((group, read) => {
      const [first, last] = [group[0], group.at(-1)]
      if (first === undefined || last === undefined) return ''
      const ids = `${first.id} to ${last.id}`
      return read ? `${ids} (output read)` : ids
    })
    .filter((text) => text !== '')
    .join('; ')
}

/** Other clients' names for the task id (Claude Code's BashOutput `bash_id`, KillShell `shell_id`): taken as it. */
export const TASK_ID_ALIASES = { bash_id: 'task_id', shell_id: 'task_id' } as const satisfies ArgumentAliases

/** bash_output's and bash_input's: the task id's, and bash's name for a timeout in milliseconds (docs/model-surface.md#tools). */
export const WAIT_ALIASES = {
  ...TASK_ID_ALIASES,
  timeoutMs: 'timeout_ms',
  timeout: { hint: 'pass "timeout_ms" instead (milliseconds)' },
} as const satisfies ArgumentAliases
