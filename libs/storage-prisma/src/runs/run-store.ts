import { randomUUID } from 'node:crypto';
import type { CreateRunInput, PendingRunInput, Run, UpdateRunInput } from '@cognition/contracts';
import {
  CreateRunInputSchema,
  PendingRunInputSchema,
  UpdateRunInputSchema,
} from '@cognition/contracts';
import type { PendingCallback, RunFence, RunStore, SettlePausedChange } from '@cognition/storage';
import { ENDED_RUN_STATUSES, parseInput, RunFencedError, StorageError } from '@cognition/storage';
import { applyRunUsage, lockRunRow } from '../analytics/usage-records';
import type { PrismaDb } from '../db/db';
import type { DatabaseProvider } from '../db/migrate';
import {
  guard,
  isForeignKeyViolation,
  isRecordNotFound,
  uniqueViolationFields,
} from '../db/errors';
import type { Prisma } from '../generated/postgres/client';
import { toRun } from '../mapping';
import type { RawConnection } from '../db/raw-connections';
import { requireRawConnection } from '../db/raw-connections';
import { PrismaRunCallbacks } from './run-callbacks';
import { cancelPendingRun } from './run-pending-cancel';
import { readRuns, RUN_READS } from './run-reads';
import type { NewRunRow, RunPatch } from './run-statements';
import { insertRunRaw, updateRunRaw } from './run-writes';
import type { VersionedRawRow } from './run-writes-postgres';
import type { RunVersions } from './run-writes-postgres';
import { RETURNING, split } from './run-writes-postgres';
import { sqliteTimestamp } from '../db/raw-select';
import { pgTimestamp } from '../analytics/usage-upsert';

/**
 * The claim: a conditional update that increments the claim number and answers it (one
 * statement on either provider). On PostgreSQL it answers the row with its version too, so the
 * run writes that follow (the start) are guarded by it without a read.
 */
const CLAIM = {
  /** Values: node, until, id, node, now. */
  sqlite: `UPDATE runs SET owner_node = ?, lease_expires_at = ?, lease_attempt = lease_attempt + 1
    WHERE id = ? AND status IN ('queued', 'running')
      AND (owner_node IS NULL OR owner_node = ? OR lease_expires_at < ?)
    RETURNING lease_attempt`,
  /** Values: id, node, now, until. */
  postgres: {
    name: 'cognition_run_claim',
    text: `UPDATE runs SET owner_node = $2, lease_expires_at = ${pgTimestamp('$4')},
        lease_attempt = lease_attempt + 1
      WHERE id = $1 AND status IN ('queued', 'running')
        AND (owner_node IS NULL OR owner_node = $2 OR lease_expires_at < ${pgTimestamp('$3')})
      RETURNING ${RETURNING}`,
  },
};

export class PrismaRunStore extends PrismaRunCallbacks implements RunStore {
  private lastCreatedAt = 0;
  /** The driver under `db`: a turn's run reads and writes run on it (run-reads, run-writes). */
  private readonly raw: RawConnection;
  constructor(
    db: PrismaDb,
    private readonly provider: DatabaseProvider,
    /**
     * PostgreSQL: the row versions of the runs this store wrote last (run-writes-postgres.ts),
     * shared with the event store, whose appends may carry a run's usage.
     */
    private readonly versions: RunVersions,
  ) {
    super(db);
    this.raw = requireRawConnection(db, 'The run store');
  }

