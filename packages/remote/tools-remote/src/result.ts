import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js'
import { ERROR_META_KEY } from '@deepseek-ai/dsh-mcp-wire'
import { CoreErrorCode, type ToolAnnotations } from '@deepseek-ai/dsh-tools'
import { RemoteToolError } from './errors.ts'

/**
 * The text of a remote result; a remote error result is thrown as a RemoteToolError with the remote's message,
 * name and code, so the local pipeline renders exactly the remote's `Error: <message>`. Content that is not text
 * (an image from a server that is not a dsh) is named, not dropped silently.
 */
export function resultText(result: CallToolResult): string {
  const parts = (result.content ?? []).map((item) =>
    item.type === 'text' ? item.text : `[${item.type} content not shown]`,
  )
  const text = parts.join('\n')
  if (!result.isError) return text
  const meta = result._meta?.[ERROR_META_KEY] as { name?: unknown; code?: unknown } | undefined
  const message = text.startsWith('Error: ') ? text.slice('Error: '.length) : text
  return rethrow(
    message,
    typeof meta?.name === 'string' ? meta.name : 'RemoteToolError',
    typeof meta?.code === 'string' ? meta.code : CoreErrorCode.TOOL_FAILED,
  )
}

function rethrow(message: string, name: string, code: string): never {
  throw new RemoteToolError(message, name, code)
}

const HINTS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const

/** The title a remote tool shows clients: MCP's top-level `title`, else the legacy `annotations.title`. */
export function toolTitle(tool: Tool): string | undefined {
  return tool.title ?? tool.annotations?.title
}

/** The four behaviour hints of a remote tool, exactly as it sent them; undefined when it sent none. */
export function toolAnnotations(tool: Tool): ToolAnnotations | undefined {
  const source = tool.annotations
  if (!source) return undefined
  const hints: Record<string, boolean> = {}
  for (const hint of HINTS) if (typeof source[hint] === 'boolean') hints[hint] = source[hint]
  return Object.keys(hints).length ? hints : undefined
}
