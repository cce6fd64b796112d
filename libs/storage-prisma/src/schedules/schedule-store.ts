import type {
  ListSchedulesFilter,
  Schedule,
  ScheduleFire,
  ScheduleTarget,
} from '@cognition/contracts';
import type {
  AdmittedFiring,
  FiringAdmission,
  ClaimDueInput,
  ClaimedOccurrence,
  FireRun,
  NewSchedule,
  Scope,
  ScheduleStore,
  ScheduleUpdate,
} from '@cognition/storage';
import {
  compareSchedules,
  NewScheduleSchema,
  parseInput,
  parseScheduleFilter,
  scheduleMatches,
  ScheduleUpdateSchema,
  scopeMatches,
  StorageError,
} from '@cognition/storage';
import type { PrismaDb, PrismaTx } from '../db/db';
import type { RawConnection } from '../db/raw-connections';
import { requireRawConnection } from '../db/raw-connections';
import type { PolicyRef } from '../mapping';
import { admitFirings } from './firing-admission';
import { anyDue, anyUnsettled } from './idle-probe';
import type { DatabaseProvider } from '../db/migrate';
import { guard, isUniqueViolation } from '../db/errors';
import type {
  Schedule as ScheduleRow,
  ScheduleFire as FireRow,
} from '../generated/postgres/client';

