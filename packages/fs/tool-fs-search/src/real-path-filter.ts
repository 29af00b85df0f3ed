import { realpathSync } from 'node:fs'
import { checkReal, type OpenOptions, WorkspaceError } from '@deepseek-ai/dsh-workspace'
import { within } from '@deepseek-ai/dsh-tools'
import type { MatchSink } from './records.ts'

/**
 * On the host (no sandbox), ripgrep walks below the verified root by path: a directory swapped for a link while it
 * walks leads it out of the root. Before a file's rows are kept, the real path of what it printed is judged by the
 * workspace policy (docs/security.md#boundary): hidden, or outside every root, and the file has no rows. The directory's real path
 * is resolved once per directory and call (ripgrep follows no link to a file during a walk). This narrows the race;
 * only the sandbox closes it (docs/security.md).
 */
export class RealPathFilter {
  /** Per directory printed: its real path, and the options judged with (the rules that can match inside it). */
  private readonly dirs = new Map<string, { real: string; options: OpenOptions } | undefined>()

  /** `base`: the opened root's /proc path; `options`: the policy and the tool, as the root was checked. */
  constructor(
    private readonly base: string,
    private readonly options: OpenOptions,
  ) {}

  /** Whether the file at `key` below the root (its bytes as latin1, see pathKey) may be shown. */
  allows(key: string): boolean {
    const slash = key.lastIndexOf('/')
    const dir = slash === -1 ? '' : key.slice(0, slash)
    let known = this.dirs.get(dir)
    if (!this.dirs.has(dir)) {
      known = this.directory(dir)
      this.dirs.set(dir, known)
    }
    // Gone (or moved) since ripgrep read it: where it was cannot be told, so nothing of it is shown.
    if (known === undefined) return false
    try {
      checkReal(`${known.real}/${Buffer.from(key.slice(slash + 1), 'latin1').toString('utf8')}`, known.options)
      return true
    } catch (error) {
      if (error instanceof WorkspaceError) return false
      throw error
    }
  }

  /**
   * A printed directory's real path, and the options its files are judged with: a rule hides an entry below its
   * parent only, so only the rules whose parent is the directory or above it can match a file in it (a file list of
   * thousands was judged against every credential store of every home, one by one).
   */
  private directory(dir: string): { real: string; options: OpenOptions } | undefined {
    let real: string
    try {
      real = realpathSync.native(Buffer.from(dir === '' ? this.base : `${this.base}/${dir}`, 'latin1'))
    } catch {
      return undefined
    }
    const policy = this.options.policy
    if (!policy) return { real, options: this.options }
    const rules = policy.rules.filter((rule) => within(real, rule.parent))
    return { real, options: { ...this.options, policy: { ...policy, rules } } }
  }

  /** `sink` without the matches of the files this filter refuses. */
  sink(sink: MatchSink): MatchSink {
    let dropping = false
    return {
      file: (key, path) => {
        dropping = !this.allows(key)
        if (!dropping) sink.file(key, path)
      },
      line: (line) => {
        if (!dropping) sink.line(line)
      },
      ...(sink.utf8Line === undefined
        ? {}
        : {
            utf8Line: (line, bytes, start, end) => {
              if (!dropping) sink.utf8Line?.(line, bytes, start, end)
            },
          }),
      // Lines around matches (grep's context) go with their file's matches.
      ...(sink.context === undefined
        ? {}
        : {
            context: (line) => {
              if (!dropping) sink.context?.(line)
            },
          }),
    }
  }
}
