import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  TRUNCATED_MARK,
  charBoundary,
  clip,
  completeLength,
  cutChars,
  cutPrefixLength,
  cutUtf8,
  cutUtf8Bytes,
  decodeLossy,
  escapeControl,
  marked,
  QUOTE_MAX_BYTES,
  systemErrorReason,
  tildeHint,
} from '@deepseek-ai/dsh-text'

const bytes = (text: string) => Buffer.from(text, 'utf8')
const size = (text: string) => Buffer.byteLength(text, 'utf8')
/** Any text, astral characters and controls included, but only whole surrogate pairs (what a decoder produces). */
const wellFormed = fc.string({ unit: 'grapheme', maxLength: 60 })
const anyBytes = fc.uint8Array({ maxLength: 64 })

describe('the truncated mark', () => {
  it('is " (line truncated)" and follows only a cut text', () => {
    expect(TRUNCATED_MARK).toBe(' (line truncated)')
    expect(marked({ text: 'abc', truncated: true })).toBe('abc (line truncated)')
    expect(marked({ text: 'abc', truncated: false })).toBe('abc')
  })
})

describe('cutUtf8', () => {
  it('keeps a text that fits, whole', () => {
    expect(cutUtf8('héllo', 6)).toEqual({ text: 'héllo', truncated: false })
    expect(cutUtf8('', 0)).toEqual({ text: '', truncated: false })
  })

  it('cuts before a character that would not fit whole', () => {
    expect(cutUtf8('héllo', 2)).toEqual({ text: 'h', truncated: true })
    expect(cutUtf8('héllo', 3)).toEqual({ text: 'hé', truncated: true })
    expect(cutUtf8('a😀b', 4)).toEqual({ text: 'a', truncated: true })
    expect(cutUtf8('a😀b', 5)).toEqual({ text: 'a😀', truncated: true })
    expect(cutUtf8('日本語', 8)).toEqual({ text: '日本', truncated: true })
  })

  it('cuts to nothing at a zero budget', () => {
    expect(cutUtf8('x', 0)).toEqual({ text: '', truncated: true })
  })

  it('is the longest prefix within the budget, on a character boundary (property)', () => {
    fc.assert(
      fc.property(wellFormed, fc.nat({ max: 200 }), (text, max) => {
        const cut = cutUtf8(text, max)
        expect(text.startsWith(cut.text)).toBe(true)
        expect(size(cut.text)).toBeLessThanOrEqual(max)
        expect(cut.truncated).toBe(size(text) > max)
        // Maximal: the next code point would not have fitted.
        const next = String.fromCodePoint(text.codePointAt(cut.text.length) ?? 0)
        if (cut.truncated) expect(size(cut.text) + size(next)).toBeGreaterThan(max)
      }),
    )
  })
})

describe('cutUtf8Bytes', () => {
  it('decodes only the part of the bytes that fits, on a character boundary', () => {
    const line = bytes('--é日--')
    expect(cutUtf8Bytes(line, 3, 2)).toEqual({ text: 'é', truncated: true })
    expect(cutUtf8Bytes(line, 5, 2, 7)).toEqual({ text: 'é日', truncated: false })
    expect(cutUtf8Bytes(line, 4, 2, 7)).toEqual({ text: 'é', truncated: true })
  })

  it('shows bytes that are not UTF-8 as U+FFFD', () => {
    expect(cutUtf8Bytes(Uint8Array.of(0x61, 0xff, 0x62), 10)).toEqual({ text: 'a\ufffdb', truncated: false })
  })

  it('agrees with cutUtf8 on UTF-8 input (property)', () => {
    fc.assert(
      fc.property(wellFormed, fc.nat({ max: 200 }), (text, max) => {
        expect(cutUtf8Bytes(bytes(text), max)).toEqual(cutUtf8(text, max))
      }),
    )
  })
})

describe('charBoundary', () => {
  it('backs off from inside a character to its first byte', () => {
    const b = bytes('a😀')
    expect([0, 1, 2, 3, 4, 5].map((at) => charBoundary(b, at))).toEqual([0, 1, 1, 1, 1, 5])
  })

  it('never backs off below start, nor more than three bytes over invalid input', () => {
    expect(charBoundary(bytes('😀'), 2, 1)).toBe(1)
    expect(charBoundary(Uint8Array.of(0x80, 0x80, 0x80, 0x80, 0x80, 0x80), 5)).toBe(2)
  })

  it('clamps a position past the end', () => {
    expect(charBoundary(bytes('ab'), 9)).toBe(2)
  })
})

describe('completeLength and cutPrefixLength', () => {
  it('leave out a trailing character that more bytes could complete', () => {
    const b = bytes('a😀')
    expect([1, 2, 3, 4, 5].map((end) => completeLength(b.subarray(0, end)))).toEqual([1, 1, 1, 1, 5])
    expect(completeLength(b, 3)).toBe(1)
    expect(completeLength(Uint8Array.of(0x61, 0xff))).toBe(2)
  })

  it('count the remains of a character cut at the front', () => {
    const b = bytes('😀a')
    expect([0, 1, 2, 3, 4].map((start) => cutPrefixLength(b, start))).toEqual([0, 3, 2, 1, 0])
  })

  it('split any bytes so that the decoded parts join to the decoded whole (property)', () => {
    fc.assert(
      fc.property(wellFormed, fc.nat(), (text, at) => {
        const b = bytes(text)
        const end = completeLength(b, at % (b.length + 1))
        expect(decodeLossy(b, 0, end) + decodeLossy(b, end)).toBe(text)
      }),
    )
  })
})

