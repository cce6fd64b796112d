import type {
  ListSchedulesFilter,
  Schedule,
  ScheduleFire,
  ScheduleTarget,
} from '@cognition/contracts';
import type {
  NewSchedule,
  Scope,
  ScheduleClaim,
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
import type { PrismaDb } from '../db/db';
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
 * Schedules on `schedules` / `schedule_fires`. The claim is one conditional UPDATE
 * (`WHERE id = ? AND enabled AND next_fire_at = <due>`) and the fire's INSERT in the same
 * transaction: on PostgreSQL a concurrent claimer blocks on the row lock, re-evaluates the WHERE
 * against the committed row and matches nothing; on SQLite writers are serialised. The fire's
 * primary key `(schedule_id, due_at)` refuses a second fire of one occurrence besides.
 * Scope and metadata filters are applied in code after the indexed filters (schedules per
 * tenant are few; the tenant scope is JSON text, as the registry's data is).
 */
export class PrismaScheduleStore implements ScheduleStore {
  constructor(private readonly db: PrismaDb) {}

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

  listDue(now: Date, limit: number): Promise<Schedule[]> {
    return guard('list due schedules', async () => {
      const rows = await this.db.schedule.findMany({
        where: { enabled: true, nextFireAt: { lte: now } },
        orderBy: [{ nextFireAt: 'asc' }, { id: 'asc' }],
        take: limit,
      });
      return rows.map(toSchedule);
    });
  }

  claim(claim: ScheduleClaim): Promise<boolean> {
    return guard('claim schedule occurrence', async () => {
      try {
        return await this.db.$transaction(async (tx) => {
          const { count } = await tx.schedule.updateMany({
            where: { id: claim.scheduleId, enabled: true, nextFireAt: claim.dueAt },
            data: { nextFireAt: claim.nextFireAt, lastFiredAt: claim.dueAt, updatedAt: claim.now },
          });
          if (count === 0) return false;
          if (claim.reason !== null) {
            await tx.scheduleFire.create({
              data: {
                scheduleId: claim.scheduleId,
                dueAt: claim.dueAt,
                claimedAt: claim.now,
                nodeId: claim.nodeId,
                reason: claim.reason,
                cleanup: 'none',
              },
            });
          }
          return true;
        });
      } catch (error) {
        // The occurrence was fired already (its fire row exists): the claim lost.
        if (isUniqueViolation(error)) return false;
        throw error;
      }
    });
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
