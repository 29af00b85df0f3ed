/*
 * Where UTF-8 characters begin and end in bytes: the one module both the text helpers (index.ts) and the line cuts
 * (lines.ts) build on, so neither imports the other.
 */

function isContinuation(byte: number | undefined): boolean {
  return byte !== undefined && (byte & 0xc0) === 0x80
}

/**
 * The largest index ≤ `at` (and ≥ `start`) where a character begins: cutting `bytes` there never splits one. At most
 * three bytes are given back — a longer run of continuation bytes is not UTF-8 anyway and decodes lossily either way.
 */
export function charBoundary(bytes: Uint8Array, at: number, start = 0): number {
  let cut = Math.min(Math.max(at, start), bytes.length)
  for (let back = 0; back < 3 && cut > start && isContinuation(bytes[cut]); back++) cut--
  return cut
}

/**
 * The length of `bytes[0, end)` without a trailing UTF-8 sequence that more bytes could still complete — where a
 * stream read so far can be decoded without inventing a U+FFFD that the next chunk would have avoided.
 */
export function completeLength(bytes: Uint8Array, end = bytes.length): number {
  let i = end - 1
  let continuation = 0
  while (i >= 0 && continuation < 3 && isContinuation(bytes[i])) {
    i--
    continuation++
  }
  if (i < 0) return end
  const lead = bytes[i] as number
  const need = lead >= 0xf0 && lead <= 0xf4 ? 4 : lead >= 0xe0 && lead < 0xf0 ? 3 : lead >= 0xc2 && lead < 0xe0 ? 2 : 1
  return need > continuation + 1 ? i : end
}

/** How many leading bytes (at most 3) are continuation bytes: the remains of a character cut at the front. */
export function cutPrefixLength(bytes: Uint8Array, start = 0): number {
  let n = 0
  while (n < 3 && start + n < bytes.length && isContinuation(bytes[start + n])) n++
  return n
}
