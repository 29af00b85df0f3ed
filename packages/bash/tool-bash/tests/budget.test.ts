import { sessionFor } from '@deepseek-ai/dsh-testing'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, expect, test } from 'vitest'
import { SpillError, SpillStore, type SavedText } from '@deepseek-ai/dsh-spill'
import { harness, type Harness, type ToolName } from './helpers.ts'

let h: Harness
afterEach(async () => {
  await h?.cleanup()
})

const seqText = (n: number) => Array.from({ length: n }, (_, i) => `${i + 1}\n`).join('')

test('bash_output: an increment longer than the budget shows head and tail, and the whole increment is kept through the spill store', async () => {
  h = await harness({}, { spillStore: true, tool: { maxResultBytes: 2000 } })
  await h.text('bash', { command: 'seq 1 3000', description: 'count', run_in_background: true })
  await h.done('bash-1')
  const text = await h.text('bash_output', { task_id: 'bash-1' })
  expect(Buffer.byteLength(text)).toBeLessThanOrEqual(2000)
  const lines = text.split('\n')
  expect(lines[0]).toBe('1')
  expect(lines.at(-2)).toBe('3000')
  expect(lines.at(-1)).toBe('[status: completed, exit code: 0]')
  const markers = lines.filter((line) => line.startsWith('[output cut: '))
  expect(markers).toHaveLength(1)
  const match = /^\[output cut: (\d+) lines \((\d+) bytes\) left out; full output: (\/.+)\]$/.exec(markers[0]!)!
  const shown = lines.length - 2 // the marker and the status
  expect(Number(match[1])).toBe(3000 - shown)
  expect(match[3]!.startsWith(`${join(h.dir, '.saved', sessionFor('session-1', h.dir).dirName)}/`)).toBe(true)
  expect(readFileSync(match[3]!, 'utf8')).toBe(seqText(3000))
})

/** A store whose every save fails: the fault is forced. */
class FailingStore extends SpillStore {
  calls = 0
  async saveText(): Promise<SavedText> {
    this.calls++
    throw new SpillError('disk full', { code: 'SPILL_WRITE_FAILED' })
  }
}

test('a failing spill store (forced) keeps the call a result: the marker says the output was not kept', async () => {
  h = await harness({}, { tool: { maxResultBytes: 2000 } })
  await h.active(h.ctx.plugin(FailingStore))
  const result = await h.call('bash', { command: 'seq 1 2000', description: 'count' })
  expect(result.isError).toBe(false)
  expect(Buffer.byteLength(result.content[0].text)).toBeLessThanOrEqual(2000)
  expect(result.content[0].text).toMatch(
    /\n\[output cut: lines \d+-\d+ of 2000 \(\d+ bytes\) left out; the full output \(8893 bytes\) was not kept: redirect it to a file to keep it\]\n/,
  )
  expect((h.ctx.spillStore as FailingStore).calls).toBe(1)
})

test('a call without a session cannot own a saved file: the marker says the output was not kept', async () => {
  h = await harness({}, { spillStore: true, tool: { maxResultBytes: 2000 } })
  const text = (await h.call('bash', { command: 'seq 1 2000', description: 'count' }, { session: null })).content[0]
    .text
  expect(text).toMatch(/ the full output \(8893 bytes\) was not kept: redirect it to a file to keep it\]\n/)
})

test('an error text repeats at most 300 bytes of any argument: a huge task_id, wait_for or workdir keeps it short', async () => {
  h = await harness()
  const huge = (unit: string) => unit.repeat(120_000)
  const cases: [ToolName, Record<string, unknown>, string][] = [
    ['bash_output', { task_id: huge('a') }, 'BASH_UNKNOWN_TASK'],
    ['bash_kill', { task_id: huge('a') }, 'BASH_UNKNOWN_TASK'],
    ['bash_output', { task_id: 'bash-1', wait_for: huge('(') }, 'INVALID_ARGS'],
    ['bash', { command: 'true', description: 'x', workdir: huge('a') }, 'INVALID_ARGS'],
    ['bash', { command: 'true', description: 'x', workdir: huge('é/') }, 'INVALID_ARGS'],
    ['bash', { command: 'true', description: 'x', workdir: `${huge('a')}\0` }, 'INVALID_ARGS'],
  ]
  await h.text('bash', { command: 'true', description: 'a task to wait for', run_in_background: true })
  for (const [tool, args, code] of cases) {
    const result = await h.call(tool, args)
    expect({ tool, code: result.error?.code }).toEqual({ tool, code })
    // Each value appears at most twice, cut to 300 bytes; the rest of the text is the advice.
    expect({ tool, short: Buffer.byteLength(result.content[0].text) < 1500 }).toEqual({ tool, short: true })
  }
  const unknown = await h.call('bash_output', { task_id: `bash-${'9'.repeat(1000)}` })
  expect(unknown.content[0].text).toBe(
    [
      `Error: unknown task id "bash-${'9'.repeat(292)}…": this process has no background task with that id.`,
      "Use an id that bash returned (for run_in_background, or named as still running), or call bash_output without task_id to list this session's tasks.",
      'Background tasks do not outlive the process that started them: a one-shot `dsh call` stops its tasks when it exits.',
    ].join(' '),
  )
  const pattern = await h.call('bash_output', { task_id: 'bash-1', wait_for: `(${'x'.repeat(1000)}` })
  expect(pattern.content[0].text).toBe(
    `Error: invalid wait_for "(${'x'.repeat(296)}…": Invalid regular expression: /(${'x'.repeat(296)}…/m: Unterminated group; pass a JavaScript regular expression, e.g. "Listening on|ready"`,
  )
})
