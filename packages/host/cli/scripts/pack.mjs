// Packs the built `dsh` (the bundle in dist/, the bin shim, README) with `npm pack` of this package into the
// repository's git-ignored dist/ (or the directory given as the one argument), and prints the tarball's absolute
// path as the last line. It does not build: `npm run pack` at the root builds first.
// See docs/decisions/2026-12-02-installable-package.md.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const cli = join(dirname(fileURLToPath(import.meta.url)), '..')
const out = resolve(process.argv[2] ?? join(cli, '../../../dist'))

if (!existsSync(join(cli, 'dist/dsh.cjs'))) {
  process.stderr.write('dsh is not built: run `npm run pack` (or `npm run build` first) at the repository root\n')
  process.exit(1)
}
mkdirSync(out, { recursive: true })
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
