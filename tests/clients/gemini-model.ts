import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { listenOnLoopback } from './clients.ts'

/**
 * A scripted stand-in for the Gemini API (generativelanguage.googleapis.com) on 127.0.0.1, for driving the real
 * Gemini CLI offline (GOOGLE_GEMINI_BASE_URL points it here). Every request is recorded. A conversation turn
 * (`streamGenerateContent?alt=sse` or `generateContent` with function declarations) is answered from the script:
 * the next scripted function call while one is left, then a short final text. Each functionResponse that comes back
 * is recorded once.
 */

export interface ScriptedCall {
  readonly name: string
  readonly args: Readonly<Record<string, unknown>>
}

export interface FunctionDeclaration {
  readonly name: string
  readonly description?: string
  readonly parameters?: unknown
  readonly parametersJsonSchema?: unknown
}

export interface FunctionResponsePart {
  readonly id?: string
  readonly name: string
  readonly response: Readonly<Record<string, unknown>>
}

interface Part {
  readonly text?: string
  readonly functionCall?: { readonly name: string; readonly args?: Readonly<Record<string, unknown>> }
  readonly functionResponse?: FunctionResponsePart
}

interface Content {
  readonly role?: string
  readonly parts?: readonly Part[]
}

/** The fields of a generateContent / countTokens request body that the stand-in reads. */
export interface GenerateRequestBody {
  readonly contents?: readonly Content[]
  readonly tools?: readonly { readonly functionDeclarations?: readonly FunctionDeclaration[] }[]
  readonly generationConfig?: Readonly<Record<string, unknown>>
}

export interface RecordedRequest {
  readonly method: string
  /** Path and query, e.g. `/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse`. */
  readonly url: string
  /** The model named in the path, or '' when none is. */
  readonly model: string
  /** What comes after the `:` in the path (`streamGenerateContent`, `generateContent`, `countTokens`), or ''. */
  readonly action: string
  readonly headers: Readonly<Record<string, string | string[] | undefined>>
  readonly body: GenerateRequestBody | undefined
  /** What the stand-in answered: `call <name>`, `text`, `json` (a side request's schema), `tokens`, or `404`. */
  readonly answer: string
}

export interface GeminiModel extends AsyncDisposable {
  /** The base URL to give the CLI as GOOGLE_GEMINI_BASE_URL. */
  readonly url: string
  readonly requests: readonly RecordedRequest[]
  /** Every functionResponse that came back, in order, each once. */
  readonly functionResponses: readonly FunctionResponsePart[]
  /** The function declarations of the first conversation turn (those offered to the model). */
  declarations(): readonly FunctionDeclaration[]
  close(): Promise<void>
}

interface Schema {
  readonly type?: string
  readonly enum?: readonly unknown[]
  readonly properties?: Readonly<Record<string, Schema>>
}

/** A minimal value of a JSON schema (types as `OBJECT` or `object`): the first enum value, 1, 'stand-in', [], false. */
function sample(schema: Schema): unknown {
  if (schema.enum?.length) return schema.enum[0]
  switch (schema.type?.toLowerCase()) {
    case 'object':
      return Object.fromEntries(Object.entries(schema.properties ?? {}).map(([key, value]) => [key, sample(value)]))
    case 'array':
      return []
    case 'integer':
    case 'number':
      return 1
    case 'boolean':
      return false
    case 'string':
      return 'stand-in'
    default:
      return null
  }
}

const PATH = /^\/[^/]+\/models\/([^:/?]+):([A-Za-z]+)/

/** Starts the stand-in; it makes `calls` in order, one per turn, then answers `finalText`. */
export async function startGeminiModel(options: {
  calls: readonly ScriptedCall[]
  finalText: string
}): Promise<GeminiModel> {
  const requests: RecordedRequest[] = []
  const functionResponses: FunctionResponsePart[] = []
  const seen = new Set<string>()

  // The number of scripted calls already made is the number of model turns with a function call in the history,
  // so a retried request gets the same answer.
  function nextCall(body: GenerateRequestBody): ScriptedCall | undefined {
    const made = (body.contents ?? []).filter(
      (content) => content.role === 'model' && content.parts?.some((part) => part.functionCall),
    ).length
    return options.calls[made]
  }

  function recordResponses(body: GenerateRequestBody): void {
    for (const content of body.contents ?? []) {
      for (const part of content.parts ?? []) {
        if (!part.functionResponse) continue
        const key = JSON.stringify(part.functionResponse)
        if (seen.has(key)) continue
        seen.add(key)
        functionResponses.push(part.functionResponse)
      }
    }
  }

  function turn(body: GenerateRequestBody, model: string): { answer: string; response: unknown } {
    const usageMetadata = { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 }
    const isConversation = (body.tools ?? []).some((tool) => (tool.functionDeclarations ?? []).length > 0)
    const call = isConversation ? nextCall(body) : undefined
    // A side request asking for JSON (the CLI's model router rates the prompt's complexity) gets a minimal
    // object of its schema, so it does not retry.
    const schema = (body.generationConfig?.responseJsonSchema ?? body.generationConfig?.responseSchema) as
      | Schema
      | undefined
    const parts: Part[] = call
      ? [{ functionCall: { name: call.name, args: call.args } }]
      : [{ text: schema ? JSON.stringify(sample(schema)) : options.finalText }]
    return {
      answer: call ? `call ${call.name}` : schema ? 'json' : 'text',
      response: {
        candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
        usageMetadata,
        modelVersion: model,
      },
    }
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = []
    for await (const chunk of request) chunks.push(chunk as Buffer)
    const text = Buffer.concat(chunks).toString('utf8')
    const body = text ? (JSON.parse(text) as GenerateRequestBody) : undefined
    const url = request.url ?? ''
    const [, model = '', action = ''] = PATH.exec(url) ?? []
    const record = (answer: string) =>
      requests.push({ method: request.method ?? '', url, model, action, headers: request.headers, body, answer })
    if (body) recordResponses(body)

    if (request.method === 'POST' && action === 'streamGenerateContent' && body) {
      const { answer, response: chunk } = turn(body, model)
      record(answer)
      response.writeHead(200, { 'content-type': 'text/event-stream' })
      response.end(`data: ${JSON.stringify(chunk)}\r\n\r\n`)
    } else if (request.method === 'POST' && action === 'generateContent' && body) {
      const { answer, response: json } = turn(body, model)
      record(answer)
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end(JSON.stringify(json))
    } else if (request.method === 'POST' && action === 'countTokens') {
      record('tokens')
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end(JSON.stringify({ totalTokens: 10 }))
    } else {
      record('404')
      response.writeHead(404, { 'content-type': 'application/json' })
      response.end(
        JSON.stringify({
          error: {
            code: 404,
            message: `the stand-in Gemini API does not serve ${request.method ?? ''} ${url}`,
            status: 'NOT_FOUND',
          },
        }),
      )
    }
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      response.writeHead(500, { 'content-type': 'application/json' })
      response.end(JSON.stringify({ error: { code: 500, message: String(error), status: 'INTERNAL' } }))
    })
  })
  const { port, close } = await listenOnLoopback(server)

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    functionResponses,
    declarations() {
      const first = requests.find(
        (request) => request.answer.startsWith('call ') || (request.body?.tools ?? []).length > 0,
      )
      return (first?.body?.tools ?? []).flatMap((tool) => tool.functionDeclarations ?? [])
    },
    close,
    [Symbol.asyncDispose]: close,
  }
}
