// Packs the built `dsh` (the bundle in dist/, the bin shim, README) with `npm pack` of this package into the
// repository's git-ignored dist/ (or the directory given as the one argument), and prints the tarball's absolute
// path as the last line. It does not build: `npm run pack` at the root builds first.
// See docs/decisions/2026-12-02-installable-package.md.
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const cli = join(dirname(fileURLToPath(import.meta.url)), '..')
const out = resolve(process.argv[2] ?? join(cli, '../../../dist'))

if (!existsSync(join(cli, 'dist/dsh.cjs'))) {
  process.stderr.write('dsh is not built: run `npm run pack` (or `npm run build` first) at the repository root\n')
  process.exit(1)
}
mkdirSync(out, { recursive: true })
writeRipgrepDigests()
// --ignore-scripts: packing never builds (nor runs any other lifecycle script); the tarball is what the build made.
const packed = JSON.parse(
  execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', out], {
    cwd: cli,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }),
)
const [{ filename, files, size, unpackedSize }] = packed
process.stdout.write(
  `${files.length} files, ${(size / 1e6).toFixed(2)} MB packed, ${(unpackedSize / 1e6).toFixed(2)} MB unpacked\n${join(out, filename)}\n`,
)

/**
 * dist/ripgrep-digests.json: the SHA-256 of the rg of every @vscode/ripgrep platform package installed here, with
 * its version. At run time an rg that lies inside a writable root is used only when its bytes match
 * (docs/decisions/2026-12-04-trusted-ripgrep.md). Fails the pack when none is installed: the tarball would refuse
 * a workspace-local rg everywhere.
 */
function writeRipgrepDigests() {
  // Found as Node finds it from this package (its exports hide package.json from require.resolve).
  const scope = createRequire(join(cli, 'package.json'))
    .resolve.paths('@vscode/ripgrep')
    .map((modules) => join(modules, '@vscode'))
    .find((dir) => existsSync(join(dir, 'ripgrep', 'package.json')))
  if (!scope) {
    process.stderr.write('@vscode/ripgrep is not installed: run npm ci first\n')
    process.exit(1)
  }
  const digests = {}
  for (const name of readdirSync(scope).filter((entry) => entry.startsWith('ripgrep-'))) {
    const folder = join(scope, name)
    const binary = ['rg', 'rg.exe'].map((file) => join(folder, 'bin', file)).find((path) => existsSync(path))
    if (!binary) continue
    const { version } = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8'))
    digests[`@vscode/${name}`] = { version, sha256: createHash('sha256').update(readFileSync(binary)).digest('hex') }
  }
  if (Object.keys(digests).length === 0) {
    process.stderr.write(`no @vscode/ripgrep platform package with a binary in ${scope}: run npm ci first\n`)
    process.exit(1)
  }
  writeFileSync(join(cli, 'dist', 'ripgrep-digests.json'), `${JSON.stringify(digests, null, 2)}\n`)
}
