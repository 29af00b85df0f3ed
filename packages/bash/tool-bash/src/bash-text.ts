import type { ArgumentAliases } from '@deepseek-ai/dsh-tools'
import type { Static } from '@sinclair/typebox'
// The builders one by one, not the `Type` object: the bundle then keeps only these (docs/decisions/2026-12-01-start-up-schemas.md).
import * as Type from '@sinclair/typebox'
import type { CollectedOutput } from '@deepseek-ai/dsh-bash'
import { leftoverLines, type RunOutcome } from './common-text.ts'
import { layout, type Part, type StreamSource } from './stream-text.ts'

/** The default of `maxResultBytes`: no result text is longer (UTF-8 bytes). */
export const DEFAULT_MAX_RESULT_BYTES = 30_000

/** The default of `backgroundAfterMs`: under the 60 s request timeout of the official MCP SDK's clients. */
export const DEFAULT_BACKGROUND_AFTER_MS = 45_000

export const BASH_PROMPT_ID = 'tool:bash'
export const BASH_PROMPT_ORDER = 105

export const BASH_PROMPT = [
  "Use this server's bash tool to run shell commands: builds, tests, git, package managers. To read, find or search files, its read, glob and grep tools do better than cat, find, ls or grep run through bash.",
  'Each bash call runs in a fresh non-interactive shell (no terminal, empty stdin) in the working directory or in workdir: cd and variables do not carry over to the next call, and commands that wait for input fail at once (git never prompts for credentials; editors and apt ask nothing).',
  'A failing command is not a tool error. Always read the markers on the last lines of the result: "[exit code: N]" means the command exited with status N (no marker means status 0); "[timed out after Nms]" and "[killed by signal: SIG]" mean it did not finish.',
  'For servers, watchers and other long-running commands, set run_in_background: bash returns a task id (bash-N) at once; wait for a line with bash_output wait_for (no need to poll or sleep), read the new output with bash_output and stop the task with bash_kill.',
  'A command that leaves processes running (cmd &) returns when its shell exits; what it left is a background task named on the last line: "[background processes still running: task bash-N]".',
  'For a program that asks for input (a REPL such as python3 -i, a [y/N] prompt, ssh), start it with run_in_background and interactive: true, then type into it with bash_input (text "print(6*7)\\n"; "\\u0003" is Ctrl-C, "\\u0004" ends the input); it answers with the output that follows.',
  'A long command given no timeoutMs is never lost to a client\'s request timeout: once it has run for a while, the call returns its output so far and the command continues as a background task named on the last line ("[still running after Nms: it continues as background task bash-N. …]"); wait for it with bash_output wait_for or timeout_ms.',
].join('\n')

export interface TimeoutBounds {
  readonly defaultMs: number
  readonly maxMs: number
  /** 0: a foreground call without timeoutMs is never moved to the background. */
  readonly backgroundAfterMs?: number
}

export function bashDescription(bounds: TimeoutBounds): string {
  return [
    'Run a shell command with `bash -c` and return its output.',
    'The result is stdout, then a "[stderr]" section when stderr is not empty, or "(no output)"; a long stream shows its first and last lines with one line between them saying what was left out and naming a file with the complete output.',
    'Markers on their own lines: "[exit code: N]" for a non-zero exit, "[timed out after Nms]", "[killed by signal: SIG]". A non-zero exit or a timeout is a normal result, not an error: read the markers.',
    `Foreground commands time out after timeoutMs (default ${bounds.defaultMs}, at most ${bounds.maxMs}; larger values are lowered to it).`,
    ...(bounds.backgroundAfterMs
      ? [
          `Without timeoutMs, a command still running after ${bounds.backgroundAfterMs}ms is not killed: the call returns its output so far and the command continues as a background task, named on the last line; wait for it with bash_output wait_for. An explicit timeoutMs keeps the command in the foreground until it ends or times out.`,
        ]
      : []),
    'With run_in_background the command starts as a background task without a timeout and the result is its id, e.g. "started background task bash-1"; follow it with bash_output and stop it with bash_kill.',
    'The call returns when the shell exits, even if processes it started in the background (cmd &) still run: they become a background task, named on the last line as "[background processes still running: task bash-N]"; a process that left the process group (setsid) is named by pid as still running and is not stopped.',
  ].join(' ')
}

export const BashParameters = Type.Object(
  {
    command: Type.Union([Type.String({ minLength: 1 }), Type.Array(Type.String(), { minItems: 1 })], {
      description:
        'The command, run as `bash -c <command>`; or the argv to run, e.g. ["ls", "-la"], each word passed as is.',
    }),
    description: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'What the command does, in a few words, e.g. "run the unit tests".',
      }),
    ),
    timeoutMs: Type.Optional(
      Type.Integer({
        minimum: 1,
        description: 'Timeout in milliseconds for a foreground command; ignored with run_in_background.',
      }),
    ),
    workdir: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          'Directory to run in, absolute or relative to the working directory. Default: the working directory.',
      }),
    ),
    run_in_background: Type.Optional(
      Type.Boolean({ description: 'Start the command as a background task and return its id at once.' }),
    ),
    interactive: Type.Optional(
      Type.Boolean({
        description:
          'With run_in_background: start the command on a terminal, so that bash_input can type into it (REPLs, prompts, ssh).',
      }),
    ),
  },
  { additionalProperties: false },
)
export type BashArgs = Static<typeof BashParameters>

