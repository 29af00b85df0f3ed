export {
  createDefaultContext,
  McpConfig,
  resolveConfig,
  type DefaultContext,
  type DefaultContextOptions,
  type McpSettings,
} from './compose.ts'
export { createSession } from '@deepseek-ai/dsh-tools'
export { CONFIG_KEYS, readConfigFile, validateConfig, type ConfigKey, type DshConfig } from './config.ts'
export { DshError, DshErrorCode } from './errors.ts'
