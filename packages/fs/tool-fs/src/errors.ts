import { HarnessError } from '@deepseek-ai/dsh-tools'

export const FsErrorCode = {
  /** The file does not exist, or the offset is past its end. */
  FS_NOT_FOUND: 'FS_NOT_FOUND',
  /** A directory, device, FIFO or socket. */
  FS_NOT_REGULAR_FILE: 'FS_NOT_REGULAR_FILE',
  /** Binary (a NUL byte in the first 8 KiB) or not valid UTF-8. */
  FS_NOT_TEXT: 'FS_NOT_TEXT',
  /** The file exists but could not be read (permission denied, I/O error…). */
  FS_READ_FAILED: 'FS_READ_FAILED',
} as const
export type FsErrorCode = (typeof FsErrorCode)[keyof typeof FsErrorCode]

export class FsError extends HarnessError {
  override name = 'FsError'
}
