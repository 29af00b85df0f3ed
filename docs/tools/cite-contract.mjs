#!/usr/bin/env node
// Rewrites citations of the design notes kept outside the repository (`DESIGN §N`, a bare `§N`, the path of the
// notes, `STYLE N`) into the contract page of docs/ that holds the promise, in every tracked text file.
// Run from the repository root: `node docs/tools/cite-contract.mjs` (add `--check` to list what it would change
// and exit 1 if anything). Idempotent: a second run changes nothing.
import { execFileSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { dirname, posix, relative } from 'node:path'

/** Section of the design notes → the page (and anchor) of docs/ that holds it now. */
const PAGE = {
  1: 'architecture.md',
  2: 'architecture.md',
  3: 'architecture.md#packages',
  4: 'seams.md#tools',
  4.1: 'seams.md#tools',
  4.2: 'model-surface.md#prompt',
  4.3: 'seams.md#timeout',
  5: 'seams.md#subprocess',
  6: 'seams.md#bash',
  7: 'seams.md#spill',
  8: 'model-surface.md#tools',
  9: 'model-surface.md#tools',
  10: 'seams.md#hosts',
  11: 'seams.md#hosts',
  12: 'model-surface.md#budgets',
  13: 'seams.md#tasks',
  14: 'security.md#boundary',
  15: 'seams.md#hosts',
  16: 'security.md#boundary',
  17: 'security.md#boundary',
  18: 'model-surface.md#tools',
  19: 'seams.md#tasks',
  20: 'model-surface.md#errors',
  21: 'model-surface.md#budgets',
  22: 'seams.md#sessions',
  23: 'security.md#boundary',
  24: 'security.md#boundary',
  25: 'model-surface.md#tools',
  26: 'architecture.md#house-rules',
}
const HOUSE_RULES = 'architecture.md#house-rules'
const SELF = 'docs/tools/cite-contract.mjs'

const SECTION = String.raw`§\d+(?:\.\d+)?`
const MORE = String.raw`(?:(?:,\s*|\s*/\s*|\s+and\s+)${SECTION})*`
// `DESIGN §14, §16`, `DESIGN.md §7`, `DESIGN\n§17`, or a bare `§8` (a `§` not followed by a digit is left alone).
const CITATION = new RegExp(String.raw`(?:\bDESIGN(?:\.md)?\s+)?${SECTION}${MORE}`, 'g')
const NOTES_PATH = /`?(?:\.\.\/)+shared\/(?:DESIGN|STYLE)\.md`?/g
const STYLE_POINTS = /\bSTYLE(?:\.md)?(?: point)? \d+(?:(?:, |\/| and )\d+)*/g
// The attack list of the security review, numbered in docs/security.md: `Attack #7 of issue 25`.
const ATTACK_OF_ISSUE = /\b(Attacks? #[^\n]*?) of issue 25\b/g
// A history note inside a citation's parentheses: `(DESIGN §17, issue 25)`.
const ISSUE_IN_CITATION = /,\s*issue \d+(?=\))|\bissue \d+,\s*(?=docs\/|\[)/g

function sections(text) {
  return [...text.matchAll(/§(\d+(?:\.\d+)?)/g)].map((m) => m[1])
}

function targets(numbers, file) {
  const pages = []
  for (const n of numbers) {
    const page = PAGE[n] ?? PAGE[n.split('.')[0]]
    if (page === undefined) throw new Error(`${file}: no contract page for §${n}; add it to PAGE`)
    if (!pages.includes(page)) pages.push(page)
  }
  return pages
}

/** How `page` (relative to docs/) is written in `file`: a relative link in Markdown, a repository path elsewhere. */
function cite(page, file) {
  if (!file.endsWith('.md')) return `docs/${page}`
  const href = posix.join(relative(dirname(file), 'docs') || '.', page).replace(/^\.\//, '')
  return `[${posix.basename(page.split('#')[0], '.md')}${page.includes('#') ? ` (${page.split('#')[1]})` : ''}](${href})`
}

function rewrite(text, file) {
  return text
    .replace(CITATION, (match) =>
      targets(sections(match), file)
        .map((page) => cite(page, file))
        .join(', '),
    )
    .replace(NOTES_PATH, () => cite('architecture.md', file))
    .replace(STYLE_POINTS, () => cite(HOUSE_RULES, file))
    .replace(ATTACK_OF_ISSUE, (_, attack) => `${attack} in ${cite('security.md#attacks', file)}`)
    .replace(ISSUE_IN_CITATION, '')
}

const check = process.argv.includes('--check')
const files = execFileSync('git', ['ls-files', '-z'], { encoding: 'utf8' })
  .split('\0')
  .filter((file) => file !== '' && file !== SELF && /\.(md|ts|mts|mjs|cjs|js|json|sh|txt|ya?ml)$/.test(file))
  .filter((file) => !file.includes('node_modules/') && file !== 'package-lock.json')
let changed = 0
for (const file of files) {
  let text
  try {
    text = readFileSync(file, 'utf8')
  } catch {
    continue // listed by git but gone from the working tree
  }
  if (!text.includes('§') && !text.includes('shared/') && !text.includes('STYLE')) continue
  const next = rewrite(text, file)
  if (next === text) continue
  changed++
  if (check) process.stdout.write(`${file}\n`)
  else writeFileSync(file, next)
}
process.stdout.write(`${check ? 'would change' : 'changed'} ${changed} file(s)\n`)
if (check && changed > 0) process.exit(1)
