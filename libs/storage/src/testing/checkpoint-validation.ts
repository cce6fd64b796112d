import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import { validate } from '@langchain/langgraph-checkpoint-validation';
import type { StorageConformanceHarness, StorageHarnessFactory } from './harness';

export interface CheckpointValidationOptions {
  /**
   * The name LangGraph's suite knows the saver by, when it is one of LangGraph's own savers (or a
   * subclass): the suite keys its per-saver skips on it (for `MemorySaver` it skips the
   * channel-delta test, since MemorySaver stores whole checkpoints). Defaults to `name`.
   */
  upstreamName?: string;
}

/**
 * Runs LangGraph's official checkpointer validation (`@langchain/langgraph-checkpoint-validation`,
 * ~718 tests) against `backend.checkpointer` under jest. Takes the same factory as
 * `runStorageConformance`; the validation creates a checkpointer per group of tests and this
 * helper cleans up the harness that produced it.
 */
export function runCheckpointValidation(
  name: string,
  factory: StorageHarnessFactory,
  options: CheckpointValidationOptions = {},
): void {
  const harnesses = new Map<BaseCheckpointSaver, StorageConformanceHarness>();
  describe(`${name}: LangGraph checkpoint validation`, () => {
    validate({
      checkpointerName: options.upstreamName ?? name,
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
