import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http'
import { listenOnLoopback } from './clients.ts'

/**
 * A scripted stand-in for the Anthropic Messages API, for driving a real agent CLI without a model: HTTP on
 * 127.0.0.1, answering `POST /v1/messages` (streamed as server-sent events or as one JSON body, as the request
 * asks) and `POST /v1/messages/count_tokens`. Every request is recorded. The conversation needs no state of its
 * own: each request's messages say how far the script got (a step is done once its tool_result came back), so a
 * retried request gets the same answer.
 */

/** One scripted model turn: call `tool` with `input`. */
export interface ToolStep {
  tool: string
  input: Record<string, unknown>
}

export interface MessagesModelOptions {
  /** The tool calls, one per model turn, in order; each is issued once the previous one's result came back. */
  steps: readonly ToolStep[]
  /** The text of the final turn, after the last step's result. */
  finalText: string
}

/** A tool as a request offers it to the model. */
export interface OfferedTool {
  name: string
  description?: string
  input_schema?: unknown
  defer_loading?: boolean
}

export interface RecordedRequest {
  method: string
  /** Path and query, e.g. `/v1/messages?beta=true`. */
  url: string
  headers: IncomingHttpHeaders
  /** The parsed JSON body, or the raw text when it was not JSON. */
  body: unknown
}

/** The result of one scripted step, as the client sent it back. */
export interface StepResult {
  tool: string
  input: Record<string, unknown>
  toolUseId: string
  isError: boolean
  /** The text blocks of the result, joined by newlines (a string result as it is). */
  text: string
  /** The result's content exactly as sent. */
  content: unknown
}

export interface MessagesModel extends AsyncDisposable {
  /** The base URL to give the client, e.g. as ANTHROPIC_BASE_URL. */
  readonly url: string
  readonly requests: readonly RecordedRequest[]
  /** The results of the scripted steps, in the order they first arrived. */
  readonly results: readonly StepResult[]
  /** The tools each conversation request (one that offers tools) offered, in order. */
  offeredTools(): OfferedTool[][]
  /** The text blocks of every message of every request, for finding what the client told the model. */
  messageTexts(): string[]
  close(): Promise<void>
}

type Block =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }

interface Turn {
  blocks: Block[]
  stopReason: 'tool_use' | 'end_turn'
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** The content blocks of every message of a request body (a string content counts as one text block). */
function contentBlocks(body: unknown): Record<string, unknown>[] {
  if (!isRecord(body) || !Array.isArray(body.messages)) return []
  return body.messages.flatMap((message: unknown) => {
    if (!isRecord(message)) return []
    if (typeof message.content === 'string') return [{ type: 'text', text: message.content }]
    return Array.isArray(message.content) ? message.content.filter(isRecord) : []
  })
}

function resultText(content: unknown): string {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  return content
    .filter(isRecord)
    .flatMap((block) => (block.type === 'text' && typeof block.text === 'string' ? [block.text] : []))
    .join('\n')
}

function offered(body: unknown): OfferedTool[] {
  if (!isRecord(body) || !Array.isArray(body.tools)) return []
  return body.tools
    .filter(isRecord)
    .flatMap((tool) => (typeof tool.name === 'string' ? [tool as unknown as OfferedTool] : []))
}

const toolUseId = (step: number) => `toolu_script_${step}`

export async function startMessagesModel(options: MessagesModelOptions): Promise<MessagesModel> {
  const requests: RecordedRequest[] = []
  const results: StepResult[] = []
  let messageCount = 0

  /** The next turn of the script, from the tool results the request carries. */
  function nextTurn(body: unknown): Turn {
    // A request that offers no tools is a side request of the client (a title, a summary): plain text.
    if (offered(body).length === 0)
      return { blocks: [{ type: 'text', text: options.finalText }], stopReason: 'end_turn' }
    const returned = new Map<string, Record<string, unknown>>()
    for (const block of contentBlocks(body)) {
      if (block.type === 'tool_result' && typeof block.tool_use_id === 'string') returned.set(block.tool_use_id, block)
    }
    let step = 0
    while (step < options.steps.length && returned.has(toolUseId(step))) {
      const id = toolUseId(step)
      const block = returned.get(id)!
      if (!results.some((result) => result.toolUseId === id)) {
        const { tool, input } = options.steps[step]!
        results.push({
          tool,
          input,
          toolUseId: id,
          isError: block.is_error === true,
          text: resultText(block.content),
          content: block.content,
        })
      }
      step++
    }
    if (step === options.steps.length)
      return { blocks: [{ type: 'text', text: options.finalText }], stopReason: 'end_turn' }
    const { tool, input } = options.steps[step]!
    return { blocks: [{ type: 'tool_use', id: toolUseId(step), name: tool, input }], stopReason: 'tool_use' }
  }

  function answerMessages(body: unknown, response: ServerResponse): void {
    const turn = nextTurn(body)
    const id = `msg_script_${++messageCount}`
    const model = isRecord(body) && typeof body.model === 'string' ? body.model : 'stand-in'
    const usage = { input_tokens: 1, output_tokens: 1 }
    if (!isRecord(body) || body.stream !== true) {
      sendJson(response, 200, {
        id,
        type: 'message',
        role: 'assistant',
        model,
        content: turn.blocks,
        stop_reason: turn.stopReason,
        stop_sequence: null,
        usage,
      })
      return
    }
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
    const event = (type: string, data: Record<string, unknown>) =>
      response.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`)
    event('message_start', {
      message: {
        id,
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage,
      },
    })
    turn.blocks.forEach((block, index) => {
      if (block.type === 'tool_use') {
        event('content_block_start', {
          index,
          content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
        })
        event('content_block_delta', {
          index,
          delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) },
        })
      } else {
        event('content_block_start', { index, content_block: { type: 'text', text: '' } })
        event('content_block_delta', { index, delta: { type: 'text_delta', text: block.text } })
      }
      event('content_block_stop', { index })
    })
    event('message_delta', {
      delta: { stop_reason: turn.stopReason, stop_sequence: null },
      usage: { output_tokens: 1 },
    })
    event('message_stop', {})
    response.end()
  }

  function answer(request: IncomingMessage, text: string, response: ServerResponse): void {
    let body: unknown = text
    try {
      body = JSON.parse(text)
    } catch {
      // recorded as text
    }
    const url = request.url ?? '/'
    requests.push({ method: request.method ?? '', url, headers: request.headers, body })
    const path = url.split('?')[0]
    if (request.method === 'POST' && path === '/v1/messages') return answerMessages(body, response)
    if (request.method === 'POST' && path === '/v1/messages/count_tokens')
      return sendJson(response, 200, { input_tokens: Math.ceil(text.length / 4) })
    sendJson(response, 404, {
      type: 'error',
      error: { type: 'not_found_error', message: `the stand-in model does not serve ${request.method} ${path}` },
    })
  }

  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => answer(request, Buffer.concat(chunks).toString('utf8'), response))
  })
  const { port, close } = await listenOnLoopback(server)
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    results,
    offeredTools: () => requests.map((request) => offered(request.body)).filter((tools) => tools.length > 0),
    messageTexts: () =>
      requests.flatMap((request) =>
        contentBlocks(request.body).flatMap((block) =>
          block.type === 'text' && typeof block.text === 'string' ? [block.text] : [],
        ),
      ),
    close,
    [Symbol.asyncDispose]: close,
  }
}

function sendJson(response: ServerResponse, status: number, value: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' })
  response.end(JSON.stringify(value))
}
