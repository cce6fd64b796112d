import type { ListSchedulesFilter, Schedule, ScheduleFire } from '@cognition/contracts';
import type {
  AdmittedFiring,
  FiringAdmission,
  NewSchedule,
  Scope,
  ClaimDueInput,
  ClaimedOccurrence,
  FireRun,
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
import { clone } from './clone';

const fireKey = (scheduleId: string, dueAt: Date) => `${scheduleId}@${dueAt.getTime()}`;

/**
 * The memory backend's schedules: two maps. Every method runs synchronously to its end, so a
 * claim's compare-and-set cannot interleave with another's.
 */
export class MemoryScheduleStore implements ScheduleStore {
  private readonly schedules = new Map<string, Schedule>();
  private readonly fires = new Map<string, ScheduleFire>();

  constructor(
    private readonly now: () => Date,
    /** Writes the firings' sessions, runs and messages (memory-firings.ts), synchronously. */
    private readonly admit: (
      firings: FiringAdmission[],
      recordRun: (f: FiringAdmission) => void,
    ) => AdmittedFiring[] = () => {
      throw new StorageError('STORAGE_ERROR', 'No session store to admit firings into');
    },
  ) {}

  create(input: NewSchedule, scope: Scope): Promise<Schedule> {
    return settle(() => {
      const parsed = parseInput(NewScheduleSchema, input, 'schedule');
      if (this.schedules.has(parsed.id)) {
        throw new StorageError('CONFLICT', `Schedule ${parsed.id} already exists`);
      }
      const now = this.now();
      const schedule: Schedule = {
        ...clone(parsed),
        scope: { ...scope },
        lastFiredAt: null,
        createdAt: now,
        updatedAt: now,
      };
      this.schedules.set(schedule.id, schedule);
      return clone(schedule);
    });
  }

  get(id: string, scope: Scope): Promise<Schedule | null> {
    const schedule = this.visible(id, scope);
    return Promise.resolve(schedule ? clone(schedule) : null);
  }

  list(scope: Scope, filter?: ListSchedulesFilter): Promise<{ items: Schedule[]; total: number }> {
    return settle(() => {
      const parsed = parseScheduleFilter(filter);
      const matching = [...this.schedules.values()]
        .filter((s) => scheduleMatches(s, scope, parsed))
        .sort(compareSchedules);
      return {
        items: matching.slice(parsed.offset, parsed.offset + parsed.limit).map((s) => clone(s)),
        total: matching.length,
      };
    });
  }

  update(id: string, update: ScheduleUpdate, scope: Scope): Promise<Schedule> {
    return settle(() => {
      const patch = parseInput(ScheduleUpdateSchema, update, 'schedule update');
      const stored = this.visible(id, scope);
      if (!stored) throw new StorageError('NOT_FOUND', `Schedule not found: ${id}`);
      const defined = Object.fromEntries(
        Object.entries(patch).filter(([, value]) => value !== undefined),
      );
      const next: Schedule = { ...stored, ...clone(defined), updatedAt: this.now() };
      this.schedules.set(id, next);
      return clone(next);
    });
  }

  delete(id: string, scope: Scope): Promise<boolean> {
    if (!this.visible(id, scope)) return Promise.resolve(false);
    this.schedules.delete(id);
    for (const [key, fire] of this.fires) if (fire.scheduleId === id) this.fires.delete(key);
    return Promise.resolve(true);
  }

  claimDue(input: ClaimDueInput): Promise<ClaimedOccurrence[]> {
    return settle(() => {
      const { now } = input;
      const dueBy = input.dueBy ?? now;
      const due = [...this.schedules.values()]
        .filter((s) => s.enabled && s.nextFireAt !== null && s.nextFireAt <= dueBy)
        .sort(
          (a, b) =>
            (a.nextFireAt?.getTime() ?? 0) - (b.nextFireAt?.getTime() ?? 0) ||
            (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
        )
        .slice(0, input.limit);
      return due.map((stored) => {
        const dueAt = stored.nextFireAt ?? now;
        const decision = input.decide(clone(stored));
        this.schedules.set(stored.id, {
          ...stored,
          nextFireAt: decision.nextFireAt ? new Date(decision.nextFireAt.getTime()) : null,
          lastFiredAt: new Date(dueAt.getTime()),
          updatedAt: this.now(),
        });
        if (decision.reason !== null) {
          this.fires.set(fireKey(stored.id, dueAt), {
            scheduleId: stored.id,
            dueAt: new Date(dueAt.getTime()),
            claimedAt: new Date(now.getTime()),
            nodeId: input.nodeId,
            reason: decision.reason,
            runId: null,
            sessionId: decision.sessionId,
            cleanup: 'none',
          });
        }
        return { schedule: clone(stored), dueAt: new Date(dueAt.getTime()), ...decision };
      });
    });
  }

  addFire(fire: Omit<ScheduleFire, 'runId' | 'sessionId' | 'cleanup'>): Promise<void> {
    return settle(() => {
      const key = fireKey(fire.scheduleId, fire.dueAt);
      if (!this.schedules.has(fire.scheduleId)) {
        throw new StorageError('NOT_FOUND', `Schedule not found: ${fire.scheduleId}`);
      }
      if (this.fires.has(key)) {
        throw new StorageError(
          'CONFLICT',
          `Schedule ${fire.scheduleId} already fired at that time`,
        );
      }
      this.fires.set(key, { ...clone(fire), runId: null, sessionId: null, cleanup: 'none' });
    });
  }

  updateFire(
    scheduleId: string,
    dueAt: Date,
    update: Partial<Pick<ScheduleFire, 'runId' | 'sessionId' | 'cleanup'>>,
  ): Promise<void> {
    const key = fireKey(scheduleId, dueAt);
    const stored = this.fires.get(key);
    if (stored) this.fires.set(key, { ...stored, ...clone(update) });
    return Promise.resolve();
  }

  async recordRuns(fires: FireRun[]): Promise<void> {
    for (const { scheduleId, dueAt, ...update } of fires) {
      await this.updateFire(scheduleId, dueAt, update);
    }
  }

  admitFirings(firings: FiringAdmission[]): Promise<AdmittedFiring[]> {
    return settle(() =>
      this.admit(firings, (f) => {
        const key = fireKey(f.scheduleId, f.dueAt);
        const stored = this.fires.get(key);
        if (stored) {
          this.fires.set(key, {
            ...stored,
            runId: f.run.id,
            sessionId: f.session.id,
            cleanup: f.cleanup,
          });
        }
      }).map((a) => clone(a)),
    );
  }

  reclaimFire(fire: ScheduleFire, nodeId: string, now: Date): Promise<boolean> {
    const key = fireKey(fire.scheduleId, fire.dueAt);
    const stored = this.fires.get(key);
    if (stored?.runId !== null || stored.claimedAt.getTime() !== fire.claimedAt.getTime()) {
      return Promise.resolve(false);
    }
    this.fires.set(key, { ...stored, nodeId, claimedAt: new Date(now.getTime()) });
    return Promise.resolve(true);
  }

  listFires(scheduleId: string, scope: Scope, limit: number): Promise<ScheduleFire[]> {
    if (!this.visible(scheduleId, scope)) return Promise.resolve([]);
    const fires = [...this.fires.values()]
      .filter((f) => f.scheduleId === scheduleId)
      .sort((a, b) => b.dueAt.getTime() - a.dueAt.getTime());
    return Promise.resolve(fires.slice(0, limit).map((f) => clone(f)));
  }

  listUnsettledFires(claimedBefore: Date, limit: number): Promise<ScheduleFire[]> {
    const fires = [...this.fires.values()]
      .filter(
        (f) =>
          (f.runId === null && f.cleanup === 'none' && f.claimedAt < claimedBefore) ||
          f.cleanup === 'pending',
      )
      .sort((a, b) => a.claimedAt.getTime() - b.claimedAt.getTime());
    return Promise.resolve(fires.slice(0, limit).map((f) => clone(f)));
  }

  private visible(id: string, scope: Scope): Schedule | undefined {
    const schedule = this.schedules.get(id);
    return schedule && scopeMatches(scope, schedule.scope) ? schedule : undefined;
  }
}

/** Runs a synchronous operation as a promise, turning throws into rejections. */
function settle<T>(operation: () => T): Promise<T> {
  try {
    return Promise.resolve(operation());
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
}
