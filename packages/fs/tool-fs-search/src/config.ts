import Schema from 'schemastery'

export interface Config {
  globMaxResults: number
  grepMaxMatches: number
  grepMaxLineBytes: number
  rawOutputMaxBytes: number
  timeoutMs: number
  graceMs: number
  stderrMaxBytes: number
  rgPath?: string
}

const positive = (fallback: number, description: string) => Schema.natural().min(1).default(fallback).description(description)

export const Config: Schema<Partial<Config>, Config> = Schema.object({
  globMaxResults: positive(100, 'Paths shown inline by glob; the complete list goes to the spill store.'),
  grepMaxMatches: positive(250, 'Matching lines shown inline by grep; the complete result goes to the spill store.'),
  grepMaxLineBytes: positive(2000, 'Longest preview of a matching line, in UTF-8 bytes; longer lines are cut and marked.'),
  rawOutputMaxBytes: positive(20_000_000, 'Raw ripgrep output a search may produce before ripgrep is stopped (SEARCH_RAW_OUTPUT_OVERFLOW).'),
  timeoutMs: positive(30_000, 'Time budget of one call, enforced by the timeout policy (TOOL_TIMEOUT).'),
  graceMs: positive(3000, 'Time between SIGTERM and SIGKILL when ripgrep is stopped.'),
  stderrMaxBytes: positive(65_536, 'Tail of ripgrep\'s stderr kept for error messages.'),
  rgPath: Schema.string().description('ripgrep binary to run instead of the packaged one (@vscode/ripgrep).'),
})
