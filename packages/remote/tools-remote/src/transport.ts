import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { deserializeMessage, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import type { ExitStatus, SubprocessHandle } from '@deepseek-ai/dsh-subprocess'
import { LineSplitter } from '@deepseek-ai/dsh-mcp-wire'
import { charBoundary, clip, decodeLossy } from '@deepseek-ai/dsh-text'
import type { NoiseFacts } from './text.ts'

/**
 * The client side of MCP's stdio framing over a process started through `ctx.subprocess` (newline-delimited
 * JSON-RPC on its stdin/stdout). Unlike the SDK's stdio client transport, the process is the leader of its own
 * process group, tracked by the provider, and terminated as a group: an `ssh` and anything it started never
 * outlive the connection.
 */
export class ProcessTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void
  /** Set once the process has exited (with its status). */
  exit: ExitStatus | undefined
  /** The lines on stdout that were not JSON-RPC messages: how many, and the first (clipped), for error texts. */
  readonly noise: NoiseFacts = { lines: 0, first: undefined }
  private readonly lines = new LineSplitter(
    MAX_LINE_BYTES,
    (line) => this.line(line),
    (head) => this.tooLong(head),
  )
  private closed = false

  constructor(
    private readonly handle: SubprocessHandle,
    private readonly graceMs: number,
  ) {}

  async start(): Promise<void> {
    const { stdout, stdin } = this.handle
    if (!stdout || !stdin) throw new Error('the remote command was started without pipes')
    stdout.on('data', (chunk: Buffer) => this.lines.push(chunk))
    stdout.on('error', (error) => this.onerror?.(error))
    stdin.on('error', (error) => this.onerror?.(error))
    stdout.on('close', () => this.finish())
    void this.handle.done.then((status) => {
      this.exit = status
      this.finish()
    })
  }

  /**
   * One line of stdout. Only a line that opens a JSON object can be a message; anything else (a login banner, an rc
   * file that prints, a remote that is no dsh) is skipped and counted without being parsed, so a flood costs a
   * byte check per line, not an exception.
   */
  private line(line: Buffer): void {
    const start = firstNonBlank(line)
    if (start === line.length) return
    if (line[start] !== OPEN_BRACE) return this.skip(line)
    let message: JSONRPCMessage
    try {
      message = deserializeMessage(line.toString('utf8'))
    } catch {
      return this.skip(line)
    }
    this.onmessage?.(message)
  }

  private skip(line: Buffer): void {
    this.noise.first ??= clipLine(line)
    this.report(`the remote wrote a line that is not JSON-RPC: ${JSON.stringify(clipLine(line))}`)
  }

  private tooLong(head: Buffer): void {
    this.noise.first ??= clipLine(head)
    this.report(
      `the remote wrote a line longer than ${MAX_LINE_BYTES} bytes, which no MCP message of a dsh is: dropped`,
    )
  }

  /** Logs the first few skipped lines, then says once that the rest are only counted. */
  private report(text: string): void {
    this.noise.lines++
    if (this.noise.lines <= LOGGED_NOISE_LINES) this.onerror?.(new Error(text))
    else if (this.noise.lines === LOGGED_NOISE_LINES + 1)
      this.onerror?.(
        new Error('the remote keeps writing lines that are not JSON-RPC: the rest are counted, not logged'),
      )
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.handle.stdin
    if (this.closed || !stdin || stdin.destroyed || stdin.writableEnded)
      return Promise.reject(new Error('the connection is closed'))
    return new Promise((resolve, reject) => {
      // Resolve once written (or buffered under the high-water mark); a write error rejects.
      const ok = stdin.write(serializeMessage(message), (error) => (error ? reject(error) : undefined))
      if (ok) resolve()
      else stdin.once('drain', resolve)
    })
  }

  /**
   * Ends the remote's stdin (a `dsh mcp` then stops everything it started and exits; ssh carries the EOF
   * across), waits `graceMs` for the process to exit, then terminates its whole group and waits for it.
   */
  async close(): Promise<void> {
    this.handle.stdin?.end()
    let timer: NodeJS.Timeout | undefined
    const exited = await Promise.race([
      this.handle.done.then(() => true),
      new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), this.graceMs)
      }),
    ])
    clearTimeout(timer)
    if (!exited) this.handle.terminate()
    await this.handle.waitForExit()
    this.finish()
  }

  private finish(): void {
    if (this.closed) return
    this.closed = true
    this.lines.clear()
    this.onclose?.()
  }
}

/** Longest stdout line taken for a message. A dsh's results are bounded far below; a longer line is dropped. */
export const MAX_LINE_BYTES = 16 * 1024 * 1024
/** Skipped lines logged one by one before the rest are only counted. */
const LOGGED_NOISE_LINES = 3
/** Most bytes of a skipped line that a log line or an error text repeats. */
const NOISE_QUOTE_BYTES = 60
const OPEN_BRACE = 0x7b

function firstNonBlank(line: Buffer): number {
  let at = 0
  while (at < line.length && (line[at] === 0x20 || line[at] === 0x09 || line[at] === 0x0d)) at++
  return at
}

function clipLine(line: Buffer): string {
  const text = decodeLossy(line, 0, charBoundary(line, Math.min(line.length, NOISE_QUOTE_BYTES + 4))).replace(/\r$/, '')
  return clip(text, NOISE_QUOTE_BYTES)
}
