import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import { validate } from '@langchain/langgraph-checkpoint-validation';
import type { StorageConformanceHarness, StorageHarnessFactory } from './harness';

/**
 * Runs LangGraph's official checkpointer validation (`@langchain/langgraph-checkpoint-validation`,
 * 718 tests) against `backend.checkpointer` under jest. Takes the same factory as
 * `runStorageConformance`; the validation creates a checkpointer per group of tests and this
 * helper cleans up the harness that produced it. The suite skips tests only for the upstream
 * savers' own names (`MemorySaver`, `@langchain/langgraph-checkpoint-sqlite`, ...), so under a
 * backend's name all 718 run.
 */
export function runCheckpointValidation(name: string, factory: StorageHarnessFactory): void {
  const harnesses = new Map<BaseCheckpointSaver, StorageConformanceHarness>();
  describe(`${name}: LangGraph checkpoint validation`, () => {
    validate({
      checkpointerName: name,
      async createCheckpointer() {
        const harness = await factory();
        await harness.backend.initialize();
        harnesses.set(harness.backend.checkpointer, harness);
        return harness.backend.checkpointer;
      },
      async destroyCheckpointer(checkpointer) {
        const harness = harnesses.get(checkpointer);
        harnesses.delete(checkpointer);
        await harness?.cleanup();
      },
    });
  });
}
