import type { ErrorObject, Options, ValidateFunction } from 'ajv'
import { precompiledValidators } from './precompiled.ts'
import { quote } from './error-text.ts'
import type { ArgumentAliases, JsonSchema } from './types.ts'

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
export async function argumentProblems(
  schema: JsonSchema,
  args: unknown,
  aliases?: ArgumentAliases,
): Promise<string[]> {
  const problems = jsonProblems(args, '', new Set())
  if (problems.length) return problems
  const validate = await compileSchema(schema)
  if (validate(args)) return []
  return dedupe((validate.errors ?? []).map((error) => describe(error, aliases)))
}

/** What an unknown top-level argument that is another client's name for one of ours should have been. */
function aliasHint(name: string, aliases: ArgumentAliases | undefined): string {
  const alias = aliases !== undefined && Object.hasOwn(aliases, name) ? aliases[name] : undefined
  if (alias === undefined) return ''
  return typeof alias === 'string' ? `: pass ${quote(alias)} instead` : `: ${alias.hint}`
}

/**
 * Refuses aliases that could never apply or that point nowhere: a name the schema itself declares, or a name of ours
 * the schema lacks. Undefined when they are sound.
 */
export function aliasProblem(schema: JsonSchema, aliases: ArgumentAliases): string | undefined {
  const properties = (schema.properties ?? {}) as Record<string, unknown>
  for (const [name, alias] of Object.entries(aliases)) {
    if (Object.hasOwn(properties, name)) return `alias ${quote(name)} is one of the tool's own properties`
    if (typeof alias === 'string' && !Object.hasOwn(properties, alias))
      return `alias ${quote(name)} names ${quote(alias)}, which is not a property of the tool`
  }
  return undefined
}

function where(pointer: string): string {
  return pointer === '' ? 'arguments' : `property ${quote(pointer.slice(1).replaceAll('/', '.'))}`
}

function describe(error: ErrorObject, aliases: ArgumentAliases | undefined): string {
  const at = where(error.instancePath)
  const params = error.params as Record<string, unknown>
  switch (error.keyword) {
    case 'required': {
      const prefix = error.instancePath === '' ? '' : `${at}: `
      return `${prefix}missing required property ${quote(String(params.missingProperty))}`
    }
    case 'additionalProperties': {
      const prefix = error.instancePath === '' ? '' : `${at}: `
      const name = String(params.additionalProperty)
      return `${prefix}unexpected property ${quote(name)}${error.instancePath === '' ? aliasHint(name, aliases) : ''}`
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
      const problems = Object.entries(value).flatMap(([key, item]) => jsonProblems(item, `${pointer}/${key}`, seen))
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
