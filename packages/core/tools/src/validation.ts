import type { ErrorObject, Options, ValidateFunction } from 'ajv'
import { precompiledValidators } from './precompiled.ts'
import { quote } from './text.ts'
import type { JsonSchema } from './types.ts'

/**
 * The one set of ajv options, shared by run-time compilation and the ahead-of-time validators (`precompile.ts`), so
 * both produce the same errors. validateSchema off: checking each schema against the meta-schema costs ~35 ms on a
 * cold start; a schema ajv cannot compile still fails, as a TOOL_FAILED result of its first call.
 */
export const AJV_OPTIONS = { allErrors: true, strict: false, validateSchema: false } as const satisfies Options

let ajv: Promise<(schema: JsonSchema) => ValidateFunction> | undefined
const compiled = new WeakMap<JsonSchema, ValidateFunction>()

/**
 * The validator of `schema`: one compiled ahead of time when the host ships one for exactly this schema, else
 * ajv's, compiled on the tool's first call. ajv itself is imported only then (its import alone costs tens of ms,
 * and every package that imports this one for HarnessError would pay it at start).
 */
export async function compileSchema(schema: JsonSchema): Promise<ValidateFunction> {
  let validate = compiled.get(schema)
  if (!validate) {
    validate = precompiledValidators.size ? precompiledValidators.get(JSON.stringify(schema)) : undefined
    if (!validate) {
      ajv ??= import('ajv').then(({ Ajv }) => {
        const instance = new Ajv(AJV_OPTIONS)
        return (s: JsonSchema) => instance.compile(s)
      })
      validate = (await ajv)(schema)
    }
    compiled.set(schema, validate)
  }
  return validate
}

/**
 * Every problem with `args`, in words the model can act on; empty when the arguments fit. Values that are not plain
 * JSON (NaN, functions, undefined, class instances, cycles) are problems too, so a library caller can never hand a
 * tool something the MCP wire could not have carried. Names and paths are quoted bounded (`quote`).
 */
export async function argumentProblems(schema: JsonSchema, args: unknown): Promise<string[]> {
  const problems = jsonProblems(args, '', new Set())
  if (problems.length) return problems
  const validate = await compileSchema(schema)
  if (validate(args)) return []
  return dedupe((validate.errors ?? []).map(describe))
}

function where(pointer: string): string {
  return pointer === '' ? 'arguments' : `property ${quote(pointer.slice(1).replaceAll('/', '.'))}`
}

function describe(error: ErrorObject): string {
  const at = where(error.instancePath)
  const params = error.params as Record<string, unknown>
  switch (error.keyword) {
    case 'required': {
      const prefix = error.instancePath === '' ? '' : `${at}: `
      return `${prefix}missing required property ${quote(String(params.missingProperty))}`
    }
    case 'additionalProperties': {
      const prefix = error.instancePath === '' ? '' : `${at}: `
      return `${prefix}unexpected property ${quote(String(params.additionalProperty))}`
    }
    case 'type':
      return `${at} must be ${article(String(params.type))}`
    case 'enum':
      return `${at} must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return `${at} must be ${String(params.comparison)} ${String(params.limit)}`
    case 'minLength':
      return `${at} must not be shorter than ${String(params.limit)} characters`
    case 'maxLength':
      return `${at} must not be longer than ${String(params.limit)} characters`
    default:
      return `${at} ${error.message ?? `fails ${error.keyword}`}`
  }
}

function article(type: string): string {
  if (type === 'object' || type === 'array' || type === 'integer') return `an ${type}`
  return `a ${type}`
}

function jsonProblems(value: unknown, pointer: string, seen: Set<object>): string[] {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return []
    case 'number':
      return Number.isFinite(value) ? [] : [`${where(pointer)} must be a JSON value, got ${String(value)}`]
    case 'object': {
      if (value === null) return []
      if (seen.has(value)) return [`${where(pointer)} must be a JSON value, got a circular reference`]
      const proto = Object.getPrototypeOf(value)
      if (!Array.isArray(value) && proto !== Object.prototype && proto !== null) {
        return [`${where(pointer)} must be a JSON value, got ${quoteName(value.constructor?.name) ?? 'an object'}`]
      }
      seen.add(value)
      const problems = Object.entries(value).flatMap(([key, item]) =>
        jsonProblems(item, `${pointer}/${key}`, seen))
      seen.delete(value)
      return problems
    }
    default:
      return [`${where(pointer)} must be a JSON value, got ${typeof value}`]
  }
}

/** A constructor's name as the text shows it (`Date`), bounded: a class name is the caller's string too. */
function quoteName(name: unknown): string | undefined {
  if (typeof name !== 'string' || name === '') return undefined
  return name.length <= 200 ? name : quote(name)
}

function dedupe(items: string[]): string[] {
  return [...new Set(items)]
}
