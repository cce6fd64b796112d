import type {
  ArtifactStoreOptions,
  SessionPolicy,
  RollbackResult,
  StorageBackend,
  StorageBackendKind,
  StorageHealth,
  StoreIndexConfig,
} from '@cognition/storage';
import {
  checkpointMessages,
  DEFAULT_SESSION_POLICY,
  parseInput,
  ROOT_CHECKPOINT_NS,
  StorageError,
} from '@cognition/storage';
import { z } from 'zod';
import type { DatabaseHandle, OpenOptions, PrismaDb, PrismaTx } from './db/db';
import { createPostgresHandle, createSqliteHandle } from './db/db';
import { rawConnectionOf } from './db/raw-connections';
import { deleteSessionArtifacts, PrismaArtifactStore } from './artifacts/artifact-store';
import { guard, toStorageError } from './db/errors';
import { PrismaEventStore } from './runs/event-store';
import { deleteThreadItems, PrismaCheckpointSaver, PrismaStore } from './langgraph';
import { PrismaMessageStore } from './messages/message-store';
import { messageProjectionHook, writeProjection } from './messages/projection';
import { forgetAfterPut } from './messages/projection-ahead';
import { rollbackRun } from './runs/run-rollback';
import { PrismaFeedbackStore } from './analytics/feedback-store';
import { PrismaSearchStore } from './analytics/search-store';
import { PrismaUsageStore } from './analytics/usage-store';
import { PrismaRunStore } from './runs/run-store';
import { RunVersions } from './runs/run-writes-postgres';
import { PrismaSessionStore } from './sessions/session-store';
import { PrismaActivityStore } from './sessions/activity-store';
import { PrismaRegistryStore } from './registry-store';
import { PrismaScheduleStore } from './schedules/schedule-store';
import { PrismaAssistantStore } from './assistants/assistant-store';
import { PrismaCheckpointRetention } from './langgraph/checkpoint-retention';
import type { PolicyRef } from './mapping';

/**
 * Where the Prisma backend keeps its data. `path` is a SQLite file (the server defaults it to
 * `<workspace>/.cognition/state.db`); `poolSize` bounds the Postgres connections of this process.
 * `migrationsDir` overrides where the committed migrations are read (see `migrate.ts`).
 * `artifactMaxBytes` bounds an artifact's decoded content (default 10 MiB). `storeIndex` is the
 * LangGraph store's semantic index (`langgraph.json`'s `store.index`; none by default).
 */
export type PrismaStorageConfig =
  | ({ provider: 'sqlite'; path: string } & OpenOptions & ArtifactOptions)
  | ({ provider: 'postgresql'; url: string; poolSize?: number } & OpenOptions & ArtifactOptions);

interface ArtifactOptions {
  artifactMaxBytes?: number;
  storeIndex?: StoreIndexConfig;
}

/** Concurrent rebuilds lose to a checkpoint written meanwhile; they retry this many times. */
const REBUILD_ATTEMPTS = 5;

class StaleProjection extends Error {}

/**
 * A StorageBackend on SQLite or PostgreSQL through Prisma driver adapters. Construction connects
 * to nothing; `initialize()` migrates, connects and repairs drifted projections.
 */
export function createPrismaStorage(config: PrismaStorageConfig): StorageBackend {
  // The index holds the embedder (an object with methods): it is passed on, not parsed.
  const { storeIndex, ...plain } = config;
  const parsed = parseInput(PrismaStorageConfigSchema, plain, 'storage config');
  const handle =
    parsed.provider === 'sqlite'
      ? createSqliteHandle(parsed.path, parsed)
      : createPostgresHandle(parsed.url, parsed);
  return new PrismaStorage(handle, { maxBytes: parsed.artifactMaxBytes }, storeIndex);
}

const OpenOptionsSchema = {
  migrationsDir: z.string().min(1).optional(),
  transactionMaxWaitMs: z.number().int().positive().optional(),
  transactionTimeoutMs: z.number().int().positive().optional(),
  artifactMaxBytes: z.number().int().positive().optional(),
};

