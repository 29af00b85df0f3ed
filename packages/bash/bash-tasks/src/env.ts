/**
 * What every provider adds over the child's inherited environment: no colours, no pagers, a terminal that claims
 * nothing, and nothing that waits for a person (git, apt/dpkg and editors give up or succeed at once).
 */
export const CHILD_ENV: Readonly<Record<string, string>> = {
  NO_COLOR: '1',
  TERM: 'dumb',
  PAGER: 'cat',
  GIT_PAGER: 'cat',
  GIT_TERMINAL_PROMPT: '0',
  DEBIAN_FRONTEND: 'noninteractive',
  GIT_EDITOR: 'true',
  EDITOR: 'true',
}
