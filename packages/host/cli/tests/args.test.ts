import { describe, expect, test } from 'vitest'
import { parseArgs } from '../src/args.ts'
import { usageText } from '../src/help.ts'

describe('dsh arguments', () => {
  test('--help and -h win wherever they appear, and name the command', () => {
    expect(parseArgs(['--help'])).toEqual({ kind: 'help', command: undefined })
    expect(parseArgs(['call', 'grep', '{bad', '--bogus', '--help'])).toEqual({ kind: 'help', command: 'call' })
    expect(parseArgs(['mcp', '-h'])).toEqual({ kind: 'help', command: 'mcp' })
    expect(parseArgs(['help', 'tools'])).toEqual({ kind: 'help', command: 'tools' })
    expect(parseArgs(['help'])).toEqual({ kind: 'help', command: undefined })
  })

  test('--version wins wherever it appears', () => {
    expect(parseArgs(['--version'])).toEqual({ kind: 'version' })
    expect(parseArgs(['prompt', '--version'])).toEqual({ kind: 'version' })
  })

  test('a call takes the tool, one JSON object, and its flags in either spelling', () => {
    expect(parseArgs(['call', 'grep', '{"pattern":"TODO"}', '--cwd', '/tmp', '--json', '--config=c.json'])).toEqual({
      kind: 'call',
      tool: 'grep',
      args: { pattern: 'TODO' },
      cwd: '/tmp',
      json: true,
      config: 'c.json',
      sandbox: false,
    })
    expect(parseArgs(['call', '--cwd=/w', 'glob'])).toEqual({
      kind: 'call',
      tool: 'glob',
      args: {},
      cwd: '/w',
      json: false,
      sandbox: false,
    })
    expect(parseArgs(['call', 'bash', '-'])).toEqual({
      kind: 'call',
      tool: 'bash',
      args: 'stdin',
      json: false,
      sandbox: false,
    })
  })

  test('after "--" every word is positional', () => {
    expect(parseArgs(['call', 'glob', '--', '{"pattern":"-x"}'])).toEqual({
      kind: 'call',
      tool: 'glob',
      args: { pattern: '-x' },
      json: false,
      sandbox: false,
    })
  })

  test('tools, prompt and mcp accept only their own flags', () => {
    expect(parseArgs(['tools', '--json'])).toEqual({ kind: 'tools', json: true })
    expect(parseArgs(['prompt', '--config', 'c.json'])).toEqual({ kind: 'prompt', config: 'c.json' })
    expect(parseArgs(['mcp', '--cwd', 'x'])).toEqual({ kind: 'mcp', cwd: 'x', sandbox: false })
    expect(parseArgs(['mcp', '--sandbox'])).toEqual({ kind: 'mcp', sandbox: true })
    expect(parseArgs(['call', 'bash', '--sandbox'])).toMatchObject({ kind: 'call', sandbox: true })
    expect(parseArgs(['tools', '--sandbox'])).toMatchObject({ kind: 'usage', command: 'tools' })
    expect(parseArgs(['prompt', '--json'])).toMatchObject({
      kind: 'usage',
      command: 'prompt',
      message: 'unknown flag --json for "dsh prompt" (flags: --config, --remote, --token-file, --token-env, --help)',
    })
    expect(parseArgs(['tools', '--cwd', 'x'])).toMatchObject({ kind: 'usage', command: 'tools' })
  })

  test('malformed JSON arguments are a usage error that shows how to quote them', () => {
    const parsed = parseArgs(['call', 'grep', '{pattern:TODO}'])
    expect(parsed).toMatchObject({ kind: 'usage', command: 'call' })
    expect(parsed.kind === 'usage' && parsed.message).toMatch(
      /^the arguments are not valid JSON \(.+\): pass one JSON object as one shell word, e\.g\. dsh call grep '\{"pattern":"TODO"\}'$/,
    )
  })

  test('arguments that are JSON but not an object are a usage error naming what they are', () => {
    for (const [text, got] of [
      ['[1]', 'an array'],
      ['null', 'null'],
      ['"x"', 'a string'],
      ['3', 'a number'],
    ]) {
      expect(parseArgs(['call', 'grep', text!])).toEqual({
        kind: 'usage',
        command: 'call',
        message: `the arguments must be a JSON object, got ${got}: e.g. dsh call grep '{"pattern":"TODO"}'`,
      })
    }
  })

  test('unknown commands, unknown or repeated flags, missing values and extra words are usage errors', () => {
    expect(parseArgs([])).toEqual({ kind: 'usage', command: undefined, message: 'missing command' })
    expect(parseArgs(['run'])).toEqual({
      kind: 'usage',
      command: undefined,
      message: 'unknown command "run" (commands: call, tools, prompt, mcp)',
    })
    expect(parseArgs(['--cwd', 'x', 'call'])).toEqual({
      kind: 'usage',
      command: undefined,
      message: 'unknown flag --cwd: flags go after the command',
    })
    expect(parseArgs(['call', 'glob', '--bogus=1'])).toEqual({
      kind: 'usage',
      command: 'call',
      message:
        'unknown flag --bogus for "dsh call" (flags: --cwd, --json, --config, --sandbox, --remote, --token-file, --token-env, --help)',
    })
    expect(parseArgs(['call', 'glob', '-x'])).toMatchObject({
      kind: 'usage',
      message: expect.stringMatching(/^unknown flag -x /),
    })
    expect(parseArgs(['call', 'glob', '--json', '--json'])).toEqual({
      kind: 'usage',
      command: 'call',
      message: '--json given twice',
    })
    expect(parseArgs(['call', 'glob', '--json=yes'])).toEqual({
      kind: 'usage',
      command: 'call',
      message: '--json takes no value',
    })
    expect(parseArgs(['call', 'glob', '--cwd'])).toEqual({
      kind: 'usage',
      command: 'call',
      message: '--cwd needs a value: --cwd DIR',
    })
    expect(parseArgs(['mcp', '--config='])).toEqual({
      kind: 'usage',
      command: 'mcp',
      message: '--config needs a value: --config FILE',
    })
    expect(parseArgs(['call'])).toEqual({ kind: 'usage', command: 'call', message: 'missing the tool name' })
    expect(parseArgs(['call', 'glob', '{}', 'more'])).toEqual({
      kind: 'usage',
      command: 'call',
      message: 'unexpected argument "more"',
    })
    expect(parseArgs(['prompt', 'extra'])).toEqual({
      kind: 'usage',
      command: 'prompt',
      message: 'unexpected argument "extra"',
    })
  })

  test('a usage error says what is wrong, what to type, and where the details are', () => {
    expect(usageText('call', '--json given twice')).toBe(
      'dsh: --json given twice\n' +
        'Usage: dsh call <tool> [<json-args>] [--cwd DIR] [--json] [--sandbox] [--config FILE] [--remote REMOTE]\n' +
        'Run "dsh call --help" for details.\n',
    )
    expect(usageText(undefined, 'missing command')).toBe(
      'dsh: missing command\nUsage: dsh <call|tools|prompt|mcp> ...\nRun "dsh --help" for details.\n',
    )
  })
})
