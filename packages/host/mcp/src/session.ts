import { stat } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import type { McpEngine } from './protocol.ts'

/**
 * The directory of the client's first `file://` root, when the client declares the roots capability and
 * answers within `timeoutMs`; undefined otherwise (why is passed to `log`).
 */
export async function rootDirectory(server: McpEngine, timeoutMs: number, log: (line: string) => void): Promise<string | undefined> {
  if (!server.getClientCapabilities()?.roots) return undefined
  let uri: string | undefined
  try {
    const { roots } = await server.listRoots({ timeout: timeoutMs })
    uri = roots.find((root) => root.uri.startsWith('file://'))?.uri
  } catch (error) {
    log(`roots/list got no usable answer within ${timeoutMs}ms (${(error as Error).message}); using the process directory`)
    return undefined
  }
  if (uri === undefined) return undefined
  try {
    const path = fileURLToPath(uri)
    if ((await stat(path)).isDirectory()) return path
    log(`root ${uri} is not a directory; using the process directory`)
  } catch (error) {
    log(`root ${uri} is unusable (${(error as Error).message}); using the process directory`)
  }
  return undefined
}