  /**
   * A plain insert with `active_session_id = session_id`: the unique index on that column lets
   * exactly one of several concurrent creates (across processes) win; the others get
   * RUN_IN_PROGRESS. The (session_id, idempotency_key) unique index settles idempotent retries
   * the same way, so neither check is a read-then-write race.
   */
  async create(input: CreateRunInput): Promise<{ run: Run; created: boolean }> {
    const data = parseInput(CreateRunInputSchema, input, 'run');
    const id = data.id ?? randomUUID();
    const key = data.idempotencyKey ?? null;
    return guard('create run', async () => {
      if (key !== null) {
        const existing = await this.byIdempotencyKey(data.sessionId, key);
        if (existing) return { run: existing, created: false };
      }
      // Strictly later than this store's previous create: lists are ordered by (created_at,
      // id), and on the driver two creates fit in one millisecond, where the random id would
      // otherwise decide which of two runs is older.
      const now = new Date(Math.max(Date.now(), this.lastCreatedAt + 1));
      this.lastCreatedAt = now.getTime();
      const row: NewRunRow = {
        id,
        sessionId: data.sessionId,
        status: data.status,
        activeSessionId: data.status === 'pending' ? null : data.sessionId,
        inputMessageId: data.inputMessageId ?? null,
        idempotencyKey: key,
        multitaskStrategy: data.multitaskStrategy ?? null,
        supersedesRunId: data.supersedesRunId ?? null,
        callbackUrl: data.callbackUrl ?? null,
        callbackConfig: data.callbackConfig ? JSON.stringify(data.callbackConfig) : null,
        pendingInput: data.pendingInput ? JSON.stringify(data.pendingInput) : null,
        kwargs: data.kwargs ? JSON.stringify(data.kwargs) : null,
        ownerNode: data.ownerNode ?? null,
        leaseExpiresAt: data.leaseExpiresAt ?? null,
        startAfter: data.startAfter ?? null,
        createdAt: now,
        startedAt: data.status === 'running' ? now : null,
        updatedAt: now,
      };
      try {
        // The run and its session's usage records change atomically (run-writes.ts).
        return { run: await insertRunRaw(this.raw, this.versions, row), created: true };
      } catch (error) {
        if (isForeignKeyViolation(error)) throw StorageError.sessionNotFound(data.sessionId);
        const fields = uniqueViolationFields(error);
        // Checked whatever index reported the clash: with two creates racing on one key, Postgres
        // may report the active-run index first although the winner holds the same key.
        if (fields.length > 0 && key !== null) {
          const existing = await this.byIdempotencyKey(data.sessionId, key);
          if (existing) return { run: existing, created: false };
        }
        if (fields.includes('active_session_id')) {
          throw new StorageError(
            'RUN_IN_PROGRESS',
            `Session ${data.sessionId} already has an active run`,
            {
              cause: error,
            },
          );
        }
        if (fields.includes('id')) {
          throw new StorageError('CONFLICT', `Run already exists: ${id}`, { cause: error });
        }
        throw error;
      }
    });
  }

  async update(id: string, input: UpdateRunInput, fence?: RunFence): Promise<Run> {
    const data = parseInput(UpdateRunInputSchema, input, 'run update');
    return guard('update run', async () => {
      const patch: RunPatch = { updatedAt: new Date() };
      if (data.status !== undefined) patch.status = data.status;
      if (data.usage !== undefined)
        patch.usage = data.usage === null ? null : JSON.stringify(data.usage);
      if (data.error !== undefined)
        patch.error = data.error === null ? null : JSON.stringify(data.error);
      if (data.startedAt !== undefined) patch.startedAt = data.startedAt;
      if (data.finishedAt !== undefined) patch.finishedAt = data.finishedAt;
      if (data.baseCheckpointId !== undefined) patch.baseCheckpointId = data.baseCheckpointId;
      if (data.pendingAction !== undefined)
        patch.pendingAction =
          data.pendingAction === null ? null : JSON.stringify(data.pendingAction);
      if (data.callbackUrl !== undefined) patch.callbackUrl = data.callbackUrl;
      if (data.callbackConfig !== undefined)
        patch.callbackConfig =
          data.callbackConfig === null ? null : JSON.stringify(data.callbackConfig);
      try {
        // The run and its contribution to the session's usage records change atomically, from
        // the run's current version (run-writes.ts): concurrent writers of one run or one
        // session queue.
        const updated = await updateRunRaw(this.raw, this.versions, id, patch, fence);
        if (!updated) throw new StorageError('RUN_NOT_FOUND', `Run not found: ${id}`);
        return updated;
      } catch (error) {
        if (isRecordNotFound(error))
          throw new StorageError('RUN_NOT_FOUND', `Run not found: ${id}`);
        if (uniqueViolationFields(error).includes('active_session_id')) {
          throw new StorageError(
            'RUN_IN_PROGRESS',
            `Another run of this session is already active`,
            {
              cause: error,
            },
          );
        }
        throw error;
      }
    });
  }

