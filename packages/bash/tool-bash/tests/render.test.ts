import fc from 'fast-check'
import { expect, test } from 'vitest'
import type { CollectedOutput } from '@deepseek-ai/dsh-bash'
import type { Task as BashTask, TaskRead as BashTaskRead } from '@deepseek-ai/dsh-tasks'
import { renderRun, renderStarted } from '../src/bash-text.ts'
import { age, oneLine, renderList, renderRead, waitLine } from '../src/bash-output-text.ts'
import { renderKill } from '../src/bash-kill-text.ts'
import {
  abortedMessage,
  notStartedMessage,
  unknownTaskMessage,
  nulMessage,
  workdirMessage,
  type RunOutcome as BashRunResult,
} from '../src/common-text.ts'

const out = (text: string, more: Partial<CollectedOutput> = {}): CollectedOutput => ({
  text,
  truncated: false,
  totalBytes: Buffer.byteLength(text),
  ...more,
})
const run = (more: Partial<BashRunResult> = {}): BashRunResult => ({
  exitCode: 0,
  signal: null,
  timedOut: false,
  aborted: false,
  timeoutMs: 120_000,
  stdout: out(''),
  stderr: out(''),
  adoptedTaskId: undefined,
  leftRunning: [],
  ...more,
})

test('stdout alone is shown as printed, without its final newline', () => {
  expect(renderRun(run({ stdout: out('hello\nworld\n') }))).toBe('hello\nworld')
  expect(renderRun(run({ stdout: out('no newline') }))).toBe('no newline')
  expect(renderRun(run({ stdout: out('blank line kept\n\n') }))).toBe('blank line kept\n')
})

test('no output at all is "(no output)"', () => {
  expect(renderRun(run())).toBe('(no output)')
})

test('stderr gets its own section after stdout', () => {
  expect(renderRun(run({ stdout: out('out\n'), stderr: out('err\n') }))).toBe('out\n[stderr]\nerr')
  expect(renderRun(run({ stderr: out('only err\n') }))).toBe('[stderr]\nonly err')
})

test('a non-zero exit is a marker on its own line; exit 0 has none', () => {
  expect(renderRun(run({ exitCode: 2, stdout: out('x\n') }))).toBe('x\n[exit code: 2]')
  expect(renderRun(run({ exitCode: 1 }))).toBe('(no output)\n[exit code: 1]')
  expect(renderRun(run({ exitCode: 1, stdout: out('partial') }))).toBe('partial\n[exit code: 1]')
  expect(renderRun(run({ exitCode: 3, stdout: out('a\n'), stderr: out('b\n') }))).toBe('a\n[stderr]\nb\n[exit code: 3]')
})

test('a signal kill is a marker', () => {
  expect(renderRun(run({ exitCode: null, signal: 'SIGKILL' }))).toBe('(no output)\n[killed by signal: SIGKILL]')
})

test('a timeout shows the timeout marker and then the signal marker', () => {
  expect(
    renderRun(run({ exitCode: null, signal: 'SIGTERM', timedOut: true, timeoutMs: 1500, stdout: out('tick\n') })),
  ).toBe('tick\n[timed out after 1500ms]\n[killed by signal: SIGTERM]')
})

test('a timed-out command that exited by itself on SIGTERM shows its exit code, the fact it reported', () => {
  expect(renderRun(run({ exitCode: 143, timedOut: true, timeoutMs: 10 }))).toBe(
    '(no output)\n[timed out after 10ms]\n[exit code: 143]',
  )
})

test('a cut stream shows head, one marker line naming what was left out and the file, then tail', () => {
  const text = `${Array.from({ length: 100 }, (_, i) => `${i + 1}`).join('\n')}\n`
  const stdout = out(text, { spillPath: '/tmp/s/1-42-stdout.log' })
  expect(renderRun(run({ stdout }), 291)).toBe(text.slice(0, -1)) // 291 bytes without the final newline: fits exactly
  expect(renderRun(run({ stdout, exitCode: 1 }), 120)).toBe(
    [
      '1',
      '2',
      '[output cut: lines 3-98 of 100 (281 bytes) left out; full output: /tmp/s/1-42-stdout.log]',
      '99',
      '100',
      '[exit code: 1]',
    ].join('\n'),
  )
})

