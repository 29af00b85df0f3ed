import Schema from 'schemastery'
import { Config as LocalConfig } from '@deepseek-ai/dsh-bash-runner'

export interface SandboxConfig {
  network: 'none' | 'host'
  denyRead: string[]
  writable: string[]
  bwrapPath: string
  passEnv: string[]
}

export type Config = LocalConfig & SandboxConfig

export const Config: Schema<Partial<Config>, Config> = Schema.object({
  ...LocalConfig.dict,
  network: Schema.union(['none', 'host'] as const)
    .default('none')
    .description('"none": only a private loopback inside the sandbox; "host": the host\'s network.'),
  denyRead: Schema.array(Schema.string().min(1))
    .default([])
    .description('Paths hidden from commands (`~` is $HOME), besides the default credential list (always hidden).'),
  writable: Schema.array(Schema.string().min(1))
    .default([])
    .description('Directories writable besides the workspace roots and the private /tmp.'),
  bwrapPath: Schema.string()
    .min(1)
    .default('bwrap')
    .description(
      'The bubblewrap program: an absolute path, or a bare name looked up in /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin (never the session PATH); it must not be writable by others nor lie in a writable root.',
    ),
  passEnv: Schema.array(Schema.string().min(1))
    .default([])
    .description(
      'Host environment variables passed to commands besides PATH, HOME, USER, LOGNAME, SHELL, LANG, LC_*, TZ, TERM, TMPDIR (`NAME`, or `PREFIX*`).',
    ),
}) as Schema<Partial<Config>, Config>