  /** A conditional update on `status = 'pending'`; the active-run unique index arbitrates. */
  async promote(id: string): Promise<Run> {
    return guard('promote run', async () => {
      const row = await this.db.run.findUnique({ where: { id } });
      if (!row) throw new StorageError('RUN_NOT_FOUND', `Run not found: ${id}`);
      const input = parsePendingInput(row.pendingInput);
      // A graph run waits with its kwargs instead of a message.
      if (row.status !== 'pending' || (!input && row.kwargs === null)) {
        throw new StorageError('CONFLICT', `Run ${id} is ${row.status}, not pending`);
      }
      try {
        const { count } = await this.db.run.updateMany({
          where: { id, status: 'pending' },
          data: {
            status: 'queued',
            activeSessionId: row.sessionId,
            inputMessageId: input?.messageId ?? null,
            updatedAt: new Date(),
          },
        });
        if (count === 0) throw new StorageError('CONFLICT', `Run ${id} is no longer pending`);
      } catch (error) {
        if (uniqueViolationFields(error).includes('active_session_id')) {
          throw new StorageError(
            'RUN_IN_PROGRESS',
            `Session ${row.sessionId} already has an active run`,
            { cause: error },
          );
        }
        throw error;
      }
      const promoted = await this.db.run.findUnique({ where: { id } });
      if (!promoted) throw new StorageError('RUN_NOT_FOUND', `Run not found: ${id}`);
      return toRun(promoted);
    });
  }

  /** The run row is locked, so of several settlers exactly one reads `requires_action`. */
  async settlePaused(id: string, change: SettlePausedChange): Promise<Run | null> {
    return guard('settle paused run', async () =>
      this.db.$transaction(async (tx) => {
        await lockRunRow(tx, this.provider, id);
        const current = await tx.run.findUnique({ where: { id } });
        if (!current) throw new StorageError('RUN_NOT_FOUND', `Run not found: ${id}`);
        if (current.status !== 'requires_action') return null;
        const data: Prisma.RunUncheckedUpdateInput =
          change.status === 'queued'
            ? {
                status: 'queued',
                ownerNode: change.ownerNode ?? null,
                leaseExpiresAt: change.leaseExpiresAt ?? null,
                // Resumed for a node: a claim (what executed the run before is fenced out).
                leaseAttempt: { increment: 1 },
              }
            : {
                status: 'aborted',
                activeSessionId: null,
                error: JSON.stringify(change.error),
                finishedAt: change.finishedAt,
              };
        const updated = toRun(
          await tx.run.update({
            where: { id },
            data: { ...data, pendingAction: null, updatedAt: new Date() },
          }),
        );
        await applyRunUsage(tx, toRun(current), updated);
        return updated;
      }),
    );
  }

  cancelPending(id: string, finishedAt: Date): Promise<Run | null> {
    return guard('cancel pending run', () =>
      cancelPendingRun(this.db, this.provider, id, finishedAt),
    );
  }

  claim(id: string, node: string, now: Date, until: Date): Promise<number | null> {
    return guard('claim run', async () => {
      const raw = this.raw;
      if (raw.provider === 'sqlite') {
        const row = await raw.connection.run((session) =>
          session
            .prepare<{ lease_attempt: number }>(CLAIM.sqlite)
            .get(node, sqliteTimestamp(until), id, node, sqliteTimestamp(now)),
        );
        return row ? Number(row.lease_attempt) : null;
      }
      const result = await raw.pool.query<VersionedRawRow>({
        ...CLAIM.postgres,
        values: [id, node, now, until],
      });
      const row = result.rows[0];
      if (!row) return null;
      const entry = split(row);
      this.versions.set(id, entry);
      return Number(entry.row.lease_attempt);
    });
  }

