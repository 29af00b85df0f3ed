// Build-time only (never imported by the package's entry): turns the schemas of a composition into ajv
// "standalone" validator code, which a bundler puts in place of `precompiled.ts`.
import { Ajv } from 'ajv'
import standaloneModule from 'ajv/dist/standalone/index.js'
import type { JsonSchema } from './types.ts'
import { AJV_OPTIONS } from './validation.ts'

export interface PrecompiledModules {
  /** CommonJS: one exported validator per schema (ajv's standalone code requires its small runtime helpers). */
  readonly validatorsCjs: string
  /** ESM, standing in for `precompiled.ts`: `precompiledValidators` keyed by each schema's JSON text. */
  precompiledEsm(validatorsSpecifier: string): string
}

// ajv/dist/standalone is CommonJS with `exports.default`; Node's ESM loader hands the whole exports object over.
const standaloneCode = ((standaloneModule as unknown as { default?: unknown }).default ?? standaloneModule) as (
  ajv: Ajv,
  refs: Record<string, string>,
) => string

/** Validator code for each distinct schema, compiled with exactly the run-time options. */
export function precompileSchemas(schemas: readonly JsonSchema[]): PrecompiledModules {
  const keys = [...new Set(schemas.map((schema) => JSON.stringify(schema)))].sort()
  const ajv = new Ajv({ ...AJV_OPTIONS, code: { source: true } })
  const refs: Record<string, string> = {}
  keys.forEach((key, index) => {
    ajv.addSchema(JSON.parse(key) as JsonSchema, `schema${index}`)
    refs[`validate${index}`] = `schema${index}`
  })
  const validatorsCjs = `// Generated at build time by @deepseek-ai/dsh-tools precompile.ts: do not edit.\n${standaloneCode(ajv, refs)}\n`
  return {
    validatorsCjs,
    precompiledEsm: (specifier) =>
      [
        '// Generated at build time by @deepseek-ai/dsh-tools precompile.ts: do not edit.',
        `import validators from ${JSON.stringify(specifier)}`,
        'export const precompiledValidators = new Map([',
        ...keys.map((key, index) => `  [${JSON.stringify(key)}, validators.validate${index}],`),
        '])',
        '',
      ].join('\n'),
  }
}
