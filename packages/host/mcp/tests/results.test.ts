import { expect, test } from 'vitest'
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js'
import { createTestContext, sessionFor } from '@deepseek-ai/dsh-testing'
import { toCallToolResult } from '../src/results.ts'

test('a result with an image goes on the wire as its text block, then an MCP image block', () => {
  const wire = toCallToolResult({
    content: [
      { type: 'text', text: 'Image /w/a.png (image/png, 3 bytes)' },
      { type: 'image', data: 'AAEC', mimeType: 'image/png' },
    ],
    isError: false,
  })
  expect(wire).toEqual({
    content: [
      { type: 'text', text: 'Image /w/a.png (image/png, 3 bytes)' },
      { type: 'image', data: 'AAEC', mimeType: 'image/png' },
    ],
    isError: false,
  })
  expect(CallToolResultSchema.safeParse(wire).success).toBe(true)
})

test('a session notice joins the text of an image result and keeps the image', async () => {
  const t = await createTestContext()
  try {
    t.ctx.tools.register({
      name: 'picture',
      description: 'An image.',
      parameters: { type: 'object', properties: {}, additionalProperties: false },
      execute: () => ({ text: 'Image x', images: [{ type: 'image', data: 'AAEC', mimeType: 'image/gif' }] }),
    })
    const session = sessionFor('s', '/')
    t.ctx.tools.notify({ session, text: 'background task bash-1 finished' })
    const result = await t.ctx.tools.execute('picture', {}, { session })
    expect(result.content).toEqual([
      { type: 'text', text: 'Image x\n\nbackground task bash-1 finished' },
      { type: 'image', data: 'AAEC', mimeType: 'image/gif' },
    ])
  } finally {
    await t.dispose()
  }
})
