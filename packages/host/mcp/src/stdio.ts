import type { Readable, Writable } from 'node:stream'
import type { Context } from 'cordis'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { connect, type McpConnection, type McpOptions } from './connection.ts'

export interface StdioOptions extends McpOptions {
  /** Default `process.stdin`. */
  stdin?: Readable
  /** Default `process.stdout`. */
  stdout?: Writable
}

/**
 * Serves one connection on stdin/stdout. The connection closes when stdin ends (the client went away) or stdout
 * fails (a broken pipe), so `closed` always resolves once the client is gone.
 */
export async function serveStdio(ctx: Context, options: StdioOptions = {}): Promise<McpConnection> {
  const stdin = options.stdin ?? process.stdin
  const stdout = options.stdout ?? process.stdout
  const connection = await connect(ctx, new StdioServerTransport(stdin, stdout), options)
  const end = () => void connection.close()
  const broken = (error: Error) => {
    options.log?.(`stdout failed (${error.message}); closing`)
    end()
  }
  stdin.on('end', end)
  stdin.on('close', end)
  stdout.on('error', broken)
  void connection.closed.then(() => {
    stdin.off('end', end)
    stdin.off('close', end)
  })
  return connection
}
