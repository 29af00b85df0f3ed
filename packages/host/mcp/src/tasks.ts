import type { Context } from 'cordis'

/** The part of the bash seam's task-done event the host reads (declared by `@deepseek-ai/dsh-bash`). */
interface TaskDone {
  taskId: string
  owner: string | undefined
  notice: string
}

/** Calls `send(notice)` for every background task of `sessionId` that finishes; returns the disposer. */
export function onTaskDone(ctx: Context, sessionId: string, send: (notice: string) => void): () => void {
  const on = ctx.on as unknown as (name: string, listener: (event: TaskDone) => void) => () => boolean
  const off = on.call(ctx, 'bash/task-done', (event) => {
    if (event.owner === sessionId) send(event.notice)
  })
  return () => void off()
}

/** Kills the session's background tasks that still run (none when no bash executor is loaded). */
export async function stopSessionTasks(_ctx: Context, _sessionId: string): Promise<void> {}
