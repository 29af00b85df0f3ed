import type { Static } from '@sinclair/typebox'
// The builders one by one, not the `Type` object: the bundle then keeps only these (docs/decisions/2026-12-01-start-up-schemas.md).
import * as Type from '@sinclair/typebox'
import { WAIT_DEFAULT_MS, WAIT_MAX_MS } from './bash-output-text.ts'

/** Without wait_for, bash_input answers once the output has paused this long. */
export const INPUT_QUIET_MS = 500

export const BASH_INPUT_DESCRIPTION = [
  'Type text into an interactive background task (started by bash with run_in_background and interactive: true, on a terminal) and return the output that follows, then the status line.',
  'The text is typed as is: end a line with "\\n" (Enter); "\\u0003" is Ctrl-C, "\\u0004" is Ctrl-D (end of input). What you type is echoed in the output, as on a terminal; terminal control sequences are removed.',
  `With wait_for (a regular expression) the call returns as soon as new output matches it, the task ends, or timeout_ms passes (default ${WAIT_DEFAULT_MS}, at most ${WAIT_MAX_MS}), as bash_output does; without it, once the output has paused for ${INPUT_QUIET_MS}ms (or timeout_ms passed).`,
  'A task that was not started interactive, or has ended, takes no input: that is an error.',
].join(' ')

export const BashInputParameters = Type.Object(
  {
    task_id: Type.String({
      minLength: 1,
      description: 'The id of an interactive task that bash returned, e.g. "bash-1".',
    }),
    text: Type.String({
      description: 'What to type, as is: "\\n" is Enter, "\\u0003" Ctrl-C, "\\u0004" Ctrl-D (end of input).',
    }),
    wait_for: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          'A regular expression (JavaScript syntax, e.g. ">>> $|\\\\$ $"): return as soon as new output matches it, the task ends, or timeout_ms passes.',
      }),
    ),
    timeout_ms: Type.Optional(
      Type.Integer({
        minimum: 1,
        description: `How long to wait for the output, in milliseconds (default ${WAIT_DEFAULT_MS}, at most ${WAIT_MAX_MS}).`,
      }),
    ),
  },
  { additionalProperties: false },
)
export type BashInputArgs = Static<typeof BashInputParameters>

/** Nothing came back within the wait. */
export function noOutputLine(timeoutMs: number): string {
  return `[no output within ${timeoutMs}ms]`
}

/** Output was still coming when the wait ended. */
export function stillComingLine(timeoutMs: number): string {
  return `[output still coming after ${timeoutMs}ms: read the rest with bash_output]`
}
