import { scopedStore } from '../store/scoped-store';
import { activityTests } from './activity';
import { assistantTests } from './assistants';
import { artifactTests } from './artifacts/artifacts';
import { retentionTests } from './checkpoints/retention';
import { longThreadTests } from './checkpoints/long-thread';
import { timeTravelTests } from './checkpoints/time-travel';
import { useFreshBackend } from './context';
import { eventTests } from './events';
import { feedbackTests } from './feedback';
import type { StorageHarnessFactory } from './harness';
import { messageTests } from './messages/messages';
import { messageOrderTests } from './messages/order';
import { projectionTests } from './messages/projection';
import { sharedIdTests } from './messages/shared-ids';
import { registryTests } from './registry';
import { scheduleTests } from './schedules';
import { leaseTests } from './runs/leases';
import { fencingTests } from './runs/fencing';
import { carriedUsageTests } from './runs/carried-usage';
import { pausedTests } from './runs/paused';
import { multitaskTests } from './runs/pending';
import { graphRunTests } from './runs/graph-kwargs';
import { pendingCallbackTests, runTests } from './runs/runs';
import { isolationTests } from './scope-isolation';
import { searchTests } from './search';
import { lifecycleTests } from './sessions/lifecycle';
import { sessionListTests } from './sessions/list';
import { sessionTests } from './sessions/sessions';
import { runStoreConformance } from './store';
import { aggregateTests } from './usage/aggregates';
import { usageTests } from './usage/usage';

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
    // One suite per domain of the port (a folder where a domain has several), in port order.
    sessionTests(ctx);
    sessionListTests(ctx);
    lifecycleTests(ctx);
    messageTests(ctx);
    messageOrderTests(ctx);
    projectionTests(ctx);
    sharedIdTests(ctx);
    runTests(ctx);
    pendingCallbackTests(ctx);
    multitaskTests(ctx);
    graphRunTests(ctx);
    leaseTests(ctx);
    fencingTests(ctx);
    carriedUsageTests(ctx);
    pausedTests(ctx);
    eventTests(ctx);
    activityTests(ctx);
    artifactTests(ctx);
    usageTests(ctx);
    aggregateTests(ctx);
    feedbackTests(ctx);
    searchTests(ctx);
    registryTests(ctx);
    scheduleTests(ctx);
    assistantTests(ctx);
    timeTravelTests(ctx);
    longThreadTests(ctx);
    retentionTests(ctx);
    // Across domains: scope isolation and the cascade of a session delete.
    isolationTests(ctx);
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