/** Whether a stream has anything to show (a cut stream always has, if only the marker). */
const shows = (output: CollectedOutput) => output.text !== '' || output.truncated

export type StreamName = 'stdout' | 'stderr'

/** A command's stream for the renderer: whole while nothing was dropped, else the kept head and tail. */
export function runSource(name: StreamName, output: CollectedOutput): StreamSource<StreamName> {
  const common = { name, totalBytes: output.totalBytes, spillPath: output.spillPath, numbered: true }
  return output.truncated
    ? { ...common, head: output.head ?? '', tail: output.text, complete: false, totalLines: output.totalLines }
    : { ...common, head: output.text, tail: output.text, complete: true, totalLines: undefined }
}

function runLayout(result: RunOutcome, budget: number): { text: string; cut: StreamName[] } {
  const parts: Part<StreamName>[] = []
  if (shows(result.stdout)) parts.push(runSource('stdout', result.stdout))
  if (shows(result.stderr)) parts.push('[stderr]', runSource('stderr', result.stderr))
  if (parts.length === 0) parts.push(result.backgroundedAfterMs === undefined ? '(no output)' : '(no output yet)')
  if (result.timedOut) parts.push(`[timed out after ${result.timeoutMs}ms]`)
  if (result.aborted) parts.push('[aborted]')
  if (result.signal !== null) parts.push(`[killed by signal: ${result.signal}]`)
  else if (result.exitCode !== null && result.exitCode !== 0) parts.push(`[exit code: ${result.exitCode}]`)
  parts.push(...leftoverLines(result))
  return layout(parts, budget)
}

/**
 * The model-facing text of a foreground command, at most `budget` bytes: its output (stdout, then a `[stderr]`
 * section), then the markers, one per line. A stream too long for its share shows head + cut marker + tail.
 */
export function renderRun(result: RunOutcome, budget: number = DEFAULT_MAX_RESULT_BYTES): string {
  return runLayout(result, budget).text
}

/** Streams the render would cut although they are whole in memory and no file holds them: worth saving first. */
export function unkeptCuts(result: RunOutcome, budget: number = DEFAULT_MAX_RESULT_BYTES): StreamName[] {
  return runLayout(result, budget).cut.filter((name) => !result[name].truncated && result[name].spillPath === undefined)
}

export function renderStarted(taskId: string, interactive = false): string {
  return interactive
    ? `started interactive background task ${taskId}: type into it with bash_input, read it with bash_output`
    : `started background task ${taskId}`
}

export function interactiveArgsMessage(): string {
  return 'interactive needs run_in_background: true: an interactive command runs as a background task that bash_input types into'
}

/**
 * Other clients' names for bash's arguments (docs/model-surface.md#tools): Codex's `timeout_ms` means our timeoutMs; `timeout` is
 * seconds in some clients and milliseconds in others, so it is refused with the name to pass.
 */
export const BASH_ALIASES = {
  timeout_ms: 'timeoutMs',
  timeout: { hint: 'pass "timeoutMs" instead (milliseconds)' },
} as const satisfies ArgumentAliases

/** `bash` and `sh` with `-c` (or Codex's `-lc`) and one script: the script is the command. */
const SHELLS = new Set(['bash', 'sh', '/bin/bash', '/bin/sh', '/usr/bin/bash', '/usr/bin/sh'])
const SCRIPT_FLAGS = new Set(['-c', '-lc', '-cl'])
/** Words a shell takes literally; any other word is single-quoted. */
const PLAIN_WORD = /^[A-Za-z0-9_@%+,.:/-]+$/
/** Words that, first in a command, the shell takes as syntax rather than as a program's name. */
const RESERVED = new Set(
  'case coproc do done elif else esac fi for function if in select then time until while'.split(' '),
)

/**
 * The shell command a `command` argument runs: a string as it is; an argv array as its words, each quoted so that
 * the program receives it as is. `["bash", "-lc", script]` and `["sh", "-c", script]` (Codex's habit) run `script`
 * itself, as a string command would: the same shell and environment whichever form a model writes, no login profile
 * sourced for each call, and the task list shows the script (docs/decisions/2026-12-04-command-arrays.md).
 */
export function commandLine(command: string | readonly string[]): string {
  if (typeof command === 'string') return command
  const [shell, flag, script] = command
  if (command.length === 3 && SHELLS.has(shell ?? '') && SCRIPT_FLAGS.has(flag ?? '')) return script ?? ''
  return command.map((word, i) => shellWord(word, i === 0)).join(' ')
}

function shellWord(word: string, first: boolean): string {
  if (PLAIN_WORD.test(word) && !(first && RESERVED.has(word))) return word
  return `'${word.replaceAll("'", "'\\''")}'`
}
