import { type Static, Type } from '@sinclair/typebox'
import { statusLine, type BashTaskRead, type OutputIncrement } from '@deepseek-ai/dsh-bash'
import { appendLine, droppedLine } from './common-text.ts'

export const BASH_OUTPUT_DESCRIPTION = [
  'Read the output a background task (started by bash with run_in_background) printed since the last bash_output call for it, or "(no new output)".',
  'Stderr follows in a "[stderr]" section. The last line is the status: "[status: running]", "[status: completed, exit code: N]" or "[status: killed by SIG]".',
].join(' ')

export const TaskIdParameters = Type.Object({
  task_id: Type.String({ minLength: 1, description: 'The task id that bash returned, e.g. "bash-1".' }),
}, { additionalProperties: false })
export type TaskIdArgs = Static<typeof TaskIdParameters>

function increment(text: string, part: OutputIncrement): string {
  let out = text
  if (part.lossy) out = appendLine(out, `${droppedLine(part.spillPath)}\n`)
  if (part.text !== '') out = appendLine(out, part.text)
  return out
}

/** New output as printed (stdout, then a `[stderr]` section), then the status on its own line. */
export function renderRead(read: BashTaskRead): string {
  let text = increment('', read.stdout)
  if (read.stderr.text !== '' || read.stderr.lossy) text = increment(appendLine(text, '[stderr]\n'), read.stderr)
  if (text === '') text = '(no new output)'
  return appendLine(text, statusLine(read.status))
}
