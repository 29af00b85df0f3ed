import type { ValidateFunction } from 'ajv'

/**
 * Validators compiled ahead of time, keyed by the schema's JSON text. Empty here: a bundled host (the `dsh`
 * command) replaces this module with validators generated at build time for the schemas of its composition
 * (`precompile.ts`), so a call never loads or runs ajv there. A schema not in the table is compiled by ajv on
 * first use, so a stale table costs time, never correctness.
 */
export const precompiledValidators: ReadonlyMap<string, ValidateFunction> = new Map()
