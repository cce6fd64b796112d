import type { Scope, StorageBackend } from '@cognition/storage';
// Procedure tests run on the real in-process backend; production code never imports an
// implementation (only apps/server picks one).
import { createMemoryStorage } from '@cognition/storage-memory';
import { TRPCError } from '@trpc/server';
import { createCaller } from './caller';
import type { ApiServices, BreakerSnapshot } from './context';
import { createApiContext } from './context';

export interface ApiTestBed {
  storage: StorageBackend;
  services: ApiServices;
  breakerSnapshots: BreakerSnapshot[];
  /** A caller bound to `scope` (default: the empty scope, i.e. scoping disabled). */
  as(scope?: Scope): ReturnType<typeof createCaller>;
}

export async function createApiTestBed(): Promise<ApiTestBed> {
  const storage = createMemoryStorage();
  await storage.initialize();
  const breakerSnapshots: BreakerSnapshot[] = [];
  const services: ApiServices = {
    storage,
    breakers: { snapshots: () => breakerSnapshots },
    version: '1.2.3-test',
  };
  return {
    storage,
    services,
    breakerSnapshots,
    as: (scope = {}) => createCaller(createApiContext(services, { scope }, 'req-test')),
  };
}

/** The TRPCError a call rejected with; fails the test when it resolved or threw something else. */
export async function trpcErrorOf(call: Promise<unknown>): Promise<TRPCError> {
  try {
    await call;
  } catch (error) {
    if (error instanceof TRPCError) return error;
    throw new Error(`expected a TRPCError, got ${String(error)}`);
  }
  throw new Error('expected the call to fail, it succeeded');
}