test('a stream dropped in the middle shows the kept head and tail, with line numbers of the whole stream', () => {
  const stdout = out('99998\n99999\n100000\n', {
    truncated: true,
    head: '1\n2\n3\n4',
    totalBytes: 588_895,
    totalLines: 100_000,
    spillPath: '/tmp/s/1-42-stdout.log',
  })
  const stderr = out('err tail\n', {
    truncated: true,
    head: 'err head\n',
    totalBytes: 90_000,
    totalLines: 9000,
    spillPath: '/tmp/s/2-42-stderr.log',
  })
  expect(renderRun(run({ stdout, stderr, exitCode: 1 }))).toBe(
    [
      '1',
      '2',
      '3',
      '[output cut: lines 4-99998 of 100000 (588876 bytes) left out; full output: /tmp/s/1-42-stdout.log]',
      '99999',
      '100000',
      '[stderr]',
      'err head',
      // The kept tail's first line may have begun before it: it is not shown as a whole line, and counts as left out.
      '[output cut: lines 2-9000 of 9000 (89982 bytes) left out; full output: /tmp/s/2-42-stderr.log]',
      'err tail',
      '[exit code: 1]',
    ].join('\n'),
  )
})

test('a cut stream whose complete copy was not kept says so and how to keep it', () => {
  const stdout = out('000\n', { truncated: true, head: '', totalBytes: 1_073_741_824, totalLines: 1 })
  expect(renderRun(run({ stdout }))).toBe(
    '[output cut: line 1 of 1 (1073741820 bytes) left out; the full output (1073741824 bytes) was not kept: redirect it to a file to keep it]\n000',
  )
})

test('an aborted run says so (the tool itself reports an abort as an ABORTED error)', () => {
  expect(renderRun(run({ exitCode: null, signal: 'SIGTERM', aborted: true }))).toBe(
    '(no output)\n[aborted]\n[killed by signal: SIGTERM]',
  )
})

test('background start', () => {
  expect(renderStarted('bash-3')).toBe('started background task bash-3')
})

const inc = (text: string, more: { lossy?: boolean; spillPath?: string } = {}) => ({
  text,
  lossy: more.lossy ?? false,
  ...(more.spillPath ? { spillPath: more.spillPath } : {}),
})
const read = (more: Partial<BashTaskRead> = {}): BashTaskRead => ({
  stdout: inc(''),
  stderr: inc(''),
  status: { state: 'running' },
  ...more,
})

test('bash_output: new output, then the status on its own line', () => {
  expect(renderRead(read({ stdout: inc('line 1\nline 2\n') }))).toBe('line 1\nline 2\n[status: running]')
  expect(renderRead(read({ stdout: inc('partial') }))).toBe('partial\n[status: running]')
})

test('bash_output: nothing new is "(no new output)"', () => {
  expect(renderRead(read())).toBe('(no new output)\n[status: running]')
  expect(renderRead(read({ status: { state: 'completed', exitCode: 0 } }))).toBe(
    '(no new output)\n[status: completed, exit code: 0]',
  )
})

test('bash_output: the three statuses', () => {
  expect(renderRead(read({ stdout: inc('done\n'), status: { state: 'completed', exitCode: 4 } }))).toBe(
    'done\n[status: completed, exit code: 4]',
  )
  expect(renderRead(read({ status: { state: 'killed', signal: 'SIGTERM' } }))).toBe(
    '(no new output)\n[status: killed by SIGTERM]',
  )
})

test('bash_output: stderr gets its own section', () => {
  expect(renderRead(read({ stdout: inc('a'), stderr: inc('b\n') }))).toBe('a\n[stderr]\nb\n[status: running]')
  expect(renderRead(read({ stderr: inc('warn') }))).toBe('[stderr]\nwarn\n[status: running]')
})

test('bash_output: dropped output is announced before the new text, with the file that holds everything', () => {
  expect(renderRead(read({ stdout: inc('tail\n', { lossy: true, spillPath: '/tmp/s/3-9-stdout.log' }) }))).toBe(
    '[earlier output was dropped; full output: /tmp/s/3-9-stdout.log]\ntail\n[status: running]',
  )
  expect(renderRead(read({ stderr: inc('e', { lossy: true }) }))).toBe(
    '[stderr]\n[earlier output was dropped; the full output was not kept]\ne\n[status: running]',
  )
})

test('bash_kill texts', () => {
  expect(renderKill('bash-2', true)).toBe('killed background task bash-2')
  expect(renderKill('bash-2', false)).toBe('task bash-2 had already finished')
})

