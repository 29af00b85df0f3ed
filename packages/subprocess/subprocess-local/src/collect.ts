import { createWriteStream, unlink, type WriteStream } from 'node:fs'
import type { Readable } from 'node:stream'
import type { CollectedRead, CollectedStream, CollectOptions } from '@deepseek-ai/dsh-subprocess'
import { completeLength, cutPrefixLength } from '@deepseek-ai/dsh-text'
import type { SpillFile } from './output-dir.ts'
import { countNewlines, HeadBuffer, TailBuffer } from './tail.ts'

/** Creates a collector's spill file; throws when no file can be made. */
export type SpillFileFactory = () => SpillFile

/**
 * Collect mode for one output stream: an in-memory tail of `maxBytes`, optionally a head of `headBytes`, and, with
 * `spill`, the complete stream in a private file from the first overflow of the tail on. Reading never consumes;
 * reading is lossy once bytes after the reader's offset were dropped. Newlines are counted as the bytes pass, so the
 * line count of the whole stream is known even when most of it was dropped.
 */
export class Collector implements CollectedStream {
  private readonly tail: TailBuffer
  private readonly head: HeadBuffer
  private newlines = 0
  private lastByte = -1
  private readonly spillMax: number | undefined
  private spill: 'idle' | 'open' | 'dropped' = 'idle'
  private file: WriteStream | undefined
  private path: string | undefined
  private ended = false
  private source: Readable | undefined
  /** Resolves once the stream ended and the spill file (if any) is complete on disk or removed. */
  readonly finished: Promise<void>
  private finish!: () => void
  private pending = 1

  constructor(
    options: CollectOptions,
    private readonly makeSpillFile: SpillFileFactory,
  ) {
    this.tail = new TailBuffer(options.maxBytes)
    this.head = new HeadBuffer(options.headBytes ?? 0)
    this.spillMax = options.spill?.maxBytes
    this.finished = new Promise((resolve) => {
      this.finish = resolve
    })
  }

  get totalBytes(): number {
    return this.tail.total
  }

  get totalLines(): number {
    return this.newlines + (this.lastByte >= 0 && this.lastByte !== 0x0a ? 1 : 0)
  }

  get truncated(): boolean {
    return this.tail.start > this.head.length
  }

  get spillPath(): string | undefined {
    return this.spill === 'open' ? this.path : undefined
  }

  attach(source: Readable): void {
    this.source = source
    source.on('data', (chunk: Buffer) => this.write(chunk))
    const end = () => this.end()
    source.once('end', end)
    source.once('close', end)
    source.once('error', end)
  }

  /** Stops reading a stream that another process (outside the group) holds open. */
  abandon(): void {
    if (!this.ended) this.source?.destroy()
  }

  readFrom(offset: number): CollectedRead {
    const total = this.tail.total
    let from = Number.isFinite(offset) ? Math.min(Math.max(Math.floor(offset), 0), total) : 0
    const held = this.head.length
    let bytes: Buffer
    let lossy = false
    if (from < held && !this.truncated) {
      // Head and tail abut or overlap: every byte from `from` on is still here.
      bytes = Buffer.concat([this.head.bytesFrom(from), this.tail.bytesFrom(held)])
    } else {
      lossy = from < this.tail.start
      if (lossy) from = this.tail.start
      bytes = this.tail.bytesFrom(from)
    }
    const skip = from > 0 ? cutPrefixLength(bytes) : 0
    const end = Math.max(skip, this.ended ? bytes.length : completeLength(bytes))
    return this.withSpill({ text: bytes.toString('utf8', skip, end), nextOffset: from + end, lossy })
  }

  readHead(): CollectedRead {
    const bytes = this.head.bytesFrom(0)
    const whole = this.ended && bytes.length === this.tail.total
    const end = whole ? bytes.length : completeLength(bytes)
    return this.withSpill({ text: bytes.toString('utf8', 0, end), nextOffset: end, lossy: false })
  }

  private withSpill(read: CollectedRead): CollectedRead {
    const spillPath = this.spillPath
    if (spillPath !== undefined) read.spillPath = spillPath
    return read
  }

  private write(chunk: Buffer): void {
    if (this.spillMax !== undefined && this.spill !== 'dropped') {
      const after = this.tail.total + chunk.length
      if (after > this.spillMax) this.dropSpill()
      else if (this.spill === 'open') this.toFile(chunk)
      else if (after > this.tail.capacity) this.openSpill(chunk)
    }
    if (chunk.length > 0) {
      this.newlines += countNewlines(chunk)
      this.lastByte = chunk[chunk.length - 1]!
    }
    if (!this.head.full) this.head.push(chunk)
    this.tail.push(chunk)
  }

  private openSpill(chunk: Buffer): void {
    let spillFile: SpillFile
    try {
      spillFile = this.makeSpillFile()
    } catch {
      this.spill = 'dropped'
      return
    }
    const { path, fd } = spillFile
    this.path = path
    this.spill = 'open'
    this.pending++
    const file = createWriteStream(path, { fd })
    this.file = file
    file.on('error', () => this.dropSpill())
    file.once('close', () => {
      if (this.spill === 'dropped') unlink(path, () => this.settle())
      else this.settle()
    })
    // Everything so far is still in the tail (no overflow yet): it goes first, so the file is the whole stream.
    this.toFile(this.tail.bytesFrom(0))
    this.toFile(chunk)
  }

  private toFile(chunk: Buffer): void {
    const file = this.file
    if (!file || file.write(chunk)) return
    // Bounded memory: stop reading the child while the file's own buffer is full (the child then blocks).
    const source = this.source
    if (!source || source.isPaused()) return
    source.pause()
    file.once('drain', () => source.resume())
  }

  private dropSpill(): void {
    const wasOpen = this.spill === 'open'
    this.spill = 'dropped'
    if (!wasOpen) return
    this.file?.destroy()
    this.file = undefined
    if (this.source?.isPaused()) this.source.resume()
  }

  private end(): void {
    if (this.ended) return
    this.ended = true
    this.file?.end()
    this.settle()
  }

  private settle(): void {
    if (--this.pending === 0) this.finish()
  }
}
