// The search corpus shared by the search, scale and reader benches: a pinned set of npm packages installed into the
// git-ignored bench/corpus/tree (once; reused while the pin list is unchanged), more than 50 000 files.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
export const corpus = join(here, 'corpus')
export const tree = join(corpus, 'tree')
export const VCS = ['.git', '.svn', '.hg', '.bzr', '.jj', '.sl']
export const MIN_FILES = 50_000

// Every package npm hoists, at an exact version, so that the tree is the same on every machine.
const PINNED = [
  '@mui/icons-material@5.15.0',
  '@mui/material@5.15.0',
  'date-fns@3.6.0',
  'typescript@5.6.3',
  'rxjs@7.8.1',
  'lodash@4.17.21',
  'lodash-es@4.17.21',
  'core-js@3.37.1',
  '@babel/runtime@7.29.15',
  '@emotion/cache@11.14.0',
  '@emotion/hash@0.9.2',
  '@emotion/memoize@0.9.0',
  '@emotion/serialize@1.3.3',
  '@emotion/sheet@1.4.0',
  '@emotion/unitless@0.10.0',
  '@emotion/utils@1.4.2',
  '@emotion/weak-memoize@0.4.0',
  '@floating-ui/core@1.8.0',
  '@floating-ui/dom@1.8.0',
  '@floating-ui/react-dom@2.1.9',
  '@floating-ui/utils@0.2.12',
  '@mui/base@5.0.0-beta.27',
  '@mui/core-downloads-tracker@5.18.0',
  '@mui/private-theming@5.17.1',
  '@mui/styled-engine@5.18.0',
  '@mui/system@5.18.0',
  '@mui/types@7.4.12',
  '@mui/utils@5.17.1',
  '@popperjs/core@2.11.8',
  '@types/prop-types@15.7.15',
  '@types/react-transition-group@4.4.12',
  'clsx@2.1.1',
  'csstype@3.2.4',
  'dom-helpers@5.2.1',
  'js-tokens@4.0.0',
  'loose-envify@1.4.0',
  'object-assign@4.1.1',
  'prop-types@15.8.1',
  'react-is@18.3.1',
  'react-transition-group@4.4.5',
  'stylis@4.2.0',
  'tslib@2.9.1',
]

/** Builds bench/corpus/tree unless it is there with the same pins. */
export function buildCorpus() {
  const marker = join(tree, '.dsh-corpus.json')
  const wanted = JSON.stringify(PINNED)
  if (existsSync(marker) && readFileSync(marker, 'utf8') === wanted) return unhide()
  rmSync(tree, { recursive: true, force: true })
  mkdirSync(tree, { recursive: true })
  writeFileSync(join(tree, 'package.json'), '{ "name": "dsh-bench-corpus", "private": true }\n')
  console.log(`building the corpus: npm install of ${PINNED.length} pinned packages into ${tree}`)
  // Its own prefix, no lockfile, no scripts: the workspace's lockfile and node_modules are never touched.
  execFileSync(
    'npm',
    [
      'install',
      '--prefix',
      tree,
      '--no-package-lock',
      '--no-save',
      '--ignore-scripts',
      '--no-audit',
      '--no-fund',
      '--workspaces=false',
      '--legacy-peer-deps',
      ...PINNED,
    ],
    { cwd: tree, stdio: ['ignore', 'ignore', 'inherit'] },
  )
  // An (empty) .git makes the tree a repository root of its own, so the workspace's .gitignore (which ignores
  // node_modules/ and bench/corpus/) does not hide it from grep's default visibility.
  mkdirSync(join(tree, '.git'), { recursive: true })
  writeFileSync(marker, wanted)
  unhide()
}

/**
 * grep runs with --no-require-git, under which ripgrep applies a parent's .gitignore across a nested repository's
 * root: the workspace's `node_modules/` rule would hide the whole corpus. The tree's own rule re-includes it.
 */
function unhide() {
  writeFileSync(join(tree, '.gitignore'), '!node_modules/\n')
}
