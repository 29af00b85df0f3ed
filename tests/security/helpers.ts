import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { createDefaultContext, type DefaultContext } from 'dsh-agent-tools'
import { createSession, type ToolSession } from '@deepseek-ai/dsh-tools'

export { processesWith, uniqueSleep, until } from '@deepseek-ai/dsh-testing'
export { BIN, ChildTransport, startDsh } from '../../packages/host/cli/tests/helpers.ts'

/**
 * The secrets of a fake HOME, one canary each (path → content). The list is docs/security.md#boundary's and docs/security.md#boundary's credential
 * stores; a test that prints any CANARY- text has read a hidden path.
 */
export const SECRETS: Readonly<Record<string, string>> = {
  '.ssh/id_rsa': 'CANARY-SSH',
  '.aws/credentials': 'CANARY-AWS',
  '.config/gh/hosts.yml': 'CANARY-GH',
  '.claude/.credentials.json': 'CANARY-CLAUDE',
  '.codex/auth.json': 'CANARY-CODEX',
  '.gemini/oauth_creds.json': 'CANARY-GEMINI',
  '.config/opencode/auth.json': 'CANARY-OPENCODE',
  '.cargo/credentials.toml': 'CANARY-CARGO',
  '.config/hub': 'CANARY-HUB',
  '.config/git/credentials': 'CANARY-GITCRED',
  '.pgpass': 'CANARY-PGPASS',
  '.vault-token': 'CANARY-VAULT',
  '.terraform.d/credentials.tfrc.json': 'CANARY-TERRAFORM',
  '.m2/settings.xml': 'CANARY-MAVEN',
  '.local/share/keyrings/login.keyring': 'CANARY-KEYRING',
  '.mozilla/firefox/p/logins.json': 'CANARY-FIREFOX',
  '.config/google-chrome/Default/Login Data': 'CANARY-CHROME',
  '.config/chromium/Default/Cookies': 'CANARY-CHROMIUM',
}

/**
 * A sandboxed dsh composition (`--sandbox`, the shipped plugins) over real bubblewrap, with fixtures under
 * /var/tmp (inside the sandbox the host's /tmp is replaced by a private one):
 *   base/home     a fake HOME holding SECRETS (process.env.HOME points at it while the fixture lives)
 *   base/project  the session cwd, the workspace root
 *   base/outside  outside every root: a marker appearing here was written by a process outside the sandbox
 */
export interface Attack {
  readonly base: string
  readonly home: string
  readonly project: string
  readonly outside: string
  readonly host: DefaultContext
  /** One tool call of session `session` (default "A"), cwd `project` unless given. */
  call(
    tool: string,
    args: Record<string, unknown>,
    session?: string,
    cwd?: string,
  ): Promise<{ text: string; isError: boolean; code?: string }>
  /** The session named `id` whose root is `cwd` (pinned when first made; the same object afterwards). */
  session(id: string, cwd: string): ToolSession
  /** One bash call; its text. */
  bash(command: string, session?: string): Promise<string>
  cleanup(): Promise<void>
}

export async function attack(
  options: {
    config?: (paths: { base: string; home: string; project: string }) => Record<string, unknown>
    sandbox?: boolean
  } = {},
): Promise<Attack> {
  const base = realpathSync(mkdtempSync('/var/tmp/dsh-security-'))
  const home = join(base, 'home')
  const project = join(base, 'project')
  const outside = join(base, 'outside')
  for (const dir of [home, project, outside]) mkdirSync(dir, { recursive: true })
  for (const [path, content] of Object.entries(SECRETS)) {
    mkdirSync(dirname(join(home, path)), { recursive: true })
    writeFileSync(join(home, path), `${content}\n`)
  }
  const savedHome = process.env.HOME
  process.env.HOME = home
  let host: DefaultContext
  try {
    host = await createDefaultContext({
      sandbox: options.sandbox ?? true,
      config: options.config?.({ base, home, project }) ?? {},
      log: () => {},
    })
  } catch (error) {
    process.env.HOME = savedHome
    rmSync(base, { recursive: true, force: true })
    throw error
  }
  const sessions = new Map<string, ToolSession>()
  const sessionOf = (id: string, cwd: string): ToolSession => {
    let session = sessions.get(`${id}\0${cwd}`)
    if (!session || session.disposed) sessions.set(`${id}\0${cwd}`, (session = createSession({ id, cwd })))
    return session
  }
  const call: Attack['call'] = async (tool, args, session = 'A', cwd = project) => {
    const result = await host.ctx.tools.execute(tool, args, { session: sessionOf(session, cwd) })
    const text = result.content.map((part) => ('text' in part ? part.text : '')).join('')
    return { text, isError: result.isError === true, ...(result.error?.code ? { code: result.error.code } : {}) }
  }
  return {
    base,
    home,
    project,
    outside,
    host,
    call,
    bash: async (command, session) => (await call('bash', { command, description: 'attack' }, session)).text,
    session: sessionOf,
    async cleanup() {
      try {
        for (const session of sessions.values()) await session.dispose()
        await host.dispose()
      } finally {
        process.env.HOME = savedHome
        rmSync(base, { recursive: true, force: true })
      }
    },
  }
}

/** The canaries of SECRETS found in `text`. */
export function leaked(text: string): string[] {
  return Object.values(SECRETS).filter((canary) => text.includes(canary))
}
