import { userInfo } from 'node:os'
import { isAbsolute, join, resolve, sep } from 'node:path'

/**
 * The credential stores hidden from every tool and every sandboxed command whatever the config says (`~` is the
 * home directory: both `$HOME` and the real one from the password database). A last component may hold `*`.
 * The one list: the file tools' policy and the sandbox's masks both read it.
 */
export const CREDENTIAL_STORES: readonly string[] = [
  '~/.ssh',
  '~/.aws',
  '~/.gnupg',
  '~/.config/gcloud',
  '~/.docker',
  '~/.kube',
  '~/.azure',
  '~/.config/gh',
  '~/.netrc',
  '~/.git-credentials',
  '~/.npmrc',
  '~/.pypirc',
  '~/.password-store',
  // The agents' own stores, more tokens and browser profiles.
  '~/.claude',
  '~/.claude.json',
  '~/.codex',
  '~/.gemini',
  '~/.config/opencode',
  '~/.local/share/opencode',
  '~/.cargo/credentials*',
  '~/.config/hub',
  '~/.config/git/credentials',
  '~/.pgpass',
  '~/.vault-token',
  '~/.terraform.d',
  '~/.m2/settings.xml',
  '~/.local/share/keyrings',
  '~/.mozilla',
  '~/.config/google-chrome',
  '~/.config/chromium',
]

/** Whether `path` is `root` or lies below it (both absolute and normalised). */
export function within(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep)
}

/** `~` and `~/…` mean `home` ($HOME by default); a relative path is taken against `base`. */
export function expandHome(path: string, base: string = process.cwd(), home: string = homeDirs()[0]!): string {
  if (path === '~') return home
  if (path.startsWith('~/')) return join(home, path.slice(2))
  return isAbsolute(path) ? resolve(path) : resolve(base, path)
}

/**
 * The home directories whose stores are hidden: `$HOME` first, then the user's real home from the password database
 * when it differs (a `HOME` pointed elsewhere must not un-hide the real one's stores).
 */
export function homeDirs(): string[] {
  const real = passwordHome()
  const env = process.env.HOME || real || '/'
  return real === undefined || resolve(real) === resolve(env) ? [resolve(env)] : [resolve(env), resolve(real)]
}

/** The password database's home of this process's user: asked once (a lookup reads /etc/passwd each time). */
let knownHome: { readonly home: string | undefined } | undefined
function passwordHome(): string | undefined {
  if (!knownHome) {
    let home: string | undefined
    try {
      home = userInfo().homedir || undefined
    } catch {
      home = undefined
    }
    knownHome = { home }
  }
  return knownHome.home
}

/** Each entry with `~` expanded for every home directory (entries without `~` once). */
export function expandForHomes(entries: readonly string[], base: string = process.cwd()): string[] {
  const homes = homeDirs()
  const out: string[] = []
  for (const entry of entries) {
    if (entry === '~' || entry.startsWith('~/')) for (const home of homes) out.push(expandHome(entry, base, home))
    else out.push(expandHome(entry, base))
  }
  return [...new Set(out)]
}
