export * from './harness';
export { runStorageConformance } from './storage-conformance';
export { runStoreConformance } from './store';
export { runCheckpointValidation } from './checkpoint-validation';
export {
  expectStorageError,
  expectValidationError,
  nextCheckpointId,
  putMessagesCheckpoint,
} from './helpers';
export {
  fakeEmbedder,
  fakeEmbedding,
  runStoreIndexConformance,
  type IndexedStoreHarnessFactory,
} from './store-index';
