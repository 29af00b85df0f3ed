import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { listenOnLoopback } from './clients.ts'

/**
 * A scripted stand-in for an OpenAI-compatible chat completions API (`POST <baseURL>/chat/completions`), so that a
 * real agent CLI can be driven without a model: it answers from a script and records every request it got.
 * HTTP on 127.0.0.1 only, a free port.
 */

/** One step of the script: the model calls `tool` (by the name the client offered it under) with `arguments`. */
export interface ToolCallStep {
  tool: string
  arguments: Record<string, unknown>
}

export interface ChatModelScript {
  /** Called in order, one per turn; a step is due until a request carries the `role: "tool"` answer to it. */
  steps: readonly ToolCallStep[]
  /** The text of the last turn, once every step was answered. */
  reply: string
  /** The text of a request that offers no tools (a client's side request, such as a session title). */
  sideReply: string
}

export interface ChatToolCall {
  id: string
  type: 'function'
  function: { name: string; arguments: string }
}

export interface ChatContentPart {
  type: string
  text?: string
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool'
  content?: string | ChatContentPart[] | null
  tool_calls?: ChatToolCall[]
  tool_call_id?: string
}

export interface ChatTool {
  type: 'function'
  function: { name: string; description?: string; parameters?: unknown }
}

export interface ChatRequest {
  model: string
  messages: ChatMessage[]
  tools?: ChatTool[]
  stream?: boolean
}

/** A request as it arrived; `body` is the parsed JSON of a chat completions request, else undefined. */
export interface RecordedRequest {
  method: string
  path: string
  body: ChatRequest | undefined
  /** What the stand-in answered: a step's tool call, the final reply, a side reply, or an HTTP error. */
  answer:
    | { kind: 'tool-call'; step: ToolCallStep; id: string }
    | { kind: 'reply' | 'side-reply'; text: string }
    | { kind: 'error'; status: number }
}

/** The answer to one step, as the client sent it back in its `role: "tool"` message. */
export interface ToolResult {
  step: ToolCallStep
  id: string
  content: string
}

export interface ChatModel extends AsyncDisposable {
  /** For an OpenAI-compatible provider: `http://127.0.0.1:<port>/v1`. */
  baseURL: string
  requests: RecordedRequest[]
  /** Each step's result, once, in the order they arrived. */
  toolResults: ToolResult[]
  close(): Promise<void>
}

const callId = (index: number) => `call_${index + 1}`

/** The text of a message's content, whether a string or text parts. */
export function textOf(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content
  return (content ?? []).map((part) => part.text ?? '').join('')
}

export async function startChatModel(script: ChatModelScript): Promise<ChatModel> {
  const requests: RecordedRequest[] = []
  const toolResults: ToolResult[] = []

  function answer(body: ChatRequest): RecordedRequest['answer'] {
    if (!body.tools?.length) return { kind: 'side-reply', text: script.sideReply }
    const answered = new Map(
      body.messages
        .filter((m) => m.role === 'tool' && m.tool_call_id !== undefined)
        .map((m) => [m.tool_call_id!, textOf(m.content)]),
    )
    for (const [index, step] of script.steps.entries()) {
      const id = callId(index)
      const content = answered.get(id)
      if (content === undefined) return { kind: 'tool-call', step, id }
      if (!toolResults.some((r) => r.id === id)) toolResults.push({ step, id, content })
    }
    return { kind: 'reply', text: script.reply }
  }

  const server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' })
      res.end(String(error))
    })
  })

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const path = (req.url ?? '/').split('?')[0]!
    const method = req.method ?? 'GET'
    if (method !== 'POST' || !path.endsWith('/chat/completions')) {
      requests.push({ method, path, body: undefined, answer: { kind: 'error', status: 404 } })
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { message: `no such endpoint: ${method} ${path}` } }))
      return
    }
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatRequest
    const reply = answer(body)
    requests.push({ method, path, body, answer: reply })
    const call: ChatToolCall | undefined =
      reply.kind === 'tool-call'
        ? {
            id: reply.id,
            type: 'function',
            function: { name: reply.step.tool, arguments: JSON.stringify(reply.step.arguments) },
          }
        : undefined
    const text = reply.kind === 'reply' || reply.kind === 'side-reply' ? reply.text : ''
    const finish = call ? 'tool_calls' : 'stop'
    const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }
    const head = { id: `chatcmpl-${requests.length}`, created: Math.floor(Date.now() / 1000), model: body.model }
    if (!body.stream) {
      const message = call
        ? { role: 'assistant', content: null, tool_calls: [call] }
        : { role: 'assistant', content: text }
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(
        JSON.stringify({
          ...head,
          object: 'chat.completion',
          choices: [{ index: 0, message, finish_reason: finish }],
          usage,
        }),
      )
      return
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' })
    const send = (data: unknown) => res.write(`data: ${JSON.stringify(data)}\n\n`)
    const chunk = (delta: unknown, finishReason: string | null) => ({
      ...head,
      object: 'chat.completion.chunk',
      choices: [{ index: 0, delta, finish_reason: finishReason }],
    })
    if (call) {
      // The name first, the arguments in a later delta, as real endpoints stream them.
      send(
        chunk(
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { index: 0, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } },
            ],
          },
          null,
        ),
      )
      send(chunk({ tool_calls: [{ index: 0, function: { arguments: call.function.arguments } }] }, null))
    } else {
      send(chunk({ role: 'assistant', content: text }, null))
    }
    send({ ...chunk({}, finish), usage })
    res.end('data: [DONE]\n\n')
  }

  const { port, close } = await listenOnLoopback(server)
  return { baseURL: `http://127.0.0.1:${port}/v1`, requests, toolResults, close, [Symbol.asyncDispose]: close }
}