const PrismaStorageConfigSchema = z.discriminatedUnion('provider', [
  z
    .object({ provider: z.literal('sqlite'), path: z.string().min(1), ...OpenOptionsSchema })
    .strict(),
  z
    .object({
      provider: z.literal('postgresql'),
      url: z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL'),
      poolSize: z.number().int().min(1).max(1000).optional(),
      ...OpenOptionsSchema,
    })
    .strict(),
]);

class PrismaStorage implements StorageBackend {
  readonly kind: StorageBackendKind;
  readonly sessions: PrismaSessionStore;
  readonly messages: PrismaMessageStore;
  readonly runs: PrismaRunStore;
  readonly artifacts: PrismaArtifactStore;
  readonly events: PrismaEventStore;
  readonly usage: PrismaUsageStore;
  readonly feedback: PrismaFeedbackStore;
  readonly search: PrismaSearchStore;
  readonly activity: PrismaActivityStore;
  readonly checkpoints: PrismaCheckpointRetention;
  readonly registry: PrismaRegistryStore;
  readonly schedules: PrismaScheduleStore;
  readonly assistants: PrismaAssistantStore;
  private readonly policy: PolicyRef = { current: { ...DEFAULT_SESSION_POLICY } };
  readonly checkpointer: PrismaCheckpointSaver;
  readonly store: PrismaStore;
  private readonly db: PrismaDb;
  private initializing: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly handle: DatabaseHandle,
    artifacts: ArtifactStoreOptions,
    storeIndex?: StoreIndexConfig,
  ) {
    this.db = handle.db;
    this.kind = handle.provider === 'sqlite' ? 'sqlite' : 'postgres';
    this.sessions = new PrismaSessionStore(
      this.db,
      (tx, threadId) => this.deleteThread(tx, threadId),
      handle.provider,
      this.policy,
    );
    this.messages = new PrismaMessageStore(this.db, this.policy);
    this.activity = new PrismaActivityStore(this.db, this.policy);
    this.checkpoints = new PrismaCheckpointRetention(this.db, handle.provider);
    // The run store's row versions guard the run updates an event append carries.
    const runVersions = new RunVersions();
    this.runs = new PrismaRunStore(this.db, handle.provider, runVersions);
    this.usage = new PrismaUsageStore(this.db, handle.provider);
    this.feedback = new PrismaFeedbackStore(this.db);
    this.search = new PrismaSearchStore(this.db, handle.provider);
    this.artifacts = new PrismaArtifactStore(this.db, artifacts);
    this.events = new PrismaEventStore(this.db, runVersions);
    this.checkpointer = new PrismaCheckpointSaver(this.db, {
      onRootCheckpoint: messageProjectionHook,
      provider: handle.provider,
    });
    this.store = new PrismaStore(this.db, storeIndex ? { index: storeIndex } : {});
    this.registry = new PrismaRegistryStore(this.db);
    this.schedules = new PrismaScheduleStore(this.db, handle.provider, this.policy);
    this.assistants = new PrismaAssistantStore(this.db);
  }

  setSessionPolicy(policy: Partial<SessionPolicy>): void {
    this.policy.current = { ...this.policy.current, ...policy };
  }

  /**
   * Idempotent, and repeatable: every call re-checks the projections (an operator may call it
   * again after repairing data by hand). Concurrent calls share one run.
   */
  initialize(): Promise<void> {
    if (this.closed)
      return Promise.reject(new StorageError('UNAVAILABLE', 'Storage backend is closed'));
    this.initializing ??= (async () => {
      try {
        await this.handle.migrate();
        await this.handle.connect();
        await this.repairDrift();
        this.store.start();
      } catch (error) {
        throw toStorageError(error, 'initialize storage');
      } finally {
        this.initializing = undefined;
      }
    })();
    return this.initializing;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.store.stop();
    await this.handle.close();
  }

  async healthCheck(): Promise<StorageHealth> {
    const started = performance.now();
    const pool = this.handle.poolStats?.();
    const base = { backend: this.kind, ...(pool ? { pool } : {}) };
    if (this.closed)
      return { ...base, ok: false, latencyMs: 0, error: 'storage backend is closed' };
    try {
      await this.db.$queryRawUnsafe('SELECT 1');
      return { ...base, ok: true, latencyMs: performance.now() - started };
    } catch (error) {
      return {
        ...base,
        ok: false,
        latencyMs: performance.now() - started,
        error: toStorageError(error, 'health check').message,
      };
    }
  }

  /**
   * Re-derives the rows from the latest root checkpoint. The checkpoint is read outside the
   * write transaction (through the saver, which owns its encoding); the transaction then checks
   * that it is still the latest after taking the session row's lock, and starts over otherwise,
   * so a checkpoint committed meanwhile is never overwritten by an older projection.
   */
  rebuildMessageProjection(sessionId: string): Promise<{ messages: number }> {
    return guard('rebuild message projection', async () => {
      for (let attempt = 1; ; attempt += 1) {
        const session = await this.db.session.findUnique({
          where: { id: sessionId },
          select: { threadId: true },
        });
        if (!session) throw StorageError.sessionNotFound(sessionId);
        const { threadId } = session;
        const tuple = await this.checkpointer.getTuple({
          configurable: { thread_id: threadId, checkpoint_ns: ROOT_CHECKPOINT_NS },
        });
        const checkpointId = tuple?.checkpoint.id ?? null;
        try {
          // The thread's latest checkpoint is read after the session row is locked: one
          // committed meanwhile makes this projection stale, and it starts over.
          const count = await writeProjection(this.db, {
            threadId,
            checkpointId,
            messages: tuple ? checkpointMessages(tuple.checkpoint) : [],
            gate: (latest) => {
              if (latest !== checkpointId) throw new StaleProjection();
              return true;
            },
          });
          return { messages: count ?? 0 };
        } catch (error) {
          if (!(error instanceof StaleProjection) || attempt >= REBUILD_ATTEMPTS) throw error;
        }
      }
    });
  }

  rollbackRun(runId: string): Promise<RollbackResult> {
    return guard('roll back run', () => rollbackRun(this.db, runId));
  }

  /**
   * Rebuilds every session whose projection cannot be trusted: its recorded
   * `projected_checkpoint_id` differs from the latest root checkpoint of its thread (a crash
   * between writes, or rows edited by hand), its `message_count` differs from its row count, or
   * its positions are not exactly `0 … rows − 1` (a row deleted by hand): paging reads
   * `seq >= offset` and relies on them being dense.
   */
  private async repairDrift(): Promise<void> {
    const sessions = await this.db.session.findMany({
      select: { id: true, threadId: true, projectedCheckpointId: true, messageCount: true },
    });
    if (sessions.length === 0) return;
    const [latest, counts] = await Promise.all([
      this.db.checkpoint.groupBy({
        by: ['threadId'],
        where: { checkpointNs: ROOT_CHECKPOINT_NS },
        _max: { checkpointId: true },
      }),
      this.db.message.groupBy({
        by: ['sessionId'],
        _count: { _all: true },
        _min: { seq: true },
        _max: { seq: true },
      }),
    ]);
    const latestByThread = new Map(latest.map((row) => [row.threadId, row._max.checkpointId]));
    const rowsBySession = new Map(counts.map((row) => [row.sessionId, row]));
    for (const session of sessions) {
      const rows = rowsBySession.get(session.id);
      const count = rows?._count._all ?? 0;
      // Positions are unique per session, so min 0 and max count − 1 mean exactly 0 … count − 1.
      const dense = !rows || (rows._min.seq === 0 && rows._max.seq === count - 1);
      const drifted =
        (latestByThread.get(session.threadId) ?? null) !== session.projectedCheckpointId ||
        count !== session.messageCount ||
        !dense;
      if (drifted) await this.rebuildMessageProjection(session.id);
    }
  }

  private async deleteThread(tx: PrismaTx, threadId: string): Promise<void> {
    // What this process remembers of the thread to spare reads goes with it: bounded, but a
    // deleted session's checkpoint and rows would otherwise stay in memory until evicted.
    this.checkpointer.forgetThread(threadId);
    const raw = rawConnectionOf(this.db);
    if (raw?.provider === 'postgresql') forgetAfterPut(raw.pool, threadId);
    const session = await tx.session.findUnique({ where: { threadId }, select: { id: true } });
    if (session) await deleteSessionArtifacts(tx, session.id);
    await tx.checkpointWrite.deleteMany({ where: { threadId } });
    await tx.checkpoint.deleteMany({ where: { threadId } });
    await deleteThreadItems(tx, threadId);
  }
}
