import { readFileSync } from 'node:fs'
import type { BashExecSpec, TaskProcess } from '@deepseek-ai/dsh-bash'
import type { TaskStream } from '@deepseek-ai/dsh-tasks'
import { procPids, procStat, type SubprocessHandle } from '@deepseek-ai/dsh-subprocess'
import { subprocessTask } from './process.ts'

/**
 * The spec of an interactive command: its shell runs util-linux `script`, which starts the command on a new
 * pseudo-terminal (no native module: `script` ships with util-linux, in every Linux base system) and relays the
 * caller's pipe to it. `-q` no banner, `-f` flush every write, `-e` the command's exit code, `/dev/null` no
 * transcript. `SHELL="$BASH"`: script runs the command with this same bash. Under bubblewrap, `--dev /dev` gives
 * the namespace its own devpts, so the terminal exists there too.
 */
export function onTerminal(spec: BashExecSpec): BashExecSpec {
  return { ...spec, command: `SHELL="$BASH" exec script -q -f -e -c ${shellQuote(spec.command)} /dev/null` }
}

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`
}

/** A process on a terminal: its output cleaned for reading, its stdin open for `write`. */
export function terminalTask(handle: SubprocessHandle): TaskProcess {
  const task = subprocessTask(handle)
  const stdin = handle.stdin
  // A write after the end fails with EPIPE: the table refuses input to an ended task, and a race is not a crash.
  stdin?.on('error', () => {})
  return {
    ...task,
    stdout: task.stdout && terminalStream(task.stdout),
    stderr: task.stderr && terminalStream(task.stderr),
    terminate: () => {
      // `script` put the command in a session of its own, outside the group a stop reaches; the closed terminal
      // hangs it up, but a process that ignores SIGHUP (nohup, a daemon) would stay: the session goes too.
      const sessions = childrenOf(handle.pid)
      task.terminate()
      for (const pid of sessionMembers(sessions)) {
        try {
          process.kill(pid, 'SIGKILL')
        } catch {
          // gone meanwhile
        }
      }
    },
    onOutput: (listener) => task.onOutput(listener),
    write: (text) =>
      new Promise<void>((resolve, reject) => {
        if (!stdin || stdin.destroyed || stdin.writableEnded) return reject(new Error('the terminal is closed'))
        stdin.write(text, (error) => (error ? reject(error) : resolve()))
      }),
  }
}

/**
 * A stream read through `cleanTerminal`. Offsets stay those of the raw bytes; a read that ends inside a control
 * sequence (or on `\r`s that may start a `\r\n`) stops before it, so the next read sees it whole.
 */
export function terminalStream(raw: TaskStream): TaskStream {
  return {
    readFrom(offset) {
      const read = raw.readFrom(offset)
      const cut = incompleteTail(read.text)
      const text = cut === 0 ? read.text : read.text.slice(0, read.text.length - cut)
      const nextOffset =
        cut === 0 ? read.nextOffset : read.nextOffset - Buffer.byteLength(read.text.slice(read.text.length - cut))
      return { ...read, text: cleanTerminal(text), nextOffset }
    },
  }
}

// CSI (ESC [ … final byte), OSC (ESC ] … BEL or ESC \), DCS/SOS/PM/APC strings, other escapes (not the introducers
// [ ] P X ^ _), 8-bit CSI; then C0 controls but \t and \n.
const SEQUENCES =
  /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[PX^_][^\u001b]*\u001b\\|\u001b[ -/]*[0-OQ-WYZ\\`a-~]|\u009b[0-?]*[ -/]*[@-~]/g
const CONTROLS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g

/** What a person would read off a dumb terminal: control sequences removed, `\r\n` (also `\r\r\n`) and a lone `\r` as `\n`. */
export function cleanTerminal(text: string): string {
  return text.replace(SEQUENCES, '').replace(/\r+\n/g, '\n').replace(/\r/g, '\n').replace(CONTROLS, '')
}

/**
 * Characters at the end of `text` that the next read may change the meaning of: a sequence not yet complete, and
 * the `\r`s and sequences that end the text (a `\r` followed by more `\r`s, invisible sequences and `\n` is one
 * line end). Held back, they are read with what follows.
 */
function incompleteTail(text: string): number {
  let end = text.length
  while (end > 0) {
    if (text[end - 1] === '\r') {
      end--
      continue
    }
    const escape = Math.max(text.lastIndexOf('\u001b', end - 1), text.lastIndexOf('\u009b', end - 1))
    if (escape === -1 || end - escape > 256) break
    const tail = text.slice(escape, end)
    SEQUENCES.lastIndex = 0
    const match = SEQUENCES.exec(tail)
    SEQUENCES.lastIndex = 0
    // Unfinished (no sequence starts there), or a whole sequence that ends the text: held back.
    if (match && match.index === 0 && match[0].length < tail.length) break
    end = escape
  }
  return text.length - end
}

/** The live children of `pid` (Linux: its `children` file). */
function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'latin1').trim().split(/\s+/).filter(Boolean).map(Number)
  } catch {
    return []
  }
}

/** Pids of the processes whose session is led by one of `leaders` (the sessions `script` made). */
function sessionMembers(leaders: readonly number[]): number[] {
  if (leaders.length === 0) return []
  const wanted = new Set(leaders)
  const members: number[] = []
  for (const pid of procPids() ?? []) {
    if (pid === process.pid) continue
    const stat = procStat(pid)
    if (stat && wanted.has(stat.session)) members.push(stat.pid)
  }
  return members
}
