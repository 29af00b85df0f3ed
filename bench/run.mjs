// Runs every bench/*.bench.mjs (or those whose names contain an argument) one after another, each in its own
// Node process so that peak-RSS figures of one benchmark never include another's.
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const filters = process.argv.slice(2)
const files = readdirSync(here)
  .filter((name) => name.endsWith('.bench.mjs'))
  .filter((name) => filters.length === 0 || filters.some((f) => name.includes(f)))
  .sort()
let failed = 0
for (const file of files) {
  console.log(`\n## ${file}`)
  const result = spawnSync(process.execPath, ['--expose-gc', join(here, file)], { stdio: 'inherit' })
  if (result.status !== 0) {
    failed++
    console.log(`(${file} exited ${result.status ?? result.signal})`)
  }
}
process.exitCode = failed ? 1 : 0