test('error texts', () => {
  expect(unknownTaskMessage('bash-99')).toBe(
    'unknown task id "bash-99": this process has no background task with that id. Use an id that bash returned (for run_in_background, or named as still running), or call bash_output without task_id to list this session\'s tasks. Background tasks do not outlive the process that started them: a one-shot `dsh call` stops its tasks when it exits.',
  )
  expect(unknownTaskMessage('x\ny')).toMatch(/^unknown task id "x\\ny": /)
  expect(abortedMessage()).toBe('bash command aborted: the call was cancelled and the command was killed')
  expect(notStartedMessage()).toBe('bash command not started: the call was cancelled')
  expect(nulMessage()).toBe('command contains a NUL byte, which no shell command can hold')
  expect(workdirMessage('sub', 'working directory "/w/sub" does not exist')).toBe(
    'invalid workdir "sub": working directory "/w/sub" does not exist; pass an existing directory, absolute or relative to the working directory',
  )
})

test('renderRun: the output comes first, verbatim, and the markers are the last lines, in order (property, seeded)', () => {
  const stream = fc.record({ text: fc.string({ unit: 'grapheme', maxLength: 80 }), truncated: fc.boolean() })
  fc.assert(
    fc.property(
      stream,
      stream,
      fc.integer({ min: 0, max: 255 }),
      fc.option(fc.constantFrom('SIGTERM', 'SIGKILL')),
      fc.boolean(),
      (o, e, code, signal, timedOut) => {
        const collected = (s: { text: string; truncated: boolean }, spillPath: string) =>
          out(
            s.text,
            s.truncated
              ? { truncated: true, head: '', totalBytes: Buffer.byteLength(s.text) + 100, spillPath }
              : { spillPath },
          )
        const result = run({
          stdout: collected(o, '/s/out'),
          stderr: collected(e, '/s/err'),
          exitCode: signal ? null : code,
          signal,
          timedOut,
          timeoutMs: 7,
        })
        const text = renderRun(result)
        const expectedMarkers = [
          ...(timedOut ? ['[timed out after 7ms]'] : []),
          ...(signal ? [`[killed by signal: ${signal}]`] : code !== 0 ? [`[exit code: ${code}]`] : []),
        ]
        const lines = text.split('\n')
        expect(lines.slice(lines.length - expectedMarkers.length)).toEqual(expectedMarkers)
        const body = lines.slice(0, lines.length - expectedMarkers.length).join('\n')
        const shown = o.text !== '' || o.truncated
        if (shown && !o.truncated) expect(body.startsWith(o.text.replace(/\n$/, ''))).toBe(true)
        if (o.truncated) expect(body.startsWith('[output cut: ')).toBe(true)
        if (!shown && e.text === '' && !e.truncated) expect(body).toBe('(no output)')
        expect(body.includes('[stderr]')).toBe(e.text !== '' || e.truncated || o.text.includes('[stderr]'))
      },
    ),
    { seed: 105, numRuns: 500 },
  )
})

test('renderRead: the new output verbatim, then exactly one status line (property, seeded)', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'grapheme', maxLength: 80 }), fc.integer({ min: 0, max: 255 }), (text, code) => {
      const rendered = renderRead(read({ stdout: inc(text), status: { state: 'completed', exitCode: code } }))
      const status = `[status: completed, exit code: ${code}]`
      expect(rendered.endsWith(`\n${status}`)).toBe(true)
      const body = rendered.slice(0, -status.length)
      expect(body).toBe(text === '' ? '(no new output)\n' : text.endsWith('\n') ? text : `${text}\n`)
    }),
    { seed: 106, numRuns: 500 },
  )
})

test('leftovers come last: the adopted task, then strays that were not stopped', () => {
  expect(renderRun(run({ stdout: out('started\n'), adoptedTaskId: 'bash-3' }))).toBe(
    'started\n[background processes still running: task bash-3]',
  )
  expect(
    renderRun(
      run({
        stdout: out('started\n'),
        exitCode: 2,
        leftRunning: [
          { pid: 42, command: 'sleep 30' },
          { pid: 43, command: '' },
        ],
      }),
    ),
  ).toBe(
    "started\n[exit code: 2]\n[still running outside the command's process group, not stopped: pid 42 (sleep 30), pid 43]",
  )
  expect(
    renderRun(run({ timedOut: true, signal: 'SIGTERM', exitCode: null, leftRunning: [{ pid: 7, command: 'd' }] })),
  ).toBe(
    "(no output)\n[timed out after 120000ms]\n[killed by signal: SIGTERM]\n[still running outside the command's process group, not stopped: pid 7 (d)]",
  )
})

