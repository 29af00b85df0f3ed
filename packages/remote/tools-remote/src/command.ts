/**
 * Splits a command line into argv the way a POSIX shell splits words, without running a shell: whitespace
 * separates words; '…' keeps everything literally; "…" keeps everything but lets \ escape " \ $ ` and a newline;
 * outside quotes \ escapes the next character. No expansion of any kind ($VAR, ~, globs, ;, |) happens: those
 * characters are kept as they are, so the remote side (ssh's remote shell, for one) sees them. Returns the
 * problem as a sentence when the line cannot be split.
 */
export function splitCommandLine(line: string): string[] | { problem: string } {
  const words: string[] = []
  let word = ''
  let inWord = false
  let quote: "'" | '"' | undefined
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!
    if (quote === "'") {
      if (c === "'") quote = undefined
      else word += c
      continue
    }
    if (quote === '"') {
      if (c === '"') quote = undefined
      else if (c === '\\' && i + 1 < line.length && '"\\$`\n'.includes(line[i + 1]!)) word += line[++i]
      else word += c
      continue
    }
    if (c === ' ' || c === '\t' || c === '\n') {
      if (inWord) words.push(word)
      word = ''
      inWord = false
      continue
    }
    inWord = true
    if (c === "'" || c === '"') quote = c
    else if (c === '\\') {
      if (i + 1 >= line.length) return { problem: 'the command ends with a lone backslash' }
      word += line[++i]
    } else word += c
  }
  if (quote) return { problem: `the command has an unclosed ${quote === "'" ? 'single' : 'double'} quote` }
  if (inWord) words.push(word)
  if (words.length === 0) return { problem: 'the command is empty' }
  return words
}
