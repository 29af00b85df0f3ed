import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { expect, test } from 'vitest'
import { processRuns } from '../src/index.ts'
import { until } from './helpers.ts'

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url))

/** Runs the fixture host to its end; returns its exit code and the pids it printed. */
function host(mode: 'exit' | 'throw'): Promise<{ code: number | null; pids: number[] }> {
  const args = ['--conditions=dsh-source', '--import', fixture('register-ts.mjs'), fixture('exit-hook-host.mjs'), mode]
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { timeout: 60000 }, (error, stdout) => {
      const code = error ? (typeof error.code === 'number' ? error.code : null) : 0
      const pids = stdout.trim().split(' ').map(Number)
      if (pids.length !== 2 || pids.some((pid) => !Number.isInteger(pid) || pid <= 0))
        reject(new Error(`unexpected host output ${JSON.stringify(stdout)}: ${error}`))
      else resolve({ code, pids })
    })
  })
}

test('a host that exits normally without disposing leaves no process behind', async () => {
  const { code, pids } = await host('exit')
  expect(code).toBe(0)
  for (const pid of pids) await until(() => !processRuns(pid), `process ${pid} is gone`)
})

test('a host that dies of an uncaught exception leaves no process behind', async () => {
  const { code, pids } = await host('throw')
  expect(code).toBe(1)
  for (const pid of pids) await until(() => !processRuns(pid), `process ${pid} is gone`)
})