  fenceOf(id: string): Promise<RunFence | null> {
    return guard('read run claim', async () => {
      const row = await this.db.run.findUnique({
        where: { id },
        select: { ownerNode: true, leaseAttempt: true },
      });
      if (!row || row.ownerNode === null) return null;
      return { runId: id, ownerNode: row.ownerNode, claim: row.leaseAttempt };
    });
  }

  /**
   * Under a fence, in one transaction with the run's row locked (a claim waits for it, or it
   * sees the claim): stored only while the run is held under the fence.
   */
  override savePendingCallback(input: PendingCallback, fence?: RunFence): Promise<void> {
    if (!fence) return super.savePendingCallback(input);
    return guard('save pending callback', () =>
      this.db.$transaction(async (tx) => {
        await lockRunRow(tx, this.provider, input.runId);
        const row = await tx.run.findUnique({
          where: { id: input.runId },
          select: { ownerNode: true, leaseAttempt: true },
        });
        if (row && (row.ownerNode !== fence.ownerNode || row.leaseAttempt !== fence.claim)) {
          throw new RunFencedError([input.runId]);
        }
        await this.createPending(tx, input);
      }),
    );
  }

  renewLease(id: string, node: string, until: Date): Promise<boolean> {
    return guard('renew run lease', async () => {
      const { count } = await this.db.run.updateMany({
        where: { id, ownerNode: node, status: { in: ['queued', 'running'] } },
        data: { leaseExpiresAt: until },
      });
      return count === 1;
    });
  }

  async listPending(sessionId?: string): Promise<Run[]> {
    return guard('list pending runs', async () => {
      return sessionId === undefined
        ? readRuns(this.raw, RUN_READS.pending, [])
        : readRuns(this.raw, RUN_READS.pendingOfSession, [sessionId]);
    });
  }

  async pendingInput(id: string): Promise<PendingRunInput | null> {
    return guard('read pending input', async () => {
      const row = await this.db.run.findUnique({ where: { id }, select: { pendingInput: true } });
      return parsePendingInput(row?.pendingInput ?? null);
    });
  }

  async get(id: string): Promise<Run | null> {
    return guard('get run', async () => {
      const [run] = await readRuns(this.raw, RUN_READS.byId, [id]);
      return run ?? null;
    });
  }

  async list(sessionId: string): Promise<Run[]> {
    return guard('list runs', async () => {
      return readRuns(this.raw, RUN_READS.bySession, [sessionId]);
    });
  }

  async delete(id: string): Promise<boolean> {
    return guard('delete run', async () => {
      // One conditional statement: a run that has not ended is never deleted, whatever races it.
      const deleted = await this.db.run.deleteMany({
        where: { id, status: { in: [...ENDED_RUN_STATUSES] } },
      });
      if (deleted.count > 0) return true;
      const run = await this.db.run.findUnique({ where: { id }, select: { status: true } });
      if (!run) return false;
      throw new StorageError('CONFLICT', `Run ${id} has not ended (${run.status})`);
    });
  }

  async getActive(sessionId: string): Promise<Run | null> {
    return guard('get active run', async () => {
      const [run] = await readRuns(this.raw, RUN_READS.active, [sessionId]);
      return run ?? null;
    });
  }

  async getActiveAndPending(sessionId: string): Promise<{ active: Run | null; pending: Run[] }> {
    return guard('get active and pending runs', async () => {
      const runs = await readRuns(this.raw, RUN_READS.activeAndPending, [sessionId]);
      const pending = runs.filter((run) => run.status === 'pending');
      return { active: runs.find((run) => run.status !== 'pending') ?? null, pending };
    });
  }

  async listActive(): Promise<Run[]> {
    return guard('list active runs', async () => {
      const rows = await this.db.run.findMany({
        where: { status: { in: ['queued', 'running'] } },
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      });
      return rows.map(toRun);
    });
  }

  private async byIdempotencyKey(sessionId: string, key: string): Promise<Run | null> {
    const [run] = await readRuns(this.raw, RUN_READS.byKey, [sessionId, key]);
    return run ?? null;
  }
}

function parsePendingInput(text: string | null): PendingRunInput | null {
  if (text === null) return null;
  return PendingRunInputSchema.parse(JSON.parse(text));
}
