import { statSync } from 'node:fs'
import { getSystemErrorMap } from 'node:util'
import {
  SubprocessError,
  SubprocessErrorCode,
  type OutputDisposition,
  type SpawnRequest,
} from '@deepseek-ai/dsh-subprocess'

function invalid(message: string): SubprocessError {
  return new SubprocessError(`invalid subprocess request: ${message}`, {
    code: SubprocessErrorCode.SUBPROCESS_INVALID_REQUEST,
  })
}

const isCount = (value: unknown) => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0

function checkOutput(name: string, value: OutputDisposition): void {
  if (value === 'pipe' || value === 'inherit' || value === 'ignore') return
  if (typeof value !== 'object' || value === null || !isCount(value.maxBytes)) {
    throw invalid(`${name} must be "pipe", "inherit", "ignore" or { maxBytes } with a whole number of bytes >= 0`)
  }
  if (value.headBytes !== undefined && !isCount(value.headBytes)) {
    throw invalid(`${name}.headBytes must be a whole number of bytes >= 0`)
  }
  if (value.spill !== undefined && !isCount(value.spill.maxBytes)) {
    throw invalid(`${name}.spill.maxBytes must be a whole number of bytes >= 0`)
  }
}

/** Every check that can be made without touching the system: a bad request never starts anything. */
export function checkRequest(request: SpawnRequest): void {
  const { argv } = request
  if (!Array.isArray(argv) || argv.length === 0) throw invalid('argv is empty (argv[0] must name the program)')
  argv.forEach((arg, i) => {
    if (typeof arg !== 'string') throw invalid(`argv[${i}] is not a string`)
    if (arg.includes('\0')) throw invalid(`argv[${i}] contains a NUL byte`)
  })
  if (argv[0] === '') throw invalid('argv[0] (the program) is empty')
  if (typeof request.cwd !== 'string' || request.cwd === '') throw invalid('cwd is empty')
  if (request.cwd.includes('\0')) throw invalid('cwd contains a NUL byte')
  for (const [name, value] of Object.entries(request.env ?? {})) {
    if (name === '' || name.includes('=') || name.includes('\0'))
      throw invalid(`env name ${JSON.stringify(name)} is not a valid variable name`)
    if (value !== undefined && (typeof value !== 'string' || value.includes('\0')))
      throw invalid(`env ${name} must be a string without NUL bytes`)
  }
  const { stdin } = request
  if (
    stdin !== 'ignore' &&
    stdin !== 'pipe' &&
    !(
      typeof stdin === 'object' &&
      stdin !== null &&
      (typeof stdin.data === 'string' || stdin.data instanceof Uint8Array)
    )
  ) {
    throw invalid('stdin must be "ignore", "pipe" or { data: string | Uint8Array }')
  }
  checkOutput('stdout', request.stdout)
  checkOutput('stderr', request.stderr)
  if (typeof request.graceMs !== 'number' || !Number.isFinite(request.graceMs) || request.graceMs < 0)
    throw invalid('graceMs must be a number of milliseconds >= 0')
}

/** `ENOENT (no such file or directory)` for a system error, else its message. */
function cause(error: unknown): string {
  const e = error as NodeJS.ErrnoException
  const known = typeof e?.errno === 'number' ? getSystemErrorMap().get(e.errno) : undefined
  if (known) return `${known[0]} (${known[1]})`
  return e?.code ?? (error instanceof Error ? error.message : String(error))
}

/**
 * The launch failure as the caller should read it: which program, and why. The system reports a missing working
 * directory exactly like a missing program (ENOENT), so the directory is checked before blaming the program.
 */
export function spawnFailure(request: SpawnRequest, error: unknown): SubprocessError {
  const program = JSON.stringify(request.argv[0])
  const options = { code: SubprocessErrorCode.SUBPROCESS_SPAWN_FAILED, cause: error }
  try {
    if (!statSync(request.cwd).isDirectory()) {
      return new SubprocessError(
        `cannot start ${program}: working directory ${JSON.stringify(request.cwd)} is not a directory`,
        options,
      )
    }
  } catch (statError) {
    return new SubprocessError(
      `cannot start ${program}: working directory ${JSON.stringify(request.cwd)} is unusable: ${cause(statError)}`,
      options,
    )
  }
  return new SubprocessError(`cannot start ${program}: ${cause(error)}`, options)
}
