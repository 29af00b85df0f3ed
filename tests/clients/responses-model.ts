import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { listenOnLoopback } from './clients.ts'

/**
 * A scripted stand-in for the OpenAI Responses API (`POST <base>/responses`, streamed as server-sent events), on
 * 127.0.0.1: it makes the script's tool calls one per turn, each once the previous call's output came back, then
 * ends with a short assistant message. It records every request, and the output text sent back for each call.
 */

/** A tool call the stand-in makes. Codex offers an MCP server's tools inside a `namespace` tool (`mcp__<server>`). */
export interface ToolCall {
  namespace?: string
  name: string
  arguments: Record<string, unknown>
}

/** A tool offered to the model, as the Responses request declares it: a function, or a namespace of functions. */
export interface ToolSpec {
  type: string
  name?: string
  description?: string
  tools?: ToolSpec[]
}

/** An item of the request's `input`; `function_call_output` carries `call_id` and the output (text or parts). */
export interface InputItem {
  type: string
  call_id?: string
  output?: string | { type: string; text?: string }[]
}

export interface ResponsesRequestBody {
  model: string
  input: InputItem[]
  tools?: ToolSpec[]
}

export interface RecordedRequest {
  method: string
  path: string
  authorization: string | undefined
  /** Undefined when the body was not JSON. */
  body: ResponsesRequestBody | undefined
}

export interface ResponsesModel extends AsyncDisposable {
  /** The provider's `base_url`: clients append `/responses`. */
  readonly baseUrl: string
  readonly requests: readonly RecordedRequest[]
  /** `outputs[i]`: the text parts the client sent back for `calls[i]`, once it did. */
  readonly outputs: readonly (readonly string[] | undefined)[]
  close(): Promise<void>
}

/** The functions a request offered, namespaced ones as `{ namespace, name }`. */
export function offeredTools(body: ResponsesRequestBody): { namespace?: string; name: string }[] {
  const offered: { namespace?: string; name: string }[] = []
  for (const tool of body.tools ?? []) {
    if (tool.type === 'namespace' && tool.name !== undefined) {
      for (const member of tool.tools ?? [])
        if (member.name !== undefined) offered.push({ namespace: tool.name, name: member.name })
    } else if (tool.name !== undefined) {
      offered.push({ name: tool.name })
    }
  }
  return offered
}

const callId = (index: number) => `call_${index + 1}`

function textParts(output: InputItem['output']): string[] {
  if (typeof output === 'string') return [output]
  return (output ?? []).map((part) => part.text ?? '')
}

export async function startResponsesModel(script: {
  calls: readonly ToolCall[]
  finalText: string
}): Promise<ResponsesModel> {
  const requests: RecordedRequest[] = []
  const outputs: (string[] | undefined)[] = script.calls.map(() => undefined)
  let responses = 0

  function answer(body: ResponsesRequestBody, response: ServerResponse): void {
    for (const item of body.input) {
      const index = script.calls.findIndex((_, i) => callId(i) === item.call_id)
      if (item.type === 'function_call_output' && index >= 0 && outputs[index] === undefined)
        outputs[index] = textParts(item.output)
    }
    // The next call is the first whose output has not come back: a retried request gets the same call again.
    const next = outputs.indexOf(undefined)
    const id = `resp_${++responses}`
    const call = next >= 0 ? script.calls[next] : undefined
    const item = call
      ? {
          type: 'function_call',
          id: `fc_${next + 1}`,
          call_id: callId(next),
          name: call.name,
          ...(call.namespace === undefined ? {} : { namespace: call.namespace }),
          arguments: JSON.stringify(call.arguments),
          status: 'completed',
        }
      : {
          type: 'message',
          id: `msg_${responses}`,
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: script.finalText, annotations: [] }],
        }
    const usage = {
      input_tokens: 1,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 1,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 2,
    }
    const events = [
      { type: 'response.created', response: { id } },
      { type: 'response.output_item.done', output_index: 0, item },
      { type: 'response.completed', response: { id, usage } },
    ]
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
    for (const event of events) response.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`)
    response.end()
  }

  function handle(request: IncomingMessage, response: ServerResponse, text: string): void {
    let body: ResponsesRequestBody | undefined
    try {
      body = JSON.parse(text) as ResponsesRequestBody
    } catch {
      body = undefined
    }
    const path = request.url ?? ''
    requests.push({ method: request.method ?? '', path, authorization: request.headers.authorization, body })
    if (request.method === 'POST' && path.endsWith('/responses') && body) return answer(body, response)
    response
      .writeHead(404, { 'content-type': 'text/plain' })
      .end(`the stand-in model serves only POST /v1/responses with a JSON body, not ${request.method} ${path}`)
  }

  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => handle(request, response, Buffer.concat(chunks).toString('utf8')))
  })
  const { port, close } = await listenOnLoopback(server)
  return { baseUrl: `http://127.0.0.1:${port}/v1`, requests, outputs, close, [Symbol.asyncDispose]: close }
}
