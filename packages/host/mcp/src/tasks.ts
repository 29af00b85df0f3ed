import type { Context } from 'cordis'
import type {} from '@deepseek-ai/dsh-bash'

/** Calls `send(notice)` for every background task of `sessionId` that finishes; returns the disposer. */
export function onTaskDone(ctx: Context, sessionId: string, send: (notice: string) => void): () => void {
  const off = ctx.on('bash/task-done', (event) => {
    if (event.owner === sessionId) send(event.notice)
  })
  return () => void off()
}

/**
 * Kills the background tasks of `sessionId` that still run, and resolves once they are gone. A connection that
 * closes takes its session's tasks with it, even when the host serves other connections on (none without a
 * bash executor).
 */
export async function stopSessionTasks(ctx: Context, sessionId: string): Promise<void> {
  const bash = ctx.get('bash')
  if (!bash) return
  const mine = bash.list().filter((task) => task.status.state === 'running' && bash.ownerOf(task.id) === sessionId)
  await Promise.all(mine.map((task) => bash.kill(task.id).catch((error: { code?: string }) => {
    // Gone meanwhile, or the executor is being disposed (which kills every task itself): nothing left to do.
    if (error.code !== 'BASH_UNKNOWN_TASK' && error.code !== 'BASH_DISPOSED') throw error
    return false
  })))
}
