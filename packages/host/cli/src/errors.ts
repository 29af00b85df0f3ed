import { HarnessError } from '@deepseek-ai/dsh-tools'

export const DshErrorCode = {
  /** `--config` cannot be read, is not JSON, has an unknown key or an invalid value. Nothing was started. */
  DSH_CONFIG_INVALID: 'DSH_CONFIG_INVALID',
  /** A plugin of the composition failed to start, or waited for a service that never arrived. */
  DSH_PLUGIN_FAILED: 'DSH_PLUGIN_FAILED',
} as const
export type DshErrorCode = (typeof DshErrorCode)[keyof typeof DshErrorCode]

/** An error of the host itself (never a tool's): the composition could not be built. */
export class DshError extends HarnessError {
  override name = 'DshError'
}
