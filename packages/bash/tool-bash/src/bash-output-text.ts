import { type Static, Type } from '@sinclair/typebox'
import { statusLine, type BashTaskRead, type OutputIncrement } from '@deepseek-ai/dsh-bash'
import { droppedLine } from './common-text.ts'
import { DEFAULT_MAX_RESULT_BYTES, type StreamName } from './bash-text.ts'
import { layout, type Part, type StreamSource } from './stream-text.ts'

export const BASH_OUTPUT_DESCRIPTION = [
  'Read the output a background task (started by bash with run_in_background) printed since the last bash_output call for it, or "(no new output)".',
  'Stderr follows in a "[stderr]" section. The last line is the status: "[status: running]", "[status: completed, exit code: N]" or "[status: killed by SIG]".',
].join(' ')

export const TaskIdParameters = Type.Object({
  task_id: Type.String({ minLength: 1, description: 'The task id that bash returned, e.g. "bash-1".' }),
}, { additionalProperties: false })
export type TaskIdArgs = Static<typeof TaskIdParameters>

/** An increment for the renderer: whole text, counted (not numbered) lines in a cut marker. */
function readSource(name: StreamName, part: OutputIncrement): StreamSource<StreamName> {
  return { name, head: part.text, tail: part.text, complete: true, totalBytes: Buffer.byteLength(part.text), totalLines: undefined, spillPath: part.spillPath, numbered: false }
}

function readLayout(read: BashTaskRead, budget: number): { text: string; cut: StreamName[] } {
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
  parts.push(statusLine(read.status))
  return layout(parts, budget)
}

/**
 * New output as printed (stdout, then a `[stderr]` section), then the status on its own line; at most `budget`
 * bytes, a long increment showing head + cut marker + tail.
 */
export function renderRead(read: BashTaskRead, budget: number = DEFAULT_MAX_RESULT_BYTES): string {
  return readLayout(read, budget).text
}

/** Increments the render would cut while no file holds their stream: worth saving first. */
export function unkeptReadCuts(read: BashTaskRead, budget: number = DEFAULT_MAX_RESULT_BYTES): StreamName[] {
  return readLayout(read, budget).cut.filter((name) => read[name].spillPath === undefined)
}
