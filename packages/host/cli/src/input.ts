import { createReadStream } from 'node:fs'
import { open } from 'node:fs/promises'
import type { Readable } from 'node:stream'

/*
 * The command's own inputs — arguments on stdin, a --config file, a --token-file — are read whole, but never past a
 * bound: a path such as /dev/zero (or a pipe that never ends) must not grow the process until it dies.
 */

/** Most bytes of tool arguments read from stdin (`dsh call <tool> -`), as for one MCP message. */
export const MAX_STDIN_ARGS_BYTES = 16 * 1024 * 1024
/** Most bytes of a `--config` file. */
export const MAX_CONFIG_BYTES = 1024 * 1024
/** Most bytes of a `--token-file`. */
export const MAX_TOKEN_BYTES = 64 * 1024

/** The stream's bytes to its end, or undefined once they pass `maxBytes` (the stream is then destroyed). */
export async function readAtMost(stream: Readable, maxBytes: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of stream) {
    size += (chunk as Buffer).length
    if (size > maxBytes) {
      stream.destroy()
      return undefined
    }
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks)
}

/** A file (a regular file, a pipe such as `<(…)`, a device), read as `readAtMost` does; rejects as `open` would. */
export function readFileAtMost(path: string, maxBytes: number): Promise<Buffer | undefined> {
  return readAtMost(createReadStream(path), maxBytes)
}

/** Fewest bytes of a token `dsh mcp --http` serves with: 32 random bytes (or 64 hex digits) cannot be guessed. */
export const MIN_HTTP_TOKEN_BYTES = 32

/**
 * A token file read as `readFileAtMost` does, with the permission bits of the file it opened (not of the path
 * looked up again later: a file swapped in between is not the one judged).
 */
export async function readTokenFile(
  path: string,
  maxBytes: number,
): Promise<{ bytes: Buffer | undefined; mode: number }> {
  const handle = await open(path, 'r')
  try {
    const { mode } = await handle.stat()
    return { bytes: await readAtMost(handle.createReadStream({ autoClose: false }), maxBytes), mode: mode & 0o777 }
  } finally {
    await handle.close()
  }
}
