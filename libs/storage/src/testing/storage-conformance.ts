import { scopedStore } from '../scoped-store';
import { artifactTests } from './artifacts-conformance';
import { useFreshBackend } from './context';
import type { StorageHarnessFactory } from './harness';
import { eventTests } from './events-conformance';
import { isolationTests } from './isolation-conformance';
import { lifecycleTests } from './lifecycle-conformance';
import { timeTravelTests } from './time-travel-conformance';
import { longThreadTests } from './long-thread-conformance';
import { retentionTests } from './retention-conformance';
import { leaseTests } from './lease-conformance';
import { pausedTests } from './paused-conformance';
import { messageTests } from './messages-conformance';
import { multitaskTests } from './multitask-conformance';
import { projectionTests } from './projection-conformance';
import { pendingCallbackTests, runTests } from './runs-conformance';
import { sessionListTests } from './session-list-conformance';
import { sessionTests } from './sessions-conformance';
import { runStoreConformance } from './store-conformance';
import { aggregateTests } from './aggregates-conformance';
import { usageTests } from './usage-conformance';
import { searchTests } from './search-conformance';
import { registryTests } from './registry-conformance';

/**
 * Registers the storage conformance suite: jest `describe`/`it` blocks proving that a
 * `StorageBackend` keeps every invariant of the port (sessions, messages, runs, run events, artifacts, scope isolation,
 * cascade delete, message projection and its repair, pagination edges, exact text round-trips,
 * typed validation errors, lifecycle), plus the store conformance for `backend.store` both raw
 * and through `scopedStore`.
 *
 * Call it at the top level of a backend's spec file:
 * ```ts
 * runStorageConformance('sqlite', async () => {
 *   const backend = createSqliteStorage({ path: tempFile() });
 *   return { backend, tamper: sqliteTamper(backend), cleanup: async () => { await backend.close(); rm(...) } };
 * });
 * ```
 * See `StorageConformanceHarness` for the factory contract: a fresh empty backend per test,
 * calls never overlap, `cleanup()` closes and releases it, `tamper` writes behind the port.
 */
export function runStorageConformance(name: string, factory: StorageHarnessFactory): void {
  describe(`${name}: storage conformance`, () => {
    const ctx = useFreshBackend(factory);
    sessionTests(ctx);
    sessionListTests(ctx);
    messageTests(ctx);
    runTests(ctx);
    pendingCallbackTests(ctx);
    multitaskTests(ctx);
    leaseTests(ctx);
    pausedTests(ctx);
    eventTests(ctx);
    projectionTests(ctx);
    isolationTests(ctx);
    artifactTests(ctx);
    usageTests(ctx);
    aggregateTests(ctx);
    searchTests(ctx);
    lifecycleTests(ctx);
    timeTravelTests(ctx);
    longThreadTests(ctx);
    retentionTests(ctx);
    registryTests(ctx);
  });

  const storeOf = (scoped: boolean) => async () => {
    const harness = await factory();
    await harness.backend.initialize();
    const store = scoped
      ? scopedStore(harness.backend.store, { tenant: 'conformance' })
      : harness.backend.store;
    return { store, cleanup: () => harness.cleanup() };
  };
  runStoreConformance(`${name} backend.store`, storeOf(false));
  runStoreConformance(`${name} scopedStore(backend.store)`, storeOf(true));
}
