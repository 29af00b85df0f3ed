/*
 * dsh's conventions on the MCP wire, shared by both of its ends: the server host (@deepseek-ai/dsh-mcp) and the
 * client that mounts a remote dsh's tools (@deepseek-ai/dsh-tools-remote). Below both, so that neither imports the
 * other (docs/decisions/2026-12-02-house-rules.md).
 */

export { LineSplitter } from './lines.ts'

/** The `_meta` key under which an error result names its error: `{ name, code }`. */
export const ERROR_META_KEY = 'dsh/error'

/**
 * The first paragraph of the `instructions`: clients list a server's tools under prefixed names
 * (`mcp__dsh__read`, `mcp_dsh_read`) beside their own Read/Bash/Grep, so the prompt's bare tool names are tied to
 * this server's tools once, here.
 */
export function instructionsPreamble(server: string, tools: readonly string[]): string {
  return (
    `These instructions are about the tools of the MCP server ${server}: ${tools.join(', ')}. Your client may list them` +
    ` under longer names (such as mcp__${server}__${tools[0] ?? 'read'}); wherever a tool is named below, this server's tool` +
    ' of that name is meant, not a similar tool of the client.'
  )
}
