import fc from 'fast-check'
import { expect, test } from 'vitest'
import {
  byteLines,
  decode,
  dominantEol,
  encode,
  planEdit,
  planEditBytes,
  shapeWrite,
  textLines,
} from '../src/change.ts'

/** Lines of text with any line endings (LF, CRLF, mixed), maybe a BOM, maybe a final newline. */
const line = fc.string({ unit: fc.constantFrom('a', 'b', ' ', '\t', 'é', '✓', '𝄞', 'x', 'y', '\r'), maxLength: 8 })
const eol = fc.constantFrom('\n', '\r\n')
const content = fc
  .record({
    lines: fc.array(fc.tuple(line, eol), { maxLength: 12 }),
    last: line,
    bom: fc.boolean(),
  })
  .map(({ lines, last, bom }) => ({ bom, text: lines.map(([l, e]) => l + e).join('') + last }))

const bytesOf = (bom: boolean, text: string) => Buffer.from((bom ? '\uFEFF' : '') + text, 'utf8')

test('decode then encode gives back every byte of any UTF-8 text, BOM or not', () => {
  fc.assert(
    fc.property(content, ({ bom, text }) => {
      const bytes = bytesOf(bom, text)
      const decoded = decode(bytes)
      if (decoded.kind !== 'text') throw new Error('not text')
      expect(encode(decoded.file).equals(bytes)).toBe(true)
    }),
  )
})

/** Moves a UTF-16 index off the middle of a surrogate pair (a model's old_string is whole characters). */
const whole = (text: string, at: number) =>
  at > 0 && at < text.length && /[\uDC00-\uDFFF]/.test(text[at]!) ? at + 1 : at

test('an edit changes only the bytes of the span it replaces; the rest of the file is byte for byte the same', () => {
  fc.assert(
    fc.property(
      content,
      fc.nat(),
      fc.nat(),
      fc.array(
        line.filter((l) => !l.includes('\r')),
        { maxLength: 4 },
      ),
      ({ bom, text }, a, b, newLines) => {
        if (text.length === 0) return
        const start = whole(text, a % text.length)
        const end = whole(text, start + 1 + (b % (text.length - start)))
        if (start >= text.length) return
        const oldString = text.slice(start, end)
        // Only a unique old_string (at this place) is a single edit.
        if (text.indexOf(oldString) !== start || text.indexOf(oldString, start + 1) >= 0) return
        const newString = newLines.join('\n')
        if (newString === oldString) return
        const plan = planEdit(text, { oldString, newString, replaceAll: false })
        if (plan.kind !== 'edited') throw new Error(`not edited: ${plan.kind}`)
        expect(plan.count).toBe(1)
        const before = bytesOf(bom, text.slice(0, start))
        const after = Buffer.from(text.slice(end), 'utf8')
        const result = encode({ bom, text: plan.text })
        expect(result.subarray(0, before.length).equals(before)).toBe(true)
        expect(result.subarray(result.length - after.length).equals(after)).toBe(true)
        // The middle is new_string, its line endings those of the span (or of the file).
        const middle = result.subarray(before.length, result.length - after.length).toString('utf8')
        expect(middle.replace(/\r\n/g, '\n')).toBe(newString.replace(/\r\n/g, '\n'))
      },
    ),
  )
})

test('an edit and its reverse give back the original bytes when the span uses one line ending', () => {
  fc.assert(
    fc.property(
      content,
      fc.nat(),
      fc.nat(),
      fc.array(
        line.filter((l) => !l.includes('\r')),
        { minLength: 1, maxLength: 4 },
      ),
      ({ bom, text }, a, b, newLines) => {
        if (text.length === 0) return
        const start = whole(text, a % text.length)
        const end = whole(text, start + 1 + (b % (text.length - start)))
        if (start >= text.length) return
        const oldString = text.slice(start, end)
        if (/\r(?!\n)/.test(oldString) || (oldString.includes('\r\n') && /(^|[^\r])\n/.test(oldString))) return
        if (text.indexOf(oldString) !== start || text.indexOf(oldString, start + 1) >= 0) return
        const newString = `§${newLines.join(' ')}§` // unique in the file: § appears nowhere else
        const forward = planEdit(text, { oldString, newString, replaceAll: false })
        if (forward.kind !== 'edited') throw new Error('forward failed')
        // Put back into a span without line endings, old_string's take the file's: exact only when they were the file's.
        const spanEol = dominantEol(oldString)
        if (spanEol !== undefined && spanEol !== (dominantEol(forward.text) ?? '\n')) return
        const back = planEdit(forward.text, {
          oldString: newString,
          newString: oldString.replace(/\r\n/g, '\n'),
          replaceAll: false,
        })
        if (back.kind !== 'edited') throw new Error('back failed')
        expect(encode({ bom, text: back.text }).equals(bytesOf(bom, text))).toBe(true)
      },
    ),
  )
})

test('write over an existing file keeps its BOM, its line endings and whether it ended with a newline', () => {
  fc.assert(
    fc.property(
      content,
      fc.array(
        line.filter((l) => !l.includes('\r')),
        { maxLength: 6 },
      ),
      fc.boolean(),
      ({ bom, text }, lines, final) => {
        const given = lines.join('\n') + (final && lines.length ? '\n' : '')
        const shaped = shapeWrite(given, { bom, text })
        expect(shaped.bom).toBe(bom)
        if (text.includes('\r\n') && !/(^|[^\r])\n/.test(text)) expect(/(^|[^\r])\n/.test(shaped.text)).toBe(false)
        let expected = given
        if (text.length > 0 && given.length > 0) {
          if (text.endsWith('\n') && !given.endsWith('\n')) expected += '\n'
          if (!text.endsWith('\n') && given.endsWith('\n')) expected = given.slice(0, -1)
        }
        expect(shaped.text.replace(/\r\n/g, '\n')).toBe(expected)
      },
    ),
  )
})

test('the edit on the bytes, where it applies, gives exactly the bytes, count, lines and rows of the edit on the text', () => {
  const word = fc.constantFrom('a', 'b', 'ab', 'é', '\n', '\r\n', 'x\ny', '𝄞')
  fc.assert(
    fc.property(
      content,
      word,
      fc.array(fc.constantFrom('z', 'é', '', 'q q'), { maxLength: 3 }),
      fc.boolean(),
      ({ bom, text }, oldString, newParts, replaceAll) => {
        const newString = newParts.join('')
        if (newString === oldString) return
        const bytes = bytesOf(bom, text)
        const request = { oldString, newString, replaceAll }
        const fast = planEditBytes(bytes, bom ? 3 : 0, request)
        const slow = planEdit(text, request)
        if (!fast) {
          expect(slow.kind === 'edited' ? slow.match : slow.kind).not.toBe('exact')
          return
        }
        if (fast.kind === 'ambiguous') {
          expect(slow).toEqual(fast)
          return
        }
        if (slow.kind !== 'edited') throw new Error(`slow: ${slow.kind}`)
        expect(fast.bytes.equals(encode({ bom, text: slow.text }))).toBe(true)
        expect([fast.count, fast.changes]).toEqual([slow.count, slow.changes])
        const [a, b] = [byteLines(fast.bytes, bom ? 3 : 0), textLines(slow.text)]
        expect(a.total).toBe(b.total)
        const [ca, cb] = [a.cursor(), b.cursor()]
        for (let line = 1; line <= a.total; line++) expect(ca(line)).toBe(cb(line))
      },
    ),
    { numRuns: 300 },
  )
})
