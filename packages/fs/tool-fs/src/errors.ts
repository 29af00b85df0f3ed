import { HarnessError } from '@deepseek-ai/dsh-tools'

export const FsErrorCode = {
  /** The file does not exist, or the offset is past its end. */
  FS_NOT_FOUND: 'FS_NOT_FOUND',
  /** A directory, device, FIFO or socket. */
  FS_NOT_REGULAR_FILE: 'FS_NOT_REGULAR_FILE',
  /** Binary (a NUL byte in the first 8 KiB) or not valid UTF-8. */
  FS_NOT_TEXT: 'FS_NOT_TEXT',
  /** read of an image larger than maxImageBytes. */
  FS_IMAGE_TOO_LARGE: 'FS_IMAGE_TOO_LARGE',
  /** The file exists but could not be read (permission denied, I/O error…). */
  FS_READ_FAILED: 'FS_READ_FAILED',
  /** write/edit of an existing file this session has not seen (read, written or edited). */
  FS_NOT_READ: 'FS_NOT_READ',
  /** write/edit of a file whose bytes changed since this session last saw them. */
  FS_STALE: 'FS_STALE',
  /** edit: old_string occurs nowhere, even with other line endings or without read's "N: " prefixes. */
  FS_NO_MATCH: 'FS_NO_MATCH',
  /** edit: old_string occurs more than once and replace_all is not set. */
  FS_MANY_MATCHES: 'FS_MANY_MATCHES',
  /** write/edit of a file, or of new content, larger than `editMaxBytes` (the file is left as it was). */
  FS_TOO_LARGE: 'FS_TOO_LARGE',
  /** apply_patch: the patch does not follow the format, changes a file twice, or moves a file onto another. */
  FS_PATCH_INVALID: 'FS_PATCH_INVALID',
  /** write/edit could not write the new content (the file is left as it was). */
  FS_WRITE_FAILED: 'FS_WRITE_FAILED',
} as const
export type FsErrorCode = (typeof FsErrorCode)[keyof typeof FsErrorCode]

export class FsError extends HarnessError {
  override name = 'FsError'
}
