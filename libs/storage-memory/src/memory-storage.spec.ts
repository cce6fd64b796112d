import type { ProjectionTamper, StorageConformanceHarness } from '@cognition/storage/testing';
import {
  runCheckpointValidation,
  runStorageConformance,
  runStoreIndexConformance,
} from '@cognition/storage/testing';
import { MemoryStorage } from './memory-storage';

function tamperOf(backend: MemoryStorage): ProjectionTamper {
  const rowsOf = (sessionId: string) => backend.state.messages.get(sessionId) ?? [];
  return {
    deleteMessageRow(sessionId, messageId) {
      backend.state.messages.set(
        sessionId,
        rowsOf(sessionId).filter((row) => row.message.id !== messageId),
      );
      return Promise.resolve();
    },
    setMessageContent(sessionId, messageId, content) {
      const row = rowsOf(sessionId).find((candidate) => candidate.message.id === messageId);
      if (row) row.message.content = content;
      return Promise.resolve();
    },
    setProjectedCheckpointId(sessionId, checkpointId) {
      const record = backend.state.sessions.get(sessionId);
      if (record) record.projectedCheckpointId = checkpointId;
      return Promise.resolve();
    },
  };
}

function harness(): Promise<StorageConformanceHarness> {
  const backend = new MemoryStorage();
  return Promise.resolve({ backend, tamper: tamperOf(backend), cleanup: () => backend.close() });
}

runStorageConformance('memory', harness);
runCheckpointValidation('memory', harness);
runStoreIndexConformance('memory', (index) => {
  const backend = new MemoryStorage({ storeIndex: index });
  return Promise.resolve({ store: backend.store, cleanup: () => backend.close() });
});