test('bash_kill names the strays it could not stop, only when it killed', () => {
  expect(renderKill('bash-1', true, [{ pid: 9, command: 'sleep 30' }])).toBe(
    "killed background task bash-1\n[still running outside the task's process group, not stopped: pid 9 (sleep 30)]",
  )
  expect(renderKill('bash-1', false, [{ pid: 9, command: 'sleep 30' }])).toBe('task bash-1 had already finished')
})

test('wait lines say how a wait ended; none for a plain read or a wait for the end that saw it', () => {
  const read: BashTaskRead = {
    stdout: { text: 'READY\n', lossy: false },
    stderr: { text: '', lossy: false },
    status: { state: 'running' },
  }
  expect(renderRead(read, 30_000, waitLine('matched', 'pattern', 30_000))).toBe(
    'READY\n[wait_for matched]\n[status: running]',
  )
  expect(waitLine('timeout', 'pattern', 300)).toBe('[no match for wait_for within 300ms]')
  expect(waitLine('timeout', 'end', 300)).toBe('[still running after waiting 300ms]')
  expect(waitLine('ended', 'pattern', 300)).toBe('[the task ended without a match for wait_for]')
  expect(waitLine('ended', 'end', 300)).toBeUndefined()
  expect(waitLine(undefined, 'end', 300)).toBeUndefined()
  expect(waitLine('pattern-too-slow', 'pattern', 300)).toBe(
    '[wait_for given up: testing the pattern against the output took too long (nested repetition such as (a+)+ backtracks without end); wait again with a simpler pattern]',
  )
})

test('the task list: one line per task with status, age and a one-line command', () => {
  const task = (
    id: string,
    command: string,
    startedAt: number,
    status: BashTask['status'] = { state: 'running' },
    readToEnd = false,
  ): BashTask => ({
    id,
    command,
    workdir: '/w',
    status,
    startedAt,
    interactive: false,
    leftRunning: [],
    readToEnd,
  })
  expect(renderList([], 0, 30_000)).toBe('no background tasks in this session')
  expect(renderList([task('bash-1', 'npm run dev', 0)], 192_000, 30_000)).toBe(
    '1 background task in this session:\nbash-1 [status: running] 3m 12s: npm run dev',
  )
  expect(
    renderList(
      [task('bash-1', 'a\nb\tc\x1b', 1000), task('bash-2', 'x'.repeat(130), 0, { state: 'completed', exitCode: 0 })],
      42_000,
      30_000,
    ),
  ).toBe(
    `2 background tasks in this session:\nbash-1 [status: running] 41s: a\\nb\\tc\\x1b\nbash-2 [status: completed, exit code: 0] 42s: ${'x'.repeat(120)}…`,
  )
  expect([age(0), age(59_999), age(3_600_000 + 240_000), age(2 * 86_400_000 + 3_600_000)]).toEqual([
    '0s',
    '59s',
    '1h 4m',
    '2d 1h',
  ])
  expect(oneLine('é'.repeat(121))).toBe(`${'é'.repeat(120)}…`)
})

