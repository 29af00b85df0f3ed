import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { expect, test } from 'vitest'

/*
 * docs/seams.md#sessions as a source scan: one credential list for every tool, and no service holding a session's state in a map
 * keyed by its id (a session's state lives in the session: `slot`, `defer`, `dispose`).
 */

const ROOT = join(import.meta.dirname, '..', '..')

function sources(dir = join(ROOT, 'packages')): string[] {
  const out: string[] = []
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name === 'tests') continue
    const path = join(dir, entry.name)
    if (entry.isDirectory()) out.push(...sources(path))
    else if (entry.name.endsWith('.ts') && path.includes(`${join('src')}`)) out.push(path)
  }
  return out
}

test('the default credential stores are one list: only one source file names them', () => {
  const listing = sources().filter((file) => /['"]~\/\.ssh['"]/.test(readFileSync(file, 'utf8')))
  expect(listing.map((file) => relative(ROOT, file))).toEqual(['packages/core/tools/src/paths.ts'])
})

test('no service keeps a map keyed by session id', () => {
  // The HTTP transport routes each request to its connection by the Mcp-Session-Id header: that table is the
  // protocol's, and holds connections, not a session's state.
  // The testing packages hand tests one session per name: fixtures, not services.
  const allowed = new Set([
    'packages/host/mcp/src/http.ts',
    'packages/bash/bash-testing/src/index.ts',
    'packages/core/testing/src/index.ts',
  ])
  const found: string[] = []
  for (const file of sources()) {
    const rel = relative(ROOT, file)
    if (allowed.has(rel)) continue
    for (const [n, line] of readFileSync(file, 'utf8').split('\n').entries()) {
      if (/new (Weak)?Map\b/.test(line) && /session|owner/i.test(line)) found.push(`${rel}:${n + 1}: ${line.trim()}`)
      if (/Map<\s*string\b/.test(line) && /session|owner/i.test(line)) found.push(`${rel}:${n + 1}: ${line.trim()}`)
    }
  }
  expect(found).toEqual([])
})
