import { describe, expect, test } from 'vitest'
import { parseArgs } from '../src/args.ts'

describe('dsh arguments for remote workspaces and --http', () => {
  test('--remote takes a command line or a URL; a URL needs a token from a file or an env var', () => {
    expect(parseArgs(['call', 'read', '{"path":"a"}', '--remote', 'ssh -T box dsh mcp --cwd /repo'])).toEqual({
      kind: 'call',
      tool: 'read',
      args: { path: 'a' },
      json: false,
      sandbox: false,
      remote: 'ssh -T box dsh mcp --cwd /repo',
    })
    expect(parseArgs(['tools', '--remote=http://box:8765/mcp', '--token-file', '/run/token'])).toEqual({
      kind: 'tools',
      json: false,
      remote: 'http://box:8765/mcp',
      tokenFile: '/run/token',
    })
    expect(parseArgs(['mcp', '--remote', 'https://box/mcp', '--token-env', 'DSH_TOKEN'])).toEqual({
      kind: 'mcp',
      sandbox: false,
      remote: 'https://box/mcp',
      tokenEnv: 'DSH_TOKEN',
    })
    expect(parseArgs(['prompt', '--remote', 'docker exec -i box dsh mcp'])).toEqual({
      kind: 'prompt',
      remote: 'docker exec -i box dsh mcp',
    })
  })

  test('--http serves with a token, on --host/--port', () => {
    expect(parseArgs(['mcp', '--http', '--token-file', 't', '--host', '0.0.0.0', '--port', '9000'])).toEqual({
      kind: 'mcp',
      sandbox: false,
      http: true,
      tokenFile: 't',
      host: '0.0.0.0',
      port: 9000,
    })
    expect(parseArgs(['mcp', '--http', '--token-env', 'T', '--port', '0'])).toEqual({
      kind: 'mcp',
      sandbox: false,
      http: true,
      tokenEnv: 'T',
      port: 0,
    })
  })

  test('--sandbox with --http confines the local tools it serves', () => {
    expect(parseArgs(['mcp', '--http', '--sandbox', '--token-env', 'T'])).toEqual({
      kind: 'mcp',
      sandbox: true,
      http: true,
      tokenEnv: 'T',
    })
  })

  test('--sandbox with --remote is a usage error: the remote dsh takes --sandbox in its own command', () => {
    const sandboxed =
      "--sandbox confines local tools, which --remote replaces: start the remote dsh with --sandbox in its own command (--remote 'ssh -T host dsh mcp --sandbox --cwd /repo')"
    expect(parseArgs(['call', 'bash', '--sandbox', '--remote', 'ssh -T box dsh mcp'])).toEqual({
      kind: 'usage',
      command: 'call',
      message: sandboxed,
    })
    expect(parseArgs(['mcp', '--remote', 'http://box/mcp', '--token-env', 'T', '--sandbox'])).toEqual({
      kind: 'usage',
      command: 'mcp',
      message: sandboxed,
    })
    // Inside the remote command the flag is the remote's own, not this dsh's.
    expect(parseArgs(['mcp', '--remote', 'ssh -T box dsh mcp --sandbox'])).toMatchObject({
      kind: 'mcp',
      sandbox: false,
      remote: 'ssh -T box dsh mcp --sandbox',
    })
  })

  test('flags that do not fit together are usage errors that say what to do instead', () => {
    const usage = (argv: string[]) => {
      const parsed = parseArgs(argv)
      return parsed.kind === 'usage' ? parsed.message : parsed
    }
    expect(usage(['mcp', '--http'])).toBe(
      'dsh mcp --http needs a token: --token-file FILE or --token-env NAME (it never serves without one)',
    )
    expect(usage(['call', 'read', '--remote', 'http://box/mcp'])).toBe(
      "--remote http://box/mcp needs the server's token: --token-file FILE or --token-env NAME",
    )
    expect(usage(['call', 'read', '--token-file', 't'])).toBe(
      'a token (--token-file/--token-env) is for --remote <url>',
    )
    expect(usage(['mcp', '--token-env', 'T'])).toBe(
      'a token (--token-file/--token-env) is for --http or --remote <url>',
    )
    expect(usage(['mcp', '--http', '--token-file', 'a', '--token-env', 'B'])).toBe(
      'give one of --token-file and --token-env, not both',
    )
    expect(usage(['mcp', '--port', '80'])).toBe('--port is for --http')
    expect(usage(['mcp', '--host', '0.0.0.0'])).toBe('--host is for --http')
    expect(usage(['mcp', '--http', '--token-env', 'T', '--port', '70000'])).toBe(
      '--port 70000: not a port number (0-65535; 0 picks a free one)',
    )
    expect(usage(['call', 'read', '--remote', 'ssh box dsh mcp', '--config', 'c.json'])).toBe(
      '--config sets local plugins, which --remote replaces: give the remote dsh its own --config in its command',
    )
    expect(usage(['call', 'read', '--remote', 'ssh box dsh mcp', '--cwd', '/x'])).toBe(
      "--cwd names a local directory, which --remote does not use: put it in the remote command (--remote 'ssh -T host dsh mcp --cwd /repo')",
    )
    expect(usage(['call', 'read', '--remote'])).toBe("--remote needs a value: --remote '<command>'|<url>")
    expect(usage(['tools', '--http'])).toBe(
      'unknown flag --http for "dsh tools" (flags: --json, --config, --remote, --token-file, --token-env, --help)',
    )
  })
})
