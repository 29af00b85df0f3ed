import Schema from 'schemastery'
import { Config as LocalConfig } from '@deepseek-ai/dsh-bash-runner'

export interface SandboxConfig {
  network: 'none' | 'host'
  denyRead: string[]
  writable: string[]
  bwrapPath: string
}

export type Config = LocalConfig & SandboxConfig

export const Config: Schema<Partial<Config>, Config> = Schema.object({
  ...LocalConfig.dict,
  network: Schema.union(['none', 'host'] as const).default('none').description('"none": only a private loopback inside the sandbox; "host": the host\'s network.'),
  denyRead: Schema.array(Schema.string().min(1)).default([]).description('Paths hidden from commands (`~` is $HOME), besides the default credential list (always hidden).'),
  writable: Schema.array(Schema.string().min(1)).default([]).description('Directories writable besides the workspace roots and the private /tmp.'),
  bwrapPath: Schema.string().min(1).default('bwrap').description('The bubblewrap program (looked up on PATH).'),
}) as Schema<Partial<Config>, Config>
