import { describe, expect, test } from 'vitest'
import { onlyUnreadableBelow } from '../src/ripgrep.ts'

describe('an exit 2 that only reports unreadable paths below the root', () => {
  test("is recognised in both of ripgrep's wordings, for paths below the root only", () => {
    expect(onlyUnreadableBelow('rg: /w/closed: Permission denied (os error 13)\n', '/w')).toBe(true)
    expect(
      onlyUnreadableBelow(
        'rg: /w/a/b: IO error for operation on /w/a/b: Permission denied (os error 13)\nrg: /w/c: I/O error (os error 5)\n',
        '/w',
      ),
    ).toBe(true)
    expect(onlyUnreadableBelow('rg: /w: Permission denied (os error 13)\n', '/w')).toBe(false)
    expect(onlyUnreadableBelow('rg: /wx/a: Permission denied (os error 13)\n', '/w')).toBe(false)
    expect(onlyUnreadableBelow('rg: /etc/x: Permission denied (os error 13)\n', '/w')).toBe(false)
    expect(onlyUnreadableBelow('/etc/x', '/')).toBe(false)
    expect(onlyUnreadableBelow('rg: /etc/x: Permission denied (os error 13)', '/')).toBe(true)
  })

  test('is not any other error, nor an empty stderr', () => {
    expect(onlyUnreadableBelow('', '/w')).toBe(false)
    expect(
      onlyUnreadableBelow(
        "rg: /w/a: Permission denied (os error 13)\nrg: error parsing glob '{': unclosed alternate group\n",
        '/w',
      ),
    ).toBe(false)
    expect(onlyUnreadableBelow('something else entirely\n', '/w')).toBe(false)
  })

  test('a long stderr cut in the middle is judged without the two lines the cut went through', () => {
    const cut =
      'rg: /w/a: Permission denied (os error 13)\nrg: /w/b: Permiss\n[… 9000 bytes of stderr left out …]\nn denied (os error 13)\nrg: /w/c: Permission denied (os error 13)\n'
    expect(onlyUnreadableBelow(cut, '/w')).toBe(true)
    expect(onlyUnreadableBelow(cut.replace('rg: /w/c', 'rg: fatal'), '/w')).toBe(false)
  })
})
