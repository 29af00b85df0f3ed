import type Schema from 'schemastery'
import { DshError, DshErrorCode } from './errors.ts'
import { MAX_CONFIG_BYTES, readFileAtMost } from './input.ts'

/** The `--config` keys: the short names of the configurable plugins, in composition order. */
export const CONFIG_KEYS = [
  'tools',
  'timeout-policy',
  'subprocess-local',
  'tasks-local',
  'bash-local',
  'bash-sandbox',
  'tool-bash',
  'spill-local',
  'spill-policy',
  'workspace',
  'tool-fs',
  'tool-fs-search',
  'mcp',
] as const
export type ConfigKey = (typeof CONFIG_KEYS)[number]

/** A `--config` file: each key holds that plugin's config. */
export type DshConfig = { [K in ConfigKey]?: Record<string, unknown> }

function invalid(message: string, cause?: unknown): DshError {
  return new DshError(
    message,
    cause === undefined ? { code: DshErrorCode.DSH_CONFIG_INVALID } : { code: DshErrorCode.DSH_CONFIG_INVALID, cause },
  )
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

function kind(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`
}

/** Reads and parses a `--config` file; a missing file or bad JSON is DSH_CONFIG_INVALID. */
export async function readConfigFile(path: string): Promise<unknown> {
  let bytes: Buffer | undefined
  try {
    bytes = await readFileAtMost(path, MAX_CONFIG_BYTES)
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message
    throw invalid(`cannot read ${path}: ${reason}`, error)
  }
  if (bytes === undefined) throw invalid(`${path} is longer than ${MAX_CONFIG_BYTES} bytes, more than any config needs`)
  const text = bytes.toString('utf8')
  try {
    return JSON.parse(text) as unknown
  } catch (error) {
    throw invalid(`${path} is not valid JSON: ${(error as Error).message}`, error)
  }
}

/**
 * The first key of `value` that `schema` does not know, as a dotted path, with the keys it would accept.
 * Schemastery keeps unknown properties of `Schema.object` silently, so a typo would otherwise be ignored.
 */
export function unknownKey(
  schema: Schema | undefined,
  value: unknown,
  path: string,
): { path: string; known: string[] } | undefined {
  if (schema === undefined || value === null || typeof value !== 'object') return undefined
  switch (schema.type) {
    case 'object':
    case 'intersect': {
      if (!isPlainObject(value)) return undefined
      const fields = objectFields(schema)
      for (const [key, item] of Object.entries(value)) {
        const field = fields.get(key)
        if (!field) return { path: `${path}.${key}`, known: [...fields.keys()] }
        const inner = unknownKey(field, item, `${path}.${key}`)
        if (inner) return inner
      }
      return undefined
    }
    case 'dict':
      if (!isPlainObject(value)) return undefined
      for (const [key, item] of Object.entries(value)) {
        const inner = unknownKey(schema.inner, item, `${path}.${key}`)
        if (inner) return inner
      }
      return undefined
    case 'array':
      if (!Array.isArray(value)) return undefined
      for (const [index, item] of value.entries()) {
        const inner = unknownKey(schema.inner, item, `${path}[${index}]`)
        if (inner) return inner
      }
      return undefined
    default:
      // Unions and the rest: the schema's own validation decides.
      return undefined
  }
}

function objectFields(schema: Schema): Map<string, Schema> {
  const fields = new Map<string, Schema>()
  if (schema.type === 'object') {
    for (const [key, field] of Object.entries(schema.dict ?? {})) fields.set(key, field)
  } else {
    for (const member of schema.list ?? []) for (const [key, field] of objectFields(member)) fields.set(key, field)
  }
  return fields
}

/**
 * Validates a whole `--config` value against the plugins' schemas before anything runs, and returns each section
 * with its defaults applied. `schemas` maps every known key to its plugin's Config (undefined: the plugin takes no
 * config, so its section must be empty). Throws DSH_CONFIG_INVALID naming the offending key.
 */
export function validateConfig(raw: unknown, schemas: ReadonlyMap<ConfigKey, Schema | undefined>): DshConfig {
  if (!isPlainObject(raw)) {
    throw invalid(
      `the config must be a JSON object of plugin sections, e.g. {"tool-fs-search": {"globMaxResults": 200}}, got ${kind(raw)}`,
    )
  }
  const result: DshConfig = {}
  for (const [key, section] of Object.entries(raw)) {
    if (!(CONFIG_KEYS as readonly string[]).includes(key)) {
      throw invalid(`unknown key "${key}" (known keys: ${CONFIG_KEYS.join(', ')})`)
    }
    const configKey = key as ConfigKey
    if (!isPlainObject(section))
      throw invalid(`"${key}" must be an object of that plugin's settings, got ${kind(section)}`)
    const schema = schemas.get(configKey)
    if (schema === undefined) {
      const first = Object.keys(section)[0]
      if (first !== undefined) throw invalid(`unknown key "${key}.${first}" (plugin ${key} takes no settings)`)
      result[configKey] = {}
      continue
    }
    const unknown = unknownKey(schema, section, key)
    if (unknown) {
      throw invalid(`unknown key "${unknown.path}" (known keys there: ${unknown.known.join(', ') || 'none'})`)
    }
    try {
      result[configKey] = schema(section) as Record<string, unknown>
    } catch (error) {
      throw invalid(describeValidation(key, (error as Error).message), error)
    }
  }
  return result
}

/** Schemastery says `$.a.b expected number >= 1 but got 0`; name the key from the top of the file instead. */
function describeValidation(key: string, message: string): string {
  const match = /^\$(\S*) (.*)$/s.exec(message)
  if (!match) return `invalid value in "${key}": ${message}`
  return `invalid value at "${key}${match[1] ?? ''}": ${match[2] ?? ''}`
}
