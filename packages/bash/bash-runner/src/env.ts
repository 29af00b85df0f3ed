/**
 * What every provider puts over the child's inherited environment: no colours, no pagers, a terminal that claims
 * nothing, nothing that waits for a person (git, apt/dpkg and editors give up or succeed at once), Python output
 * unbuffered (a server's first line reaches `wait_for` at once), and no ssh session variables (bash sources the
 * user's `~/.bashrc` for a non-interactive command when `SSH_CLIENT` or `SSH2_CLIENT` is set). `SHLVL=1`: bash also
 * sources it when its stdin is a socket and SHLVL is unset or 0 — an interactive task's stdin is Node's socketpair,
 * and a client that starts dsh directly (or the sandbox's allowlist) passes no SHLVL. `undefined` removes the name.
 */
export const CHILD_ENV: Readonly<Record<string, string | undefined>> = {
  NO_COLOR: '1',
  TERM: 'dumb',
  PAGER: 'cat',
  GIT_PAGER: 'cat',
  GIT_TERMINAL_PROMPT: '0',
  DEBIAN_FRONTEND: 'noninteractive',
  GIT_EDITOR: 'true',
  EDITOR: 'true',
  PYTHONUNBUFFERED: '1',
  SHLVL: '1',
  SSH_CLIENT: undefined,
  SSH_CONNECTION: undefined,
  SSH2_CLIENT: undefined,
}
