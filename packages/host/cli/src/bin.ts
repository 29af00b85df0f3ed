#!/usr/bin/env node
import { EXIT, main } from './main.ts'

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(
      `dsh: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    )
    process.exit(EXIT.START_FAILED)
  },
)
