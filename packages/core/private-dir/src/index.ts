export {
  anchored,
  CREATE_FILE_FLAGS,
  Dir,
  makePrivateTempDir,
  openPrivateDir,
  openSharedDir,
  PrivateDirError,
  PrivateDirErrorCode,
  type OpenPrivateOptions,
} from './dir.ts'
export { dueForPruning, prune, PRUNE_INTERVAL_MS, type PruneCount, type PruneOptions } from './prune.ts'
