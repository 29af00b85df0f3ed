import { afterAll, beforeAll, expect, test } from 'vitest'
import { attack, type Attack } from './helpers.ts'

/*
 * Attack #11 in docs/security.md#attacks (docs/security.md#boundary, sessions apart): two sessions of one server (here one composition, as one
 * `dsh mcp --http` process serves its sessions) — B must not read A's /tmp files nor A's saved results.
 */
let a: Attack
beforeAll(async () => {
  a = await attack()
})
afterAll(async () => {
  await a?.cleanup()
})

test("session B does not see session A's /tmp; each session keeps its own between calls", async () => {
  expect(await a.bash('echo A-TMP-SECRET > /tmp/a.txt && echo written', 'A')).toBe('written')
  const b = await a.bash('cat /tmp/a.txt 2>&1; ls -A /tmp', 'B')
  expect(b).toMatch(/^cat: \/tmp\/a.txt: No such file or directory\n/)
  expect(b).not.toContain('a.txt\n')
  expect(await a.bash('cat /tmp/a.txt', 'A')).toBe('A-TMP-SECRET')
  // The session's /tmp goes with the session: disposed, its directory is removed.
  await a.session('A', a.project).dispose()
  expect(await a.bash('ls -A /tmp | grep -c a.txt; true', 'A2')).toBe('0')
})

test("session B cannot read session A's saved results from bash, nor list them; A can", async () => {
  expect(await a.bash('seq 1 40000 | sed "s/^/A-SAVED-/" > lines.txt && echo made', 'A')).toBe('made')
  const grep = await a.call('grep', { pattern: 'A-SAVED-', path: 'lines.txt' }, 'A')
  const locator = /saved at (\/\S+?)\.? /.exec(grep.text)?.[1] ?? ''
  expect(locator, grep.text.slice(-600)).toMatch(/^\//)
  expect(await a.bash(`grep -c "A-SAVED-40000$" ${locator}`, 'A')).toBe('1')
  const sessionDir = locator.replace(/\/[^/]+$/, '')
  expect(await a.bash(`cat ${locator} 2>&1 | head -2`, 'B')).not.toContain('A-SAVED-')
  const listed = await a.bash(
    `ls -A ${sessionDir.replace(/\/[^/]+$/, '')} 2>/dev/null; ls -A ${sessionDir} 2>/dev/null; true`,
    'B',
  )
  expect(listed).not.toContain(sessionDir.split('/').pop() as string)
  expect(listed).not.toContain(locator.split('/').pop() as string)
})

test("a command's full output file is readable by its own session in the next call, not by another session", async () => {
  const big = await a.bash('seq 1 200000 | sed "s/^/A-OUTPUT-/"', 'A')
  const file = /full output: (\/\S+?)\]/.exec(big)?.[1] ?? ''
  expect(file, big.slice(-300)).toMatch(/^\//)
  expect(await a.bash(`tail -1 ${file}`, 'A')).toBe('A-OUTPUT-200000')
  expect(
    await a.bash(`tail -1 ${file} 2>/dev/null; ls -A ${file.replace(/\/[^/]+$/, '')} 2>/dev/null; true`, 'B'),
  ).not.toContain('A-OUTPUT-')
  const listing = await a.bash(`ls -A ${file.replace(/\/[^/]+$/, '')} 2>/dev/null; true`, 'B')
  expect(listing).not.toContain(file.split('/').pop() as string)
})