test('a task list longer than the budget lists the first tasks that fit and names the ids of the rest (property)', () => {
  const task = (n: number, command: string): BashTask => ({
    id: `bash-${n}`,
    command,
    workdir: '/w',
    status: { state: 'running' },
    startedAt: 0,
    interactive: false,
    leftRunning: [],
    readToEnd: false,
  })
  fc.assert(
    fc.property(
      fc.integer({ min: 1024, max: 40_000 }),
      fc.array(fc.string({ unit: 'grapheme', maxLength: 150 }), { minLength: 1, maxLength: 400 }),
      (budget, commands) => {
        const tasks = commands.map((command, i) => task(i + 1, command))
        const text = renderList(tasks, 5000, budget)
        expect(Buffer.byteLength(text, 'utf8')).toBeLessThanOrEqual(budget)
        const lines = text.split('\n')
        expect(lines[0]).toBe(`${tasks.length} background task${tasks.length === 1 ? '' : 's'} in this session:`)
        const listed = lines.slice(1).filter((line) => /^bash-\d+ \[/.test(line)).length
        if (listed < tasks.length) {
          expect(lines.at(-1)).toBe(
            `[${tasks.length - listed} more not shown, to stay within ${budget} bytes: bash-${listed + 1} to bash-${tasks.length}; read one with bash_output and its task_id]`,
          )
          expect(listed).toBeGreaterThan(0)
        } else expect(lines).toHaveLength(tasks.length + 1)
      },
    ),
    { numRuns: 200 },
  )
})

test('the task list shows finished tasks read to their end last, marked (output read)', () => {
  const task = (n: number, status: BashTask['status'], readToEnd: boolean, command = `job ${n}`): BashTask => ({
    id: `bash-${n}`,
    command,
    workdir: '/w',
    status,
    startedAt: 0,
    interactive: false,
    leftRunning: [],
    readToEnd,
  })
  const done = { state: 'completed', exitCode: 0 } as const
  const running = { state: 'running' } as const
  expect(
    renderList(
      [
        task(1, done, true),
        task(2, running, false),
        task(3, { state: 'killed', signal: 'SIGTERM' }, true),
        task(4, done, false),
      ],
      61_000,
      30_000,
    ),
  ).toBe(
    [
      '4 background tasks in this session:',
      'bash-2 [status: running] 1m 1s: job 2',
      'bash-4 [status: completed, exit code: 0] 1m 1s: job 4',
      'bash-1 [status: completed, exit code: 0] 1m 1s (output read): job 1',
      'bash-3 [status: killed by SIGTERM] 1m 1s (output read): job 3',
    ].join('\n'),
  )
  expect(renderList([task(1, done, true)], 0, 30_000)).toBe(
    '1 background task in this session:\nbash-1 [status: completed, exit code: 0] 0s (output read): job 1',
  )
  const many = [
    ...Array.from({ length: 30 }, (_, i) => task(i + 1, done, true, 'x'.repeat(100))),
    task(31, running, false),
  ]
  expect(renderList(many, 0, 1024).split('\n').slice(0, 2)).toEqual([
    '31 background tasks in this session:',
    'bash-31 [status: running] 0s: job 31',
  ])
  expect(renderList(many, 0, 1024).split('\n').at(-1)).toMatch(
    /^\[\d+ more not shown, to stay within 1024 bytes: bash-\d+ to bash-30 \(output read\); read one with bash_output and its task_id\]$/,
  )
})

test('a task list of running and read tasks longer than the budget names the ids left out, per group (property)', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1024, max: 20_000 }),
      fc.array(fc.tuple(fc.boolean(), fc.string({ maxLength: 150 })), { minLength: 1, maxLength: 300 }),
      (budget, specs) => {
        const tasks: BashTask[] = specs.map(([read, command], i) => ({
          id: `bash-${i + 1}`,
          command,
          workdir: '/w',
          owner: 's',
          status: read ? { state: 'completed', exitCode: 0 } : { state: 'running' },
          startedAt: 0,
          interactive: false,
          leftRunning: [],
          readToEnd: read,
        }))
        const text = renderList(tasks, 0, budget)
        expect(Buffer.byteLength(text, 'utf8')).toBeLessThanOrEqual(budget)
        const rows = text.split('\n').filter((line) => /^bash-\d+ \[/.test(line))
        const ids = rows.map((row) => row.split(' ')[0])
        const expected = [...tasks.filter((t) => !t.readToEnd), ...tasks.filter((t) => t.readToEnd)].map((t) => t.id)
        expect(ids).toEqual(expected.slice(0, ids.length))
        expect(
          rows.every((row, i) => row.includes('(output read)') === tasks[Number(ids[i]?.slice(5)) - 1]?.readToEnd),
        ).toBe(true)
        if (ids.length < tasks.length) {
          const hidden = expected.slice(ids.length).map((id) => tasks[Number(id.slice(5)) - 1] as BashTask)
          const range = (group: BashTask[], mark: string) =>
            group.length ? [`${group[0]?.id} to ${group.at(-1)?.id}${mark}`] : []
          const ranges = [
            ...range(
              hidden.filter((t) => !t.readToEnd),
              '',
            ),
            ...range(
              hidden.filter((t) => t.readToEnd),
              ' (output read)',
            ),
          ]
          expect(text.split('\n').at(-1)).toBe(
            `[${hidden.length} more not shown, to stay within ${budget} bytes: ${ranges.join('; ')}; read one with bash_output and its task_id]`,
          )
          expect(ids.length).toBeGreaterThan(0)
        }
      },
    ),
    { numRuns: 200 },
  )
})

test('a cancelled call names the strays it left running', () => {
  expect(abortedMessage([{ pid: 5, command: 'sleep 30' }])).toBe(
    "bash command aborted: the call was cancelled and the command was killed [still running outside the command's process group, not stopped: pid 5 (sleep 30)]",
  )
})