describe('cutChars', () => {
  it('counts code points, never splitting a surrogate pair', () => {
    expect(cutChars('a😀b', 2)).toEqual({ text: 'a😀', truncated: true })
    expect(cutChars('a😀b', 3)).toEqual({ text: 'a😀b', truncated: false })
    expect(cutChars('abc', 0)).toEqual({ text: '', truncated: true })
  })

  it('is the first max code points (property)', () => {
    fc.assert(
      fc.property(wellFormed, fc.nat({ max: 80 }), (text, max) => {
        const points = [...text]
        const cut = cutChars(text, max)
        expect(cut).toEqual({ text: points.slice(0, max).join(''), truncated: points.length > max })
      }),
    )
  })
})

describe('clip', () => {
  it('keeps a text that fits and ends a cut one with an ellipsis, within the budget', () => {
    expect(clip('abcdef', 6)).toBe('abcdef')
    expect(clip('abcdefg', 6)).toBe('abc…')
    expect(clip('日本語です', 9)).toBe('日本…')
  })

  it('never exceeds the budget (property)', () => {
    fc.assert(
      fc.property(wellFormed, fc.integer({ min: 3, max: 200 }), (text, max) => {
        const out = clip(text, max)
        expect(size(out)).toBeLessThanOrEqual(max)
        if (size(text) <= max) expect(out).toBe(text)
        else expect(out.endsWith('…') && text.startsWith(out.slice(0, -1))).toBe(true)
      }),
    )
  })
})

describe('decodeLossy', () => {
  it('shows each invalid sequence as U+FFFD and never throws', () => {
    expect(decodeLossy(Uint8Array.of(0x66, 0x80, 0x6f, 0xc3))).toBe('f\ufffdo\ufffd')
    expect(decodeLossy(bytes('xé y'), 1, 3)).toBe('é')
  })

  it('turns any bytes into well-formed text (property)', () => {
    fc.assert(
      fc.property(anyBytes, (b) => {
        const text = decodeLossy(b)
        // Well-formed: it survives a round trip through UTF-8 unchanged (a lone surrogate would not).
        expect(bytes(text).toString('utf8')).toBe(text)
      }),
    )
  })
})

describe('escapeControl', () => {
  it('writes the common controls by name and the rest in hex', () => {
    expect(escapeControl('a\nb\rc\td\x1b[31me\x00\x7f\x9b\u2028\u2029', { keepTab: false })).toBe(
      'a\\nb\\rc\\td\\x1b[31me\\x00\\x7f\\x9b\\u2028\\u2029',
    )
  })

  it('keeps tabs when asked, and only tabs', () => {
    expect(escapeControl('\tx\ny', { keepTab: true })).toBe('\tx\\ny')
  })

  it('returns a text without controls unchanged', () => {
    expect(escapeControl('plain é 😀 \\n', { keepTab: false })).toBe('plain é 😀 \\n')
  })

  it('leaves no control character and no line break behind (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 60 }), fc.boolean(), (text, keepTab) => {
        const out = escapeControl(text, { keepTab })
        const left = keepTab ? out.replaceAll('\t', '') : out
        expect(/[\x00-\x1f\x7f-\x9f\u2028\u2029]/.test(left)).toBe(false)
        // Character by character: a control becomes its escape, everything else stays.
        const named: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': keepTab ? '\t' : '\\t' }
        const expected = [...text]
          .map(
            (c) =>
              named[c] ??
              (/[\x00-\x1f\x7f-\x9f\u2028\u2029]/.test(c)
                ? c.charCodeAt(0) > 0xff
                  ? `\\u${c.charCodeAt(0).toString(16)}`
                  : `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`
                : c),
          )
          .join('')
        expect(out).toBe(expected)
      }),
    )
  })
})

describe('system error reasons', () => {
  it('name the error code and its meaning, without the path Node repeats in its message', async () => {
    const { stat } = await import('node:fs/promises')
    const error = await stat('/no/such/dir/x').catch((caught: unknown) => caught)
    expect(systemErrorReason(error)).toBe('ENOENT (no such file or directory)')
  })

  it('fall back to the message, clipped to the quote bound, for anything else', () => {
    expect(systemErrorReason(new Error('odd'))).toBe('odd')
    expect(systemErrorReason('plain')).toBe('plain')
    expect(Buffer.byteLength(systemErrorReason(new Error('é'.repeat(1000))))).toBeLessThanOrEqual(QUOTE_MAX_BYTES)
  })
})

describe('the hint for a path that starts with "~"', () => {
  it('names the home directory and the path to pass, for "~" and "~/…" only', async () => {
    const { homedir } = await import('node:os')
    const home = homedir()
    expect(tildeHint('~/.bashrc')).toBe(
      ` (a leading "~" is not expanded; the home directory is ${home}: pass ${home}/.bashrc)`,
    )
    expect(tildeHint('~')).toBe(` (a leading "~" is not expanded; the home directory is ${home}: pass ${home})`)
    expect(tildeHint('src/~/x')).toBe('')
    expect(tildeHint('~user/x')).toBe('')
    expect(tildeHint('a.txt')).toBe('')
    expect(Buffer.byteLength(tildeHint(`~/${'x'.repeat(100_000)}`))).toBeLessThan(QUOTE_MAX_BYTES + 200 + home.length)
  })
})
