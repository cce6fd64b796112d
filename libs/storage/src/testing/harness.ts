import type { BaseStore } from '@langchain/langgraph-checkpoint';
import type { StorageBackend } from '../backend';

/**
 * Direct writes that bypass the port, used by the conformance suite to put a backend into the
 * states a crash or a manual edit could leave behind. Each backend's spec implements them against
 * its own tables (memory: its maps; Prisma: plain SQL).
 */
export interface ProjectionTamper {
  /** Deletes one message row, leaving messageCount and projectedCheckpointId untouched. */
  deleteMessageRow(sessionId: string, messageId: string): Promise<void>;
  /** Overwrites the content of one message row. */
  setMessageContent(sessionId: string, messageId: string, content: string): Promise<void>;
  /**
   * Overwrites the session's recorded `projectedCheckpointId` (null or an older checkpoint id),
   * as a crash after the checkpoint write and before the projection write would leave it.
   */
  setProjectedCheckpointId(sessionId: string, checkpointId: string | null): Promise<void>;
}

/**
 * What a backend's spec hands the conformance suite.
 *
 * Contract of the factory (`() => Promise<StorageConformanceHarness>`):
 * - it is called before EVERY test and must return a backend holding no data at all (a fresh
 *   database, or a shared one it has wiped);
 * - calls never overlap: `cleanup()` of one harness resolves before the next factory call, so a
 *   factory may reuse one database across tests;
 * - the backend may be initialized or not: the suite calls `initialize()` itself (it is
 *   idempotent);
 * - `cleanup()` must close the backend (the suite may already have closed it: `close()` is
 *   idempotent) and release what the factory created (temp files, databases).
 */
export interface StorageConformanceHarness {
  backend: StorageBackend;
  tamper: ProjectionTamper;
  cleanup(): Promise<void>;
}

export type StorageHarnessFactory = () => Promise<StorageConformanceHarness>;

/**
 * What a store's spec hands the store conformance suite: an empty store per call; calls never
 * overlap and `cleanup()` releases it.
 */
export interface StoreConformanceHarness {
  store: BaseStore;
  cleanup(): Promise<void>;
}

export type StoreHarnessFactory = () => Promise<StoreConformanceHarness>;
