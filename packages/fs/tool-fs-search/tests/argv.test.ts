import { describe, expect, test } from 'vitest'
import { globArgv, globThreads, grepArgv, normalizeGlob, normalizeInclude, includeProblem } from '../src/argv.ts'
import { hiddenBelow } from '../src/search.ts'

describe('argv', () => {
  test("glob lists files NUL-separated, hidden and ignored included, the six VCS directories excluded after the model's glob", () => {
    expect(globArgv('**/*.ts', '/w/src', 3)).toEqual([
      '--no-config',
      '--files',
      '--null',
      '--threads=3',
      '--glob=**/*.ts',
      '--no-ignore',
      '--hidden',
      '--glob=!.git/',
      '--glob=!.svn/',
      '--glob=!.hg/',
      '--glob=!.bzr/',
      '--glob=!.jj/',
      '--glob=!.sl/',
      '--',
      '/w/src',
    ])
  })

  test('grep asks for JSON records, the pattern as one --regexp= element, include as one --glob= element', () => {
    expect(grepArgv('-e', '/w', undefined)).toEqual([
      '--no-config',
      '--json',
      '--no-require-git',
      '--regexp=-e',
      '--',
      '/w',
    ])
    expect(grepArgv('x', '/w', '*.{ts,tsx}')).toEqual([
      '--no-config',
      '--json',
      '--no-require-git',
      '--regexp=x',
      '--glob=*.{ts,tsx}',
      '--',
      '/w',
    ])
  })

  test('hostile values stay single elements glued to their flag, and the root comes after "--"', () => {
    for (const hostile of ['$(touch pwned)', '`touch pwned`', '"; rm -rf / #', 'a\nb', '--pre=sh', '-', "'"]) {
      const grep = grepArgv(hostile, `/w/${hostile}`, hostile)
      expect(grep[0]).toBe('--no-config')
      expect(grep).toContain(`--regexp=${hostile}`)
      expect(grep).toContain(`--glob=${hostile}`)
      expect(grep.slice(-2)).toEqual(['--', `/w/${hostile}`])
      const glob = globArgv(hostile, `/w/${hostile}`, 1)
      expect(glob[0]).toBe('--no-config')
      expect(glob).toContain(`--glob=${hostile}`)
      expect(glob.slice(-2)).toEqual(['--', `/w/${hostile}`])
    }
  })
})

describe('glob threads', () => {
  test('ripgrep walks on every core but one (the tool stats what it lists on its own), never fewer than one, at most 12', () => {
    expect([1, 2, 3, 8, 13, 64].map(globThreads)).toEqual([1, 1, 2, 7, 12, 12])
  })
})

describe('include', () => {
  test('accepts one positive glob, braces and classes included', () => {
    for (const ok of ['*.ts', '*.{ts,tsx}', 'src/**/*.py', '[,]*', '\\,x', '{a,{b,c}}', 'a!b'])
      expect(includeProblem(ok)).toBeUndefined()
  })

  test('rejects a comma list outside braces and a negation', () => {
    expect(includeProblem('*.ts,*.tsx')).toBe('a comma-separated list')
    expect(includeProblem('*.{ts,tsx},*.js')).toBe('a comma-separated list')
    expect(includeProblem('!*.md')).toBe('a negation')
  })
})

describe('glob pattern normalisation', () => {
  test('drops a leading "./", makes an absolute pattern inside the root relative, refuses a negation', () => {
    expect(normalizeGlob('./src/*.ts', '/w')).toEqual({ pattern: 'src/*.ts' })
    expect(normalizeGlob('././/src/*.ts', '/w')).toEqual({ pattern: 'src/*.ts' })
    expect(normalizeGlob('/w/src/**', '/w')).toEqual({ pattern: 'src/**' })
    expect(normalizeGlob('/anything/**', '/')).toEqual({ pattern: 'anything/**' })
    expect(normalizeGlob('*.ts', '/w')).toEqual({ pattern: '*.ts' })
    expect(normalizeGlob('!*.ts', '/w')).toEqual({
      problem:
        'a negation ("!…"): glob lists the files that match; to leave files out, choose a narrower path or pattern',
    })
    expect(normalizeGlob('/wx/*.ts', '/w')).toEqual({
      problem: 'an absolute path outside the search path /w: pass its directory as path and a pattern relative to it',
    })
    expect(normalizeGlob('./', '/w')).toEqual({
      problem: 'no pattern left once "./" or the search path is taken off: add the file pattern, e.g. "**/*.ts"',
    })
  })
})

describe('include normalisation', () => {
  test('drops a leading "./" and makes an absolute glob inside the base relative, as glob does with its pattern', () => {
    expect(normalizeInclude('./src/*.ts', '/w')).toEqual({ include: 'src/*.ts' })
    expect(normalizeInclude('/w/src/*.ts', '/w')).toEqual({ include: 'src/*.ts' })
    expect(normalizeInclude('*.{ts,tsx}', '/w')).toEqual({ include: '*.{ts,tsx}' })
    expect(normalizeInclude('/wx/*.ts', '/w')).toEqual({
      problem:
        'an absolute path outside the search path /w: pass its directory as path and a glob relative to it as include',
    })
    expect(normalizeInclude('./', '/w')).toEqual({
      problem: 'no glob left once "./" or the search path is taken off: add the file pattern, e.g. "*.ts"',
    })
  })
})

describe('hidden paths below the root (workspace policy)', () => {
  const rule = (parent: string, raw: string) => ({
    parent,
    name: /[*?]/.test(raw) ? new RegExp(`^${raw.replace('*', '[^/]*')}$`) : raw,
    raw,
    shown: raw,
  })
  const policy = {
    writable: ['/h'],
    readOnly: [],
    hidden: [],
    identities: new Map<string, string>(),
    rules: [
      rule('/h', '.ssh'),
      rule('/h/.cargo', 'credentials*'),
      rule('/h/w', 'a[1]{x}!'),
      rule('/elsewhere', '.aws'),
      rule('/h/w/deep/er', 'k?'),
    ],
  }

  test('each becomes an anchored exclusion glob relative to the root, specials escaped, wildcards kept; none outside it', () => {
    expect(hiddenBelow(policy, '/h')).toEqual([
      '--glob=!/.ssh',
      '--glob=!/.cargo/credentials*',
      '--glob=!/w/a\\[1\\]\\{x\\}\\!',
      '--glob=!/w/deep/er/k?',
    ])
    expect(hiddenBelow(policy, '/h/w')).toEqual(['--glob=!/a\\[1\\]\\{x\\}\\!', '--glob=!/deep/er/k?'])
    expect(hiddenBelow(policy, '/')).toContain('--glob=!/elsewhere/.aws')
  })

  test("the exclusions come after the model's globs, so they win", () => {
    expect(globArgv('**', '.', 1, ['--glob=!/.ssh']).slice(-3)).toEqual(['--glob=!/.ssh', '--', '.'])
    expect(grepArgv('x', '.', '*.ts', { exclude: ['--glob=!/.ssh'] })).toEqual([
      '--no-config',
      '--json',
      '--no-require-git',
      '--regexp=x',
      '--glob=*.ts',
      '--glob=!/.ssh',
      '--',
      '.',
    ])
  })
})
