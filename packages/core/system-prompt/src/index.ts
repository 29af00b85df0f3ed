import { type Context, Service } from 'cordis'

declare module 'cordis' {
  interface Context {
    systemPrompt: SystemPromptService
  }
}

export interface PromptSection {
  /** Unique; tools use `tool:<name>`. */
  readonly id: string
  /** Ascending; ties are broken by id so the assembled text never depends on load order. */
  readonly order: number
  readonly text: string
}

/** `ctx.systemPrompt`: ordered sections that plugins contribute for as long as they live. */
export class SystemPromptService extends Service {
  static readonly provide = 'systemPrompt'
  private readonly sections = new Map<string, PromptSection>()

  constructor(ctx: Context) {
    super(ctx, 'systemPrompt')
  }

  register(section: PromptSection): () => Promise<void> {
    if (this.sections.has(section.id)) throw new Error(`a prompt section with id "${section.id}" is already registered`)
    if (!Number.isFinite(section.order)) throw new Error(`prompt section "${section.id}" needs a finite order`)
    const frozen: PromptSection = Object.freeze({ id: section.id, order: section.order, text: section.text })
    return this.ctx.effect(() => {
      this.sections.set(frozen.id, frozen)
      return () => {
        if (this.sections.get(frozen.id) === frozen) this.sections.delete(frozen.id)
      }
    }, `systemPrompt.register(${frozen.id})`)
  }

  list(): PromptSection[] {
    return [...this.sections.values()].sort((a, b) => a.order - b.order || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  }

  /** The sections' texts in order, separated by a blank line. */
  assemble(): string {
    return this.list()
      .map((section) => section.text.trim())
      .filter(Boolean)
      .join('\n\n')
  }
}

export default SystemPromptService
