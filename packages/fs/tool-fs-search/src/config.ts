import Schema from 'schemastery'

export interface Config {
  globMaxResults: number
  grepMaxMatches: number
  grepMaxLineBytes: number
  maxResultBytes: number
  rawOutputMaxBytes: number
  savedResultMaxBytes: number
  rgMaxMemoryBytes: number
  timeoutMs: number
  graceMs: number
  stderrMaxBytes: number
  rgPath?: string
}

const positive = (fallback: number, description: string) =>
  Schema.natural().min(1).default(fallback).description(description)

export const Config: Schema<Partial<Config>, Config> = Schema.object({
  globMaxResults: positive(100, 'Paths shown inline by glob; the complete list goes to the spill store.'),
  grepMaxMatches: positive(250, 'Matching lines shown inline by grep; the complete result goes to the spill store.'),
  grepMaxLineBytes: positive(
    2000,
    'Longest preview of a matching line, in UTF-8 bytes; longer lines are cut and marked.',
  ),
  maxResultBytes: positive(
    30_000,
    'Most UTF-8 bytes of one glob or grep result text; the page stops there, and the complete result goes to the spill store.',
  ),
  rawOutputMaxBytes: positive(
    20_000_000,
    "Most bytes of output a search holds in memory at once: any one record of ripgrep's output (past it ripgrep is stopped: SEARCH_RAW_OUTPUT_OVERFLOW), and grep's saved rows gathered before they go to a temporary file (at most 4 MiB of them).",
  ),
  savedResultMaxBytes: positive(
    1_073_741_824,
    "Most bytes of the complete result a search saves (grep's rows, glob's paths): past it ripgrep is stopped (SEARCH_RAW_OUTPUT_OVERFLOW). Memory does not grow with it: grep keeps its rows on disk, glob a small constant per file besides its paths.",
  ),
  rgMaxMemoryBytes: Schema.natural()
    .default(1_073_741_824)
    .description(
      'Most resident memory ripgrep may use, read from /proc every 20 ms: past it ripgrep is stopped (SEARCH_FAILED), so a hostile ignore file cannot exhaust memory. 0 turns the check off.',
    ),
  timeoutMs: positive(
    30_000,
    'Time budget of one call, enforced by the timeout policy (TOOL_TIMEOUT); the tool stops ripgrep somewhat earlier and returns what it found.',
  ),
  graceMs: positive(3000, 'Time between SIGTERM and SIGKILL when ripgrep is stopped.'),
  stderrMaxBytes: positive(65_536, "Head and tail of ripgrep's stderr kept for error messages."),
  rgPath: Schema.string().description('ripgrep binary to run instead of the packaged one (@vscode/ripgrep).'),
})
