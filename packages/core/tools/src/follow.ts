import type { Context } from 'cordis'

/**
 * The current provider of an optional service that a plugin asks for on every call, followed as providers come and
 * go (Cordis' `internal/service` event): a context lookup builds a traced proxy each time, about as much as a file
 * tool's whole policy costs.
 */
export function followService<K extends keyof Context & string>(ctx: Context, name: K): () => Context[K] | undefined {
  let current: Context[K] | undefined = ctx.get(name)
  ctx.on('internal/service', (changed) => {
    if (changed === name) current = ctx.get(name)
  })
  return () => current
}
