/**
 * The tools of the default composition, for `dsh --help`. Empty here: the bundle (`scripts/bundle.mjs`) replaces
 * this module with the names the composed tools register, read when it builds, so help never loads a plugin.
 */
export const TOOL_NAMES: readonly string[] = []
