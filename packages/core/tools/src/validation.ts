import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv'
import type { JsonSchema } from './types.ts'

// validateSchema off: checking each schema against the JSON Schema meta-schema costs ~35 ms on the first call
// (cold start of `dsh call`); a schema ajv cannot compile still fails, as a TOOL_FAILED result of its first call.
const ajv = new Ajv({ allErrors: true, strict: false, validateSchema: false })
const compiled = new WeakMap<JsonSchema, ValidateFunction>()

/** Compiles once per schema object, on the tool's first call (not at registration: cold start). */
export function compileSchema(schema: JsonSchema): ValidateFunction {
  let validate = compiled.get(schema)
  if (!validate) {
    validate = ajv.compile(schema)
    compiled.set(schema, validate)
  }
  return validate
}

/**
 * Every problem with `args`, in words the model can act on; empty when the arguments fit.
 * Values that are not plain JSON (NaN, functions, undefined, class instances, cycles) are problems too,
 * so a library caller can never hand a tool something the MCP wire could not have carried.
 */
export function argumentProblems(schema: JsonSchema, args: unknown): string[] {
  const problems = jsonProblems(args, '', new Set())
  if (problems.length) return problems
  const validate = compileSchema(schema)
  if (validate(args)) return []
  return dedupe((validate.errors ?? []).map(describe))
}

function where(pointer: string): string {
  return pointer === '' ? 'arguments' : `property "${pointer.slice(1).replaceAll('/', '.')}"`
}

function describe(error: ErrorObject): string {
  const at = where(error.instancePath)
  const params = error.params as Record<string, unknown>
  switch (error.keyword) {
    case 'required': {
      const prefix = error.instancePath === '' ? '' : `${at}: `
      return `${prefix}missing required property "${String(params.missingProperty)}"`
    }
    case 'additionalProperties': {
      const prefix = error.instancePath === '' ? '' : `${at}: `
      return `${prefix}unexpected property "${String(params.additionalProperty)}"`
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
        return [`${where(pointer)} must be a JSON value, got ${value.constructor?.name ?? 'an object'}`]
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

function dedupe(items: string[]): string[] {
  return [...new Set(items)]
}
