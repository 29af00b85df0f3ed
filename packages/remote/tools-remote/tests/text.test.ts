import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js'
import { instructionsPreamble } from '@deepseek-ai/dsh-mcp-wire'
import {
  endpointLabel,
  httpReason,
  remotePrompt,
  resultText,
  splitCommandLine,
  stderrSummary,
  toolAnnotations,
  toolTitle,
  unavailableText,
} from '../src/index.ts'

/** How a POSIX shell user quotes any word: single quotes, with ' written as '\''. */
const quote = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`

describe('splitCommandLine', () => {
  test('splits like a shell, without expanding anything', () => {
    expect(splitCommandLine('ssh -T host dsh mcp --cwd /repo')).toEqual([
      'ssh',
      '-T',
      'host',
      'dsh',
      'mcp',
      '--cwd',
      '/repo',
    ])
    expect(splitCommandLine(`kubectl exec -i pod -- sh -c 'cd /w && dsh mcp'`)).toEqual([
      'kubectl',
      'exec',
      '-i',
      'pod',
      '--',
      'sh',
      '-c',
      'cd /w && dsh mcp',
    ])
    expect(splitCommandLine(`docker exec -i "my box" dsh mcp --cwd "$HOME/x" a\\ b`)).toEqual([
      'docker',
      'exec',
      '-i',
      'my box',
      'dsh',
      'mcp',
      '--cwd',
      '$HOME/x',
      'a b',
    ])
    expect(splitCommandLine(`a "" '' b`)).toEqual(['a', '', '', 'b'])
    expect(splitCommandLine(`"say \\"hi\\" \\\\ \\n"`)).toEqual(['say "hi" \\ \\n'])
  })

  test('a line it cannot split says why', () => {
    expect(splitCommandLine('ssh "host')).toEqual({ problem: 'the command has an unclosed double quote' })
    expect(splitCommandLine("ssh 'host")).toEqual({ problem: 'the command has an unclosed single quote' })
    expect(splitCommandLine('ssh host\\')).toEqual({ problem: 'the command ends with a lone backslash' })
    expect(splitCommandLine('  \t ')).toEqual({ problem: 'the command is empty' })
  })

  test('any argv, each word single-quoted and joined by spaces, splits back to itself', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'grapheme' }), { minLength: 1, maxLength: 8 }), (argv) => {
        expect(splitCommandLine(argv.map(quote).join(' '))).toEqual(argv)
      }),
      { numRuns: 300 },
    )
  })

  test('an argv of plain words needs no quotes, and endpointLabel quotes only the words that need it', () => {
    fc.assert(
      fc.property(fc.array(fc.stringMatching(/^[\w@%+=:,./-]+$/), { minLength: 1, maxLength: 8 }), (argv) => {
        expect(splitCommandLine(argv.join(' '))).toEqual(argv)
        expect(endpointLabel({ command: argv })).toBe(argv.join(' '))
      }),
      { numRuns: 200 },
    )
    fc.assert(
      fc.property(fc.array(fc.string(), { minLength: 1, maxLength: 6 }), (argv) => {
        expect(splitCommandLine(endpointLabel({ command: argv }))).toEqual(argv)
      }),
      { numRuns: 300 },
    )
  })
})

describe('texts', () => {
  test('an endpoint is named by its command line, or its URL without credentials or query', () => {
    expect(endpointLabel({ command: ['ssh', '-T', 'box', 'sh', '-c', 'cd /w && dsh mcp'] })).toBe(
      "ssh -T box sh -c 'cd /w && dsh mcp'",
    )
    expect(endpointLabel({ url: 'https://me:secret@box.example:8765/mcp?token=x#y' })).toBe(
      'https://box.example:8765/mcp',
    )
  })

  test('stderr is summarised as its last three lines, bounded', () => {
    expect(stderrSummary('\n  one\ntwo\n\nthree\nfour\n')).toBe('two / three / four')
    expect(stderrSummary('x'.repeat(1000), 10)).toBe(`…${'x'.repeat(9)}`)
    expect(stderrSummary('')).toBe('')
  })

  test('REMOTE_UNAVAILABLE texts say what failed, how the command ended, and that the next call retries', () => {
    expect(
      unavailableText.spawnFailed('ssh box dsh mcp', 'cannot start "ssh": ENOENT (no such file or directory)'),
    ).toBe(
      'remote unavailable: the remote command ssh box dsh mcp could not start: cannot start "ssh": ENOENT (no such file or directory). The next call tries to connect again.',
    )
    expect(
      unavailableText.handshakeFailed('ssh box dsh mcp', 'the command ended before the MCP handshake completed', {
        exitCode: 127,
        signal: null,
        stderr: 'bash: line 1: dsh: command not found\n',
      }),
    ).toBe(
      'remote unavailable: no MCP connection to ssh box dsh mcp: the command ended before the MCP handshake completed (the command exited with code 127: bash: line 1: dsh: command not found). The next call tries to connect again.',
    )
    expect(unavailableText.handshakeTimeout('ssh box dsh mcp', 30000)).toBe(
      'remote unavailable: ssh box dsh mcp did not complete the MCP handshake within 30000ms. The next call tries to connect again.',
    )
    expect(unavailableText.handshakeTimeout('ssh box dsh mcp', 30000, undefined, { lines: 1234567, first: 'y' })).toBe(
      'remote unavailable: ssh box dsh mcp did not complete the MCP handshake within 30000ms; its stdout held 1234567 lines that are not JSON-RPC, the first: "y" (is the command a dsh mcp, and does the remote shell print to stdout?). The next call tries to connect again.',
    )
    expect(
      unavailableText.handshakeFailed(
        'ssh box',
        'the command ended before the MCP handshake completed',
        { exitCode: 0, signal: null, stderr: '' },
        { lines: 1, first: 'Welcome to box' },
      ),
    ).toBe(
      'remote unavailable: no MCP connection to ssh box: the command ended before the MCP handshake completed (the command exited with code 0); its stdout held 1 line that is not JSON-RPC, the first: "Welcome to box" (is the command a dsh mcp, and does the remote shell print to stdout?). The next call tries to connect again.',
    )
    expect(
      unavailableText.lostDuringCall('ssh box dsh mcp', {
        exitCode: 255,
        signal: null,
        stderr: 'Connection to box closed by remote host.',
      }),
    ).toBe(
      'remote unavailable: the connection to ssh box dsh mcp was lost during the call (the command exited with code 255: Connection to box closed by remote host.); whether the call took effect there is unknown, and background tasks it had started there were stopped. The next call tries to connect again.',
    )
    expect(unavailableText.stalled('http://box:8765/mcp', 60000)).toBe(
      'remote unavailable: http://box:8765/mcp sent nothing for 60000ms during the call (no result, no progress), so the connection was dropped; whether the call took effect there is unknown. The next call tries to connect again.',
    )
    expect(unavailableText.http('http://box:8765/mcp', httpReason(401, ''))).toBe(
      'remote unavailable: http://box:8765/mcp: the server refused the token (HTTP 401): check --token-file / --token-env on both sides. The next call tries to connect again.',
    )
    expect(httpReason(403, '')).toBe('the server refused the request (HTTP 403): its Origin/Host check rejected it')
    expect(httpReason(404, '')).toBe(
      'the server does not know this MCP session (HTTP 404): it restarted, or the URL is not its /mcp endpoint',
    )
    expect(httpReason(502, 'Bad Gateway')).toBe('HTTP 502: Bad Gateway')
    expect(httpReason(undefined, 'fetch failed (ECONNREFUSED)')).toBe('fetch failed (ECONNREFUSED)')
  })
})

describe('remote results and tools', () => {
  test("a result is its text; an error result is rethrown with the remote's message, name and code", () => {
    expect(resultText({ content: [{ type: 'text', text: 'hello' }] })).toBe('hello')
    expect(
      resultText({
        content: [
          { type: 'text', text: 'a' },
          { type: 'image', data: '', mimeType: 'image/png' },
        ],
      } as CallToolResult),
    ).toBe('a\n[image content not shown]')
    const error = (() => {
      try {
        resultText({
          content: [{ type: 'text', text: 'Error: file not found: x' }],
          isError: true,
          _meta: { 'dsh/error': { name: 'FsError', code: 'FS_NOT_FOUND' } },
        })
      } catch (thrown) {
        return thrown as { message: string; name: string; code: string }
      }
    })()
    expect(error).toMatchObject({ message: 'file not found: x', name: 'FsError', code: 'FS_NOT_FOUND' })
    // A server that is not a dsh: no code in _meta → TOOL_FAILED, and the text kept whole.
    expect(() => resultText({ content: [{ type: 'text', text: 'boom' }], isError: true })).toThrow(
      expect.objectContaining({ message: 'boom', code: 'TOOL_FAILED' }),
    )
  })

  test('titles and the four behaviour hints pass through exactly as the remote sent them', () => {
    const tool = (extra: Partial<Tool>): Tool => ({ name: 't', inputSchema: { type: 'object' }, ...extra })
    expect(toolTitle(tool({ title: 'Search file contents' }))).toBe('Search file contents')
    expect(toolTitle(tool({ annotations: { title: 'Legacy' } }))).toBe('Legacy')
    expect(toolTitle(tool({}))).toBeUndefined()
    expect(
      toolAnnotations(
        tool({ annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false, title: 'x' } }),
      ),
    ).toEqual({ readOnlyHint: true, destructiveHint: false, openWorldHint: false })
    expect(toolAnnotations(tool({ annotations: { title: 'only a title' } }))).toBeUndefined()
    expect(toolAnnotations(tool({}))).toBeUndefined()
  })
})

describe('remotePrompt', () => {
  const tools = ['bash', 'read']
  const prompt = 'Use read to read files.\n\nUse bash to run commands.'

  test('drops the paragraph a dsh mcp puts before its prompt, so a local host that serves it adds its own, once', () => {
    expect(remotePrompt(`${instructionsPreamble('dsh', tools)}\n\n${prompt}`, 'dsh', tools)).toBe(prompt)
  })

  test("keeps instructions that do not open with exactly that server's paragraph", () => {
    expect(remotePrompt(prompt, 'dsh', tools)).toBe(prompt)
    // Another server name, other tools, or no server name at all: not the paragraph this remote would send.
    const other = `${instructionsPreamble('other', tools)}\n\n${prompt}`
    expect(remotePrompt(other, 'dsh', tools)).toBe(other)
    const fewer = `${instructionsPreamble('dsh', ['read'])}\n\n${prompt}`
    expect(remotePrompt(fewer, 'dsh', tools)).toBe(fewer)
    expect(remotePrompt(`${instructionsPreamble('dsh', tools)}\n\n${prompt}`, undefined, tools)).toBe(
      `${instructionsPreamble('dsh', tools)}\n\n${prompt}`,
    )
  })
})