function toSchedule(row: ScheduleRow): Schedule {
  return {
    id: row.id,
    scope: JSON.parse(row.scope) as Record<string, string>,
    kind: row.kind as Schedule['kind'],
    expression: row.expression,
    timezone: row.timezone,
    runAt: row.runAt,
    endTime: row.endTime,
    enabled: row.enabled,
    misfire: row.misfire as Schedule['misfire'],
    target: JSON.parse(row.target) as ScheduleTarget,
    content: row.content,
    metadata: JSON.parse(row.metadata) as Record<string, string>,
    callbackUrl: row.callbackUrl,
    multitaskStrategy: row.multitaskStrategy as Schedule['multitaskStrategy'],
    nextFireAt: row.nextFireAt,
    lastFiredAt: row.lastFiredAt,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

function toFire(row: FireRow): ScheduleFire {
  return {
    scheduleId: row.scheduleId,
    dueAt: row.dueAt,
    claimedAt: row.claimedAt,
    nodeId: row.nodeId,
    reason: row.reason as ScheduleFire['reason'],
    runId: row.runId,
    sessionId: row.sessionId,
    cleanup: row.cleanup as ScheduleFire['cleanup'],
  };
}

const notFound = (id: string) => new StorageError('NOT_FOUND', `Schedule not found: ${id}`);

/**
 * Schedules on `schedules` / `schedule_fires`. A pass claims its due occurrences in one
 * transaction of a fixed number of statements, whatever their number: on PostgreSQL it selects
 * them `FOR UPDATE SKIP LOCKED` (a row another node is claiming is passed over, so the nodes of
 * a cluster take disjoint batches instead of queueing on each other's locks), moves them on with
 * one UPDATE from a JSON list and adds their fires with one INSERT; on SQLite the transaction
 * holds the connection's lock (one writer), so a plain select is enough. The fire's primary key
 * `(schedule_id, due_at)` refuses a second fire of one occurrence besides.
 * Scope and metadata filters are applied in code after the indexed filters (schedules per
 * tenant are few; the tenant scope is JSON text, as the registry's data is).
 */
export class PrismaScheduleStore implements ScheduleStore {
  /** The driver under `db`: `admitFirings` runs on it (firing-admission.ts). */
  private readonly raw: RawConnection;

  constructor(
    private readonly db: PrismaDb,
    private readonly provider: DatabaseProvider,
    private readonly policy: PolicyRef,
  ) {
    this.raw = requireRawConnection(db, 'The schedule store');
  }

  create(input: NewSchedule, scope: Scope): Promise<Schedule> {
    return guard('create schedule', async () => {
      const s = parseInput(NewScheduleSchema, input, 'schedule');
      const now = new Date();
      try {
        const row = await this.db.schedule.create({
          data: {
            id: s.id,
            scope: JSON.stringify(scope),
            kind: s.kind,
            expression: s.expression,
            timezone: s.timezone,
            runAt: s.runAt,
            endTime: s.endTime,
            enabled: s.enabled,
            misfire: s.misfire,
            target: JSON.stringify(s.target),
            targetSessionId: s.target.kind === 'session' ? s.target.sessionId : null,
            content: s.content,
            metadata: JSON.stringify(s.metadata),
            callbackUrl: s.callbackUrl,
            multitaskStrategy: s.multitaskStrategy,
            nextFireAt: s.nextFireAt,
            lastFiredAt: null,
            createdAt: now,
            updatedAt: now,
          },
        });
        return toSchedule(row);
      } catch (error) {
        if (isUniqueViolation(error)) {
          throw new StorageError('CONFLICT', `Schedule ${s.id} already exists`);
        }
        throw error;
      }
    });
  }

  get(id: string, scope: Scope): Promise<Schedule | null> {
    return guard('read schedule', async () => {
      const row = await this.db.schedule.findUnique({ where: { id } });
      if (!row) return null;
      const schedule = toSchedule(row);
      return scopeMatches(scope, schedule.scope) ? schedule : null;
    });
  }

  list(scope: Scope, filter?: ListSchedulesFilter): Promise<{ items: Schedule[]; total: number }> {
    return guard('list schedules', async () => {
      const parsed = parseScheduleFilter(filter);
      const rows = await this.db.schedule.findMany({
        where: {
          ...(parsed.enabled !== undefined ? { enabled: parsed.enabled } : {}),
          ...(parsed.sessionId !== undefined ? { targetSessionId: parsed.sessionId } : {}),
        },
      });
      const matching = rows
        .map(toSchedule)
        .filter((s) => scheduleMatches(s, scope, parsed))
        .sort(compareSchedules);
      return {
        items: matching.slice(parsed.offset, parsed.offset + parsed.limit),
        total: matching.length,
      };
    });
  }

  update(id: string, update: ScheduleUpdate, scope: Scope): Promise<Schedule> {
    return guard('update schedule', async () => {
      const patch = parseInput(ScheduleUpdateSchema, update, 'schedule update');
      if (!(await this.get(id, scope))) throw notFound(id);
      const { metadata, ...rest } = patch;
      const { count } = await this.db.schedule.updateMany({
        where: { id },
        data: {
          ...rest,
          ...(metadata !== undefined ? { metadata: JSON.stringify(metadata) } : {}),
          updatedAt: new Date(),
        },
      });
      const row = count > 0 ? await this.db.schedule.findUnique({ where: { id } }) : null;
      if (!row) throw notFound(id);
      return toSchedule(row);
    });
  }

  delete(id: string, scope: Scope): Promise<boolean> {
    return guard('delete schedule', async () => {
      if (!(await this.get(id, scope))) return false;
      const { count } = await this.db.schedule.deleteMany({ where: { id } });
      return count > 0;
    });
  }

  claimDue(input: ClaimDueInput): Promise<ClaimedOccurrence[]> {
    return guard('claim due schedule occurrences', async () => {
      if (!(await anyDue(this.raw, input.dueBy ?? input.now))) return [];
      return this.db.$transaction(async (tx) => {
        const rows = await this.lockDue(tx, input.dueBy ?? input.now, input.limit);
        const claimed = rows.map((row): ClaimedOccurrence => {
          const schedule = toSchedule(row);
          const dueAt = row.nextFireAt ?? input.now;
          return { schedule, dueAt, ...input.decide(schedule) };
        });
        if (claimed.length === 0) return [];
        await this.moveOn(tx, claimed, input.now);
        const fires = claimed.flatMap((c) =>
          c.reason === null
            ? []
            : [
                {
                  scheduleId: c.schedule.id,
                  dueAt: c.dueAt,
                  claimedAt: input.now,
                  nodeId: input.nodeId,
                  reason: c.reason,
                  sessionId: c.sessionId,
                  cleanup: 'none',
                },
              ],
        );
        if (fires.length > 0) await tx.scheduleFire.createMany({ data: fires });
        return claimed;
      });
    });
  }

  /** The schedules due by `now` this transaction may claim, earliest first (class comment). */
  private async lockDue(tx: PrismaTx, now: Date, limit: number): Promise<ScheduleRow[]> {
    const where = { enabled: true, nextFireAt: { lte: now } };
    const orderBy = [{ nextFireAt: 'asc' as const }, { id: 'asc' as const }];
    if (this.provider === 'sqlite') return tx.schedule.findMany({ where, orderBy, take: limit });
    // A timestamp column without zone: the zone of the ISO text is ignored, as Prisma's are.
    const locked = await tx.$queryRaw<{ id: string }[]>`
      SELECT id FROM schedules
      WHERE enabled AND next_fire_at <= ${now.toISOString()}::timestamp
      ORDER BY next_fire_at, id LIMIT ${limit}
      FOR UPDATE SKIP LOCKED`;
    if (locked.length === 0) return [];
    return tx.schedule.findMany({ where: { id: { in: locked.map((r) => r.id) } }, orderBy });
  }

  /** Each claimed schedule's `nextFireAt` and `lastFiredAt` as decided (rows locked already). */
  private async moveOn(tx: PrismaTx, claimed: ClaimedOccurrence[], now: Date): Promise<void> {
    if (this.provider === 'sqlite') {
      for (const c of claimed) {
        await tx.schedule.update({
          where: { id: c.schedule.id },
          data: { nextFireAt: c.nextFireAt, lastFiredAt: c.dueAt, updatedAt: now },
        });
      }
      return;
    }
    const values = JSON.stringify(
      claimed.map((c) => ({
        id: c.schedule.id,
        due: c.dueAt.toISOString(),
        next: c.nextFireAt?.toISOString() ?? null,
      })),
    );
    await tx.$executeRaw`
      UPDATE schedules AS s
      SET next_fire_at = v.next, last_fired_at = v.due, updated_at = ${now.toISOString()}::timestamp
      FROM json_to_recordset(${values}::json) AS v(id text, due timestamp, next timestamp)
      WHERE s.id = v.id`;
  }

  addFire(fire: Omit<ScheduleFire, 'runId' | 'sessionId' | 'cleanup'>): Promise<void> {
    return guard('add schedule fire', async () => {
      try {
        await this.db.scheduleFire.create({ data: { ...fire, cleanup: 'none' } });
      } catch (error) {
        if (isUniqueViolation(error)) {
          throw new StorageError(
            'CONFLICT',
            `Schedule ${fire.scheduleId} already fired at that time`,
          );
        }
        if ((await this.db.schedule.count({ where: { id: fire.scheduleId } })) === 0) {
          throw notFound(fire.scheduleId);
        }
        throw error;
      }
    });
  }

  updateFire(
    scheduleId: string,
    dueAt: Date,
    update: Partial<Pick<ScheduleFire, 'runId' | 'sessionId' | 'cleanup'>>,
  ): Promise<void> {
    return guard('update schedule fire', async () => {
      await this.db.scheduleFire.updateMany({ where: { scheduleId, dueAt }, data: update });
    });
  }

  recordRuns(fires: FireRun[]): Promise<void> {
    if (fires.length === 0) return Promise.resolve();
    return guard('record schedule fire runs', async () => {
      if (this.provider === 'sqlite') {
        await this.db.$transaction(async (tx) => {
          for (const { scheduleId, dueAt, ...data } of fires) {
            await tx.scheduleFire.updateMany({ where: { scheduleId, dueAt }, data });
          }
        });
        return;
      }
      const values = JSON.stringify(fires.map((f) => ({ ...f, dueAt: f.dueAt.toISOString() })));
      await this.db.$executeRaw`
        UPDATE schedule_fires AS f
        SET run_id = v."runId", session_id = v."sessionId", cleanup = v.cleanup
        FROM json_to_recordset(${values}::json)
          AS v("scheduleId" text, "dueAt" timestamp, "runId" text, "sessionId" text, cleanup text)
        WHERE f.schedule_id = v."scheduleId" AND f.due_at = v."dueAt"`;
    });
  }

  admitFirings(firings: FiringAdmission[]): Promise<AdmittedFiring[]> {
    return guard('admit schedule firings', () =>
      admitFirings(this.raw, this.policy.current, firings),
    );
  }

  reclaimFire(fire: ScheduleFire, nodeId: string, now: Date): Promise<boolean> {
    return guard('reclaim schedule fire', async () => {
      const { count } = await this.db.scheduleFire.updateMany({
        where: {
          scheduleId: fire.scheduleId,
          dueAt: fire.dueAt,
          runId: null,
          claimedAt: fire.claimedAt,
        },
        data: { nodeId, claimedAt: now },
      });
      return count > 0;
    });
  }

  listFires(scheduleId: string, scope: Scope, limit: number): Promise<ScheduleFire[]> {
    return guard('list schedule fires', async () => {
      if (!(await this.get(scheduleId, scope))) return [];
      const rows = await this.db.scheduleFire.findMany({
        where: { scheduleId },
        orderBy: { dueAt: 'desc' },
        take: limit,
      });
      return rows.map(toFire);
    });
  }

  listUnsettledFires(claimedBefore: Date, limit: number): Promise<ScheduleFire[]> {
    return guard('list unsettled schedule fires', async () => {
      if (!(await anyUnsettled(this.raw, claimedBefore))) return [];
      const rows = await this.db.scheduleFire.findMany({
        where: {
          OR: [
            { runId: null, cleanup: 'none', claimedAt: { lt: claimedBefore } },
            { cleanup: 'pending' },
          ],
        },
        orderBy: { claimedAt: 'asc' },
        take: limit,
      });
      return rows.map(toFire);
    });
  }
}
