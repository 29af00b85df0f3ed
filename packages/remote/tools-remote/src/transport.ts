import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import type { ExitStatus, SubprocessHandle } from '@deepseek-ai/dsh-subprocess'

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
  private readonly buffer = new ReadBuffer()
  private closed = false

  constructor(private readonly handle: SubprocessHandle, private readonly graceMs: number) {}

  async start(): Promise<void> {
    const { stdout, stdin } = this.handle
    if (!stdout || !stdin) throw new Error('the remote command was started without pipes')
    stdout.on('data', (chunk: Buffer) => {
      this.buffer.append(chunk)
      for (;;) {
        let message: JSONRPCMessage | null
        try {
          message = this.buffer.readMessage()
        } catch (error) {
          // A line that is not JSON-RPC (a login banner, a remote rc file that prints): skip it, keep the stream.
          this.onerror?.(new Error(`the remote wrote a line that is not JSON-RPC: ${(error as Error).message}`))
          continue
        }
        if (message === null) break
        this.onmessage?.(message)
      }
    })
    stdout.on('error', (error) => this.onerror?.(error))
    stdin.on('error', (error) => this.onerror?.(error))
    stdout.on('close', () => this.finish())
    void this.handle.done.then((status) => {
      this.exit = status
      this.finish()
    })
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.handle.stdin
    if (this.closed || !stdin || stdin.destroyed || stdin.writableEnded) return Promise.reject(new Error('the connection is closed'))
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
      new Promise<false>((resolve) => { timer = setTimeout(() => resolve(false), this.graceMs) }),
    ])
    clearTimeout(timer)
    if (!exited) this.handle.terminate()
    await this.handle.waitForExit()
    this.finish()
  }

  private finish(): void {
    if (this.closed) return
    this.closed = true
    this.buffer.clear()
    this.onclose?.()
  }
}
