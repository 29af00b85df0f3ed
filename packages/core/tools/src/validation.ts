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

/** The arguments a tool sees, and every problem with them in words the model can act on (none: they fit). */
export interface CheckedArguments {
  readonly arguments: unknown
  readonly problems: string[]
}

/**
 * `args` with other clients' names renamed to ours and ignored names dropped (a copy; the caller's object is never
 * changed), and every problem with them. Values that are not plain JSON (NaN, functions, undefined, class instances,
 * cycles) are problems too, so a library caller can never hand a tool something the MCP wire could not have
 * carried. Names and paths are quoted bounded (`quote`).
 */
export async function checkArguments(
  schema: JsonSchema,
  args: unknown,
  aliases?: ArgumentAliases,
): Promise<CheckedArguments> {
  const problems = jsonProblems(args, '', new Set())
  if (problems.length) return { arguments: args, problems }
  const applied = applyAliases(args, aliases)
  if (applied.conflicts.length) return { arguments: args, problems: applied.conflicts }
  const validate = await compileSchema(schema)
  if (validate(applied.arguments)) return { arguments: applied.arguments, problems: [] }
  const words = { schema, aliases, passedAs: applied.passedAs }
  const errors = withoutBranches(validate.errors ?? [])
  return { arguments: applied.arguments, problems: dedupe(errors.map((e) => describe(e, words))) }
}

/**
 * A failed `anyOf` is one problem, not one per branch: the problems of the branch whose type the value has (an empty
 * string: the string branch's `minLength`), else one text naming every branch (`must be a string or an array`).
 */
function withoutBranches(errors: readonly ErrorObject[]): ErrorObject[] {
  let kept = [...errors]
  for (const union of errors.filter((error) => error.keyword === 'anyOf')) {
    const prefix = `${union.schemaPath}/`
    const branch = (error: ErrorObject) => /^\d+/.exec(error.schemaPath.slice(prefix.length))?.[0]
    const inside = kept.filter((error) => error.schemaPath.startsWith(prefix))
    const wrongType = new Set(
      inside
        .filter((error) => error.keyword === 'type' && error.instancePath === union.instancePath)
        .map((error) => branch(error)),
    )
    const fitting = inside.find((error) => !wrongType.has(branch(error)))
    kept = kept.filter((error) =>
      fitting === undefined
        ? !inside.includes(error)
        : error !== union && (!inside.includes(error) || branch(error) === branch(fitting)),
    )
  }
  return kept
}

/** The subschema at `#/a/b` (ajv's `schemaPath`) of `schema`. */
function schemaAt(schema: JsonSchema, schemaPath: string): unknown {
  let node: unknown = schema
  for (const part of schemaPath.replace(/^#\/?/, '').split('/')) {
    if (part === '' || node === null || typeof node !== 'object') continue
    node = (node as Record<string, unknown>)[part.replaceAll('~1', '/').replaceAll('~0', '~')]
  }
  return node
}

/** What a value must be to fit `schema`, in words: `a non-empty string`, `an array of strings`. */
function kindOf(schema: unknown): string {
  const s = (schema ?? {}) as Record<string, unknown>
  const type = typeof s.type === 'string' ? s.type : 'value'
  if (type === 'string' && Number(s.minLength) >= 1) return 'a non-empty string'
  if (type !== 'array') return article(type)
  const items = (s.items ?? {}) as Record<string, unknown>
  const of = typeof items.type === 'string' ? ` of ${items.type}s` : ''
  return Number(s.minItems) >= 1 ? `a non-empty array${of}` : `an array${of}`
}

interface AppliedAliases {
  readonly arguments: unknown
  /** Our name → the name the caller passed it by, for each renamed argument. */
  readonly passedAs: ReadonlyMap<string, string>
  readonly conflicts: string[]
}

/**
 * Renames each top-level argument passed by another client's name for one of ours, and drops each one the tool
 * ignores. The same argument given under several names must carry one value: differing values are a problem.
 */
function applyAliases(args: unknown, aliases: ArgumentAliases | undefined): AppliedAliases {
  const none = { arguments: args, passedAs: new Map<string, string>(), conflicts: [] }
  if (aliases === undefined || args === null || typeof args !== 'object' || Array.isArray(args)) return none
  const given = args as Record<string, unknown>
  const present = Object.keys(given).filter((name) => Object.hasOwn(aliases, name))
  if (present.length === 0) return none
  const copy: Record<string, unknown> = { ...given }
  const passedAs = new Map<string, string>()
  const conflicts: string[] = []
  const renamed = new Map<string, string[]>()
  for (const name of present) {
    const alias = aliases[name]
    if (typeof alias === 'string') renamed.set(alias, [...(renamed.get(alias) ?? []), name])
    if (typeof alias === 'string' || (typeof alias === 'object' && 'ignore' in alias)) delete copy[name]
  }
  for (const [ours, names] of renamed) {
    const all = Object.hasOwn(given, ours) ? [ours, ...names] : names
    const first = given[all[0] as string]
    if (all.some((name) => !sameJson(given[name], first))) {
      conflicts.push(`${listNames(all)} name the same argument but differ: pass only ${quote(ours)}`)
      continue
    }
    copy[ours] = first
    if (!Object.hasOwn(given, ours)) passedAs.set(ours, names[0] as string)
  }
  return { arguments: copy, passedAs, conflicts }
}

function listNames(names: readonly string[]): string {
  const quoted = names.map((name) => quote(name))
  return quoted.length <= 2 ? quoted.join(' and ') : `${quoted.slice(0, -1).join(', ')} and ${quoted.at(-1)}`
}

/** Whether two JSON values are equal (key order aside). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  const ka = Object.keys(a)
  const kb = Object.keys(b)
  if (ka.length !== kb.length) return false
  const ra = a as Record<string, unknown>
  const rb = b as Record<string, unknown>
  return ka.every((key) => Object.hasOwn(rb, key) && sameJson(ra[key], rb[key]))
}

/** What an unknown top-level argument that is another client's name for one of ours should have been. */
function aliasHint(name: string, aliases: ArgumentAliases | undefined): string {
  const alias = aliases !== undefined && Object.hasOwn(aliases, name) ? aliases[name] : undefined
  return alias !== undefined && typeof alias === 'object' && 'hint' in alias ? `: ${alias.hint}` : ''
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

function where(pointer: string, passedAs?: ReadonlyMap<string, string>): string {
  if (pointer === '') return 'arguments'
  const name = pointer.slice(1).replaceAll('/', '.')
  const alias = passedAs?.get(pointer.slice(1).split('/')[0] as string)
  return `property ${quote(name)}${alias === undefined ? '' : ` (passed as ${quote(alias)})`}`
}

interface Words {
  readonly schema: JsonSchema
  readonly aliases: ArgumentAliases | undefined
  readonly passedAs: ReadonlyMap<string, string>
}

function describe(error: ErrorObject, { schema, aliases, passedAs }: Words): string {
  const at = where(error.instancePath, passedAs)
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
    case 'anyOf': {
      const branches = schemaAt(schema, error.schemaPath)
      if (!Array.isArray(branches)) return `${at} ${error.message ?? 'fails anyOf'}`
      return `${at} must be ${branches.map(kindOf).join(' or ')}`
    }
    case 'minItems':
      return `${at} must not have fewer than ${String(params.limit)} items`
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
