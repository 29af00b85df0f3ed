import { realpathSync } from 'node:fs'
import { realpath, stat } from 'node:fs/promises'
import { within } from '@deepseek-ai/dsh-tools'
import { fileURLToPath } from 'node:url'
import type { McpEngine } from './protocol.ts'

/** A client's roots claimed a directory outside those it may claim: the session gets none (never a wider one). */
export interface RefusedRoot {
  readonly refused: string
}

/**
 * The directory of the client's first `file://` root, when the client declares the roots capability and
 * answers within `timeoutMs`; undefined otherwise (why is passed to `log`). With `allowed` (an HTTP server's own
 * roots, docs/security.md#boundary), the first root that lies inside one of them, by real path; when the client names roots but
 * none inside, the session is refused (RefusedRoot), never given a wider root.
 */
export async function rootDirectory(
  server: McpEngine,
  timeoutMs: number,
  log: (line: string) => void,
  allowed?: readonly string[],
): Promise<string | RefusedRoot | undefined> {
  if (!server.getClientCapabilities()?.roots) return undefined
  let uris: string[]
  try {
    const { roots } = await server.listRoots({ timeout: timeoutMs })
    uris = roots.map((root) => root.uri).filter((uri) => uri.startsWith('file://'))
  } catch (error) {
    log(
      `roots/list got no usable answer within ${timeoutMs}ms (${(error as Error).message}); using the process directory`,
    )
    return undefined
  }
  if (allowed === undefined) uris = uris.slice(0, 1)
  if (uris.length === 0) return undefined
  const inside =
    allowed === undefined ? undefined : await Promise.all(allowed.map((root) => realpath(root).catch(() => root)))
  for (const uri of uris) {
    let path: string
    try {
      path = fileURLToPath(uri)
      if (!(await stat(path)).isDirectory()) {
        log(`root ${uri} is not a directory; using the process directory`)
        continue
      }
    } catch (error) {
      log(`root ${uri} is unusable (${(error as Error).message}); using the process directory`)
      continue
    }
    if (inside === undefined) return path
    const real = await realpath(path)
    if (inside.some((root) => within(real, root))) return path
  }
  if (inside === undefined) return undefined
  const refused = `this server only works inside the roots it was started with (${inside.join(', ')}), and the client's roots (${uris.join(', ')}) are not inside them: every call of this session is refused. Give the client a root inside them, or start the server with --cwd <that directory>`
  log(`refused a session: ${refused}`)
  return { refused }
}

/**
 * The refusal for a pinned root (its real path, resolved once when it was claimed) that lies outside the server's
 * own roots, or undefined when it is inside one (or the server names none). Checked on the pinned path, so a link
 * swapped in after the claim cannot widen it.
 */
export function outsideAllowed(real: string, allowed: readonly string[] | undefined): RefusedRoot | undefined {
  if (allowed === undefined) return undefined
  const roots = allowed.map((root) => {
    try {
      return realpathSync.native(root)
    } catch {
      return root
    }
  })
  if (roots.some((root) => within(real, root))) return undefined
  return {
    refused: `this server only works inside the roots it was started with (${roots.join(', ')}), and the session's root ${real} is not inside them: every call of this session is refused. Give the client a root inside them, or start the server with --cwd <that directory>`,
  }
}
