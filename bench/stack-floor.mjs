// The stack alone, shaped like a cold `dsh call glob` but without any of dsh's code: a Cordis context with the
// default composition's ten plugins (five services, five consumers that inject them, nothing else), one spawn of
// ripgrep read to its end, one line to stdout, disposal. host.bench.mjs bundles this file as dsh is bundled
// (rolldown, CommonJS, run through bin/load-bundle.cjs with a V8 code cache) and times it cold next to `dsh call
// glob`: what no change inside dsh can go below. Usage: node <bundle> <rg> <rg args…>
import { spawn } from 'node:child_process'
import { Context, Service } from 'cordis'

const SERVICES = ['tools', 'systemPrompt', 'subprocess', 'spillStore', 'bash']
const CONSUMERS = [['subprocess'], ['tools'], ['bash', 'tools'], ['tools'], ['subprocess', 'spillStore', 'tools']]

const ctx = new Context()
for (const name of SERVICES) {
  ctx.plugin(
    class extends Service {
      constructor(parent) {
        super(parent, name)
      }
    },
  )
}
let ready
const started = new Promise((resolve) => (ready = resolve))
CONSUMERS.forEach((inject, index) => {
  ctx.plugin({
    name: `consumer-${index}`,
    inject,
    apply(child) {
      child.on('dispose', () => {})
      if (index === CONSUMERS.length - 1) ready()
    },
  })
})

// Not top-level await: the bundle is CommonJS, as dsh's is.
async function main() {
  await started
  const [rg, ...args] = process.argv.slice(2)
  const listed = await new Promise((resolve, reject) => {
    const child = spawn(rg, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    let bytes = 0
    child.stdout.on('data', (chunk) => (bytes += chunk.length))
    child.stderr.resume()
    child.on('error', reject)
    child.on('close', () => resolve(bytes))
  })
  process.stdout.write(`${listed} bytes listed\n`)
  await ctx.fiber.dispose()
}

main()
