import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type Schema from 'schemastery'
import { describe, expect, test } from 'vitest'
import { CONFIG_KEYS } from '../src/index.ts'

const README = readFileSync(join(dirname(fileURLToPath(import.meta.url)), '../README.md'), 'utf8')

const MODULES: Record<string, () => Promise<unknown>> = {
  tools: () => import('@deepseek-ai/dsh-tools'),
  'timeout-policy': () => import('@deepseek-ai/dsh-timeout-policy'),
  'subprocess-local': () => import('@deepseek-ai/dsh-subprocess-local'),
  'tasks-local': () => import('@deepseek-ai/dsh-tasks-local'),
  'bash-local': () => import('@deepseek-ai/dsh-bash-local'),
  'bash-sandbox': () => import('@deepseek-ai/dsh-bash-sandbox'),
  'tool-bash': () => import('@deepseek-ai/dsh-tool-bash'),
  'spill-local': () => import('@deepseek-ai/dsh-spill-local'),
  'spill-policy': () => import('@deepseek-ai/dsh-spill-policy'),
  workspace: () => import('@deepseek-ai/dsh-workspace'),
  'tool-fs': () => import('@deepseek-ai/dsh-tool-fs'),
  'tool-fs-search': () => import('@deepseek-ai/dsh-tool-fs-search'),
  mcp: async () => ({ Config: (await import('../src/index.ts')).McpConfig }),
}

/** `section → keys` as the README's config table lists them ("—" rows: a section without settings). */
function documented(): Map<string, string[]> {
  const rows = new Map<string, string[]>()
  for (const match of README.matchAll(/^\| `([a-z-]+)` \| (?:`(\w+)`|—) \|/gm)) {
    const [, section, key] = match
    const keys = rows.get(section!) ?? []
    if (key) keys.push(key)
    rows.set(section!, keys)
  }
  return rows
}

describe('README', () => {
  test('the --config table lists every key of every section, and nothing else', async () => {
    const rows = documented()
    expect([...rows.keys()]).toEqual([...CONFIG_KEYS])
    for (const section of CONFIG_KEYS) {
      const module = (await MODULES[section]!()) as { Config?: Schema; default?: { Config?: Schema } }
      const schema = module.Config ?? module.default?.Config
      expect(rows.get(section), section).toEqual(Object.keys(schema?.dict ?? {}))
    }
  })
})
