import type { StorageBackend } from '../backend';
import type { ProjectionTamper, StorageConformanceHarness, StorageHarnessFactory } from './harness';

/** The per-test view of a harness; the getters read the harness of the running test. */
export interface SuiteContext {
  readonly backend: StorageBackend;
  readonly tamper: ProjectionTamper;
}

/** Registers a fresh, initialized backend per test and returns accessors to it. */
export function useFreshBackend(factory: StorageHarnessFactory): SuiteContext {
  let harness: StorageConformanceHarness | undefined;
  beforeEach(async () => {
    harness = await factory();
    await harness.backend.initialize();
  });
  afterEach(async () => {
    const current = harness;
    harness = undefined;
    await current?.cleanup();
  });
  const current = (): StorageConformanceHarness => {
    if (!harness) throw new Error('no storage harness: used outside a test');
    return harness;
  };
  return {
    get backend() {
      return current().backend;
    },
    get tamper() {
      return current().tamper;
    },
  };
}
