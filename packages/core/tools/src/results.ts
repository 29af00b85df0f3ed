import { CoreErrorCode, HarnessError } from './errors.ts'
import type { ToolOutput, ToolResult } from './types.ts'

export function textResult(text: string, value?: unknown): ToolResult {
  const result: ToolResult = { content: [{ type: 'text', text }], isError: false }
  if (value !== undefined) result.value = value
  return result
}

/** Every thrown value becomes `Error: <message>` with a name and a code; only a HarnessError chooses its code. */
export function errorResult(error: unknown, fallbackCode: string = CoreErrorCode.TOOL_FAILED): ToolResult {
  const info =
    error instanceof HarnessError
      ? { message: error.message, name: error.name, code: error.code }
      : error instanceof Error
        ? { message: error.message, name: error.name, code: fallbackCode }
        : { message: String(error), name: 'Error', code: fallbackCode }
  return { content: [{ type: 'text', text: `Error: ${info.message}` }], isError: true, error: info }
}

export function outputToResult(output: string | ToolOutput): ToolResult {
  if (typeof output === 'string') return textResult(output)
  if (output !== null && typeof output === 'object' && typeof output.text === 'string') {
    const result = textResult(output.text, output.value)
    if (output.images?.length) result.content = [result.content[0], ...output.images]
    return result
  }
  throw new HarnessError('tool returned neither text nor { text }', { code: CoreErrorCode.TOOL_FAILED })
}
