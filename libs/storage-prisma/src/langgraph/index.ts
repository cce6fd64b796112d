export { PrismaCheckpointSaver } from './checkpoint-saver';
export type {
  PrismaCheckpointSaverOptions,
  RootCheckpoint,
  RootCheckpointHook,
} from './checkpoint-saver';
export { PrismaStore } from './store';
export type { PrismaStoreOptions } from './store';
export {
  NAMESPACE_SEPARATOR,
  decodeNamespace,
  deleteThreadItems,
  encodeNamespace,
  namespaceHasLabel,
  namespaceHasPrefix,
  threadItemsWhere,
} from './namespace';
