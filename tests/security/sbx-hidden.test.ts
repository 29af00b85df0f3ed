import { readFileSync } from 'node:fs'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, expect, test } from 'vitest'
import { Config as WorkspaceConfig } from '@deepseek-ai/dsh-workspace'
import { attack, leaked, SECRETS, type Attack } from './helpers.ts'

/*
 * Attacks #5 (the bash half) and #8 in docs/security.md#attacks (docs/security.md#boundary, hidden stays hidden; more hidden by default): every
 * credential store of the fake HOME is unreadable from a sandboxed command, and renaming a parent of a hidden path in
 * one call does not expose it to the next — in a project (a denyRead path) and with the fake HOME as a writable root.
 */
let a: Attack | undefined
afterEach(async () => {
  await a?.cleanup()
  a = undefined
})

test("every default credential store of HOME is hidden from bash, the agents' own stores and browser profiles included", async () => {
  a = await attack()
  const paths = Object.keys(SECRETS)
    .map((path) => `"$HOME/${path}"`)
    .join(' ')
  const text = await a.bash(`cat ${paths} 2>&1; grep -r CANARY "$HOME" 2>&1; true`)
  expect(leaked(text)).toEqual([])
  expect(text).toContain('.ssh/id_rsa: No such file or directory')
})

test('a parent of a denyRead path in the project cannot be renamed, so the next call finds nothing to read', async () => {
  a = await attack({
    config: ({ project }) => {
      mkdirSync(join(project, 'cfg/secrets'), { recursive: true })
      writeFileSync(join(project, 'cfg/secrets/key.txt'), 'CANARY-PROJECT\n')
      writeFileSync(join(project, 'cfg/plain.txt'), 'plain\n')
      return { 'bash-sandbox': { denyRead: [join(project, 'cfg/secrets')] } }
    },
  })
  const moved = await a.bash(
    'mv cfg cfg.moved 2>&1; mv cfg/secrets s2 2>&1; mv cfg/secrets/key.txt k 2>&1; cat cfg/plain.txt; true',
  )
  expect(moved).toContain("mv: cannot move 'cfg' to 'cfg.moved': Device or resource busy")
  expect(moved).toContain('plain')
  const next = await a.bash('cat cfg.moved/secrets/key.txt s2/key.txt k cfg/secrets/key.txt 2>&1; true')
  expect(next).not.toContain('CANARY-PROJECT')
  // The host's tree is as it was.
  expect(readFileSync(join(a.project, 'cfg/secrets/key.txt'), 'utf8')).toBe('CANARY-PROJECT\n')
})

test('with HOME itself a writable root, `mv ~/.config ~/.config.x` fails and the next call reads nothing', async () => {
  // HOME as a root must be asked for explicitly where the workspace refuses broad roots (docs/security.md#boundary).
  const broad = 'allowBroadRoots' in (WorkspaceConfig.dict ?? {}) ? { allowBroadRoots: true } : {}
  a = await attack({ config: () => ({ workspace: broad }) })
  const call = (command: string) =>
    a!.call('bash', { command, description: 'attack' }, 'A', a!.home).then((result) => result.text)
  const moved = await call('mv ~/.config ~/.config.x 2>&1; mv ~/.ssh ~/.ssh.x 2>&1; echo notes > ~/notes.txt; true')
  expect(moved).toContain('Device or resource busy')
  const next = await call(
    'cat ~/.config.x/gh/hosts.yml ~/.ssh.x/id_rsa ~/.config/gh/hosts.yml 2>&1; cat ~/notes.txt; true',
  )
  expect(leaked(next)).toEqual([])
  expect(next).toContain('notes')
})
