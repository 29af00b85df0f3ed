import Schema from 'schemastery'

export interface Config {
  timeoutMs: number
  maxTimeoutMs: number
  maxOutputBytes: number
  spillMaxBytes: number
  graceMs: number
  shell: string
}

const count = (min: number, fallback: number, description: string) =>
  Schema.natural().min(min).default(fallback).description(description)

export const Config: Schema<Partial<Config>, Config> = Schema.object({
  timeoutMs: count(
    1,
    120_000,
    'Timeout of a foreground command that names none, in ms (lowered to maxTimeoutMs if larger).',
  ),
  maxTimeoutMs: count(1, 600_000, 'Largest foreground timeout, in ms; longer requests are clamped to it.'),
  maxOutputBytes: count(1, 64_000, 'Tail of each output stream (stdout, stderr) kept in memory, in bytes.'),
  spillMaxBytes: count(
    0,
    64 * 1024 * 1024,
    'A stream longer than maxOutputBytes is also written to a file, which is discarded once the stream passes this size.',
  ),
  graceMs: count(
    0,
    3000,
    'Time between SIGTERM and SIGKILL when a command is stopped (timeout, abort, kill, disposal).',
  ),
  shell: Schema.string()
    .min(1)
    .default('bash')
    .description('The shell, run as `<shell> -c <command>` (looked up on PATH).'),
})
