import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js'
import { ERROR_META_KEY } from '@deepseek-ai/dsh-mcp-wire'
import type { ToolResult, ToolSchema } from '@deepseek-ai/dsh-tools'

/**
 * A registry schema as MCP lists it: the JSON Schema passes through verbatim as `inputSchema`; `title` and
 * `annotations` (clients decide on approval from them) when the tool has them. Key order is fixed, so the
 * listing is byte-stable.
 */
export function toMcpTool(schema: ToolSchema): Tool {
  return {
    name: schema.name,
    ...(schema.title === undefined ? {} : { title: schema.title }),
    description: schema.description,
    inputSchema: schema.parameters as Tool['inputSchema'],
    ...(schema.annotations === undefined ? {} : { annotations: { ...schema.annotations } }),
  }
}

/**
 * The pipeline's result on the wire: the same text, then its images as image blocks; an error result names its error
 * and code in `_meta`.
 */
export function toCallToolResult(result: ToolResult): CallToolResult {
  const [text, ...images] = result.content
  const wire: CallToolResult = {
    content: [
      { type: 'text', text: text.text },
      ...images.map((image) => ({ type: 'image' as const, data: image.data, mimeType: image.mimeType })),
    ],
    isError: result.isError,
  }
  if (result.error) wire._meta = { [ERROR_META_KEY]: { name: result.error.name, code: result.error.code } }
  return wire
}

/** The text of a progress notification for a call still running. */
export function progressMessage(tool: string, elapsedMs: number): string {
  return `${tool} still running after ${Math.round(elapsedMs / 1000)}s`
}
