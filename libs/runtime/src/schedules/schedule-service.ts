import { randomUUID } from 'node:crypto';
import type {
  CreateScheduleFields,
  FieldIssue,
  ListSchedulesFilter,
  PatchScheduleFields,
  Run,
  Schedule,
  ScheduleFire,
  SessionConfig,
} from '@cognition/contracts';
import {
  CreateScheduleFieldsSchema,
  PatchScheduleFieldsSchema,
  toFieldIssues,
} from '@cognition/contracts';
import type { Scope, ScheduleUpdate, StorageBackend } from '@cognition/storage';
import type { z } from 'zod';
import { RuntimeError } from '../errors';
import { refuseNonPublicHost } from '../net/public-address';
import { parseCron } from './cron';
import type { ScheduleRunner } from './schedule-runner';
import type { Clock } from './schedule-times';
import { nextOccurrence, SYSTEM_CLOCK } from './schedule-times';

/** A schedule's fire with the run it started (null: not started, given up, or deleted since). */
export interface ScheduleFireView extends ScheduleFire {
  run: Run | null;
}

export interface ScheduleServiceOptions {
  storage: StorageBackend;
  runner: Pick<ScheduleRunner, 'trigger'>;
  /** Checks a new session's agent and config (`RunManager.validateSessionInput`). */
  validateSessionInput(input: { agentName?: string; config?: SessionConfig }): Promise<void>;
  /** Whether completion callbacks may target loopback/private addresses. */
  allowPrivateCallbacks: boolean;
  /** Whether `langgraph.json` has this graph (a `target.graph` names one); absent: none. */
  hasGraph?(graphId: string): boolean;
  clock?: Clock;
}

function parse<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  throw invalid(toFieldIssues(parsed.error));
}

function invalid(issues: FieldIssue[]): RuntimeError {
  return new RuntimeError(
    'VALIDATION_ERROR',
    `Invalid schedule: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
    { issues },
  );
}

/** Re-roots a validation error's fields under `prefix` (a target's agent → `target.agentName`). */
function under(prefix: string, error: unknown): unknown {
  const { code, details } = error as { code?: string; details?: { issues?: FieldIssue[] } };
  if (code !== 'VALIDATION_ERROR' && code !== 'PROVIDER_CONFIG_ERROR') return error;
  const issues = details?.issues?.length
    ? details.issues.map((i) => ({ path: `${prefix}.${i.path}`, message: i.message }))
    : [{ path: prefix, message: (error as Error).message }];
  return invalid(issues);
}

const notFound = (id: string) => new RuntimeError('NOT_FOUND', `Schedule not found: ${id}`);

/**
 * Schedules as the API serves them: every input checked before anything is stored (422 naming
 * the field; a target session outside the caller's scope is SESSION_NOT_FOUND), `nextFireAt`
 * computed here, the tenant's scope applied to every read and write.
 */
export class ScheduleService {
  private readonly clock: Clock;

  constructor(private readonly o: ScheduleServiceOptions) {
    this.clock = o.clock ?? SYSTEM_CLOCK;
  }

  async create(input: CreateScheduleFields, scope: Scope): Promise<Schedule> {
    const fields = parse(CreateScheduleFieldsSchema, input);
    const now = this.clock.now();
    if (fields.expression !== undefined) parseCron(fields.expression, fields.timezone);
    else parseCron('* * * * *', fields.timezone);
    const runAt =
      fields.afterSeconds !== undefined
        ? new Date(now.getTime() + fields.afterSeconds * 1000)
        : (fields.runAt ?? null);
    if (fields.runAt !== undefined && fields.runAt < now) {
      throw RuntimeError.field('runAt', `${fields.runAt.toISOString()} is in the past`);
    }
    const endTime = fields.endTime ?? null;
    if (endTime && endTime <= now) {
      throw RuntimeError.field('endTime', `${endTime.toISOString()} is in the past`);
    }
    await this.checkTarget(fields.target, scope);
    await this.checkCallback(fields.callbackUrl ?? null);
    const timing = {
      kind: fields.expression !== undefined ? ('cron' as const) : ('once' as const),
      expression: fields.expression ?? null,
      timezone: fields.timezone,
      runAt,
      endTime,
    };
    // A one-shot due now fires at the next pass: its time is not "after now".
    const nextFireAt =
      timing.kind === 'once' ? runAt : nextOccurrence(timing, new Date(now.getTime() - 1));
    if (!nextFireAt) {
      throw RuntimeError.field('endTime', 'is before the first time the schedule would fire');
    }
    return this.o.storage.schedules.create(
      {
        id: `sch_${randomUUID()}`,
        ...timing,
        enabled: fields.enabled,
        misfire: fields.misfire,
        target: fields.target,
        content: fields.content,
        metadata: fields.metadata,
        callbackUrl: fields.callbackUrl ?? null,
        multitaskStrategy: fields.multitaskStrategy,
        nextFireAt,
      },
      scope,
    );
  }

  list(scope: Scope, filter: ListSchedulesFilter = {}) {
    return this.o.storage.schedules.list(scope, filter);
  }

  async get(id: string, scope: Scope): Promise<Schedule> {
    const schedule = await this.o.storage.schedules.get(id, scope);
    if (!schedule) throw notFound(id);
    return schedule;
  }

  /**
   * Enables/disables, changes the expression, zone, end time or what a firing sends. A change
   * of timing, or enabling, restarts the schedule from its next time after now (what came due
   * while it was disabled is not fired).
   */
  async patch(id: string, input: PatchScheduleFields, scope: Scope): Promise<Schedule> {
    const fields = parse(PatchScheduleFieldsSchema, input);
    const stored = await this.get(id, scope);
    const now = this.clock.now();
    if (fields.expression !== undefined && stored.kind === 'once') {
      throw RuntimeError.field('expression', 'a delayed run has no cron expression');
    }
    const timing = {
      kind: stored.kind,
      expression: fields.expression ?? stored.expression,
      timezone: fields.timezone ?? stored.timezone,
      runAt: stored.runAt,
      endTime: fields.endTime === undefined ? stored.endTime : fields.endTime,
    };
    if (timing.kind === 'cron') parseCron(timing.expression ?? '', timing.timezone);
    if (fields.endTime && fields.endTime <= now) {
      throw RuntimeError.field('endTime', `${fields.endTime.toISOString()} is in the past`);
    }
    if (fields.callbackUrl) await this.checkCallback(fields.callbackUrl);
    const retimed =
      fields.expression !== undefined ||
      fields.timezone !== undefined ||
      fields.endTime !== undefined ||
      (fields.enabled === true && !stored.enabled);
    const update: ScheduleUpdate = { ...fields };
    if (retimed && timing.kind === 'cron') update.nextFireAt = nextOccurrence(timing, now);
    return this.o.storage.schedules.update(id, update, scope);
  }

  async delete(id: string, scope: Scope): Promise<void> {
    if (!(await this.o.storage.schedules.delete(id, scope))) throw notFound(id);
  }

  /** The schedule's fires, newest first, with their runs. */
  async fires(id: string, scope: Scope, limit = 50): Promise<ScheduleFireView[]> {
    await this.get(id, scope);
    const fires = await this.o.storage.schedules.listFires(id, scope, limit);
    return Promise.all(
      fires.map(async (fire) => ({
        ...fire,
        run: fire.runId ? await this.o.storage.runs.get(fire.runId) : null,
      })),
    );
  }

  /** Fires the schedule now, whatever its times (a disabled one too); the run is started. */
  async trigger(id: string, scope: Scope): Promise<ScheduleFireView> {
    const schedule = await this.get(id, scope);
    const fire = await this.o.runner.trigger(schedule);
    return { ...fire, run: fire.runId ? await this.o.storage.runs.get(fire.runId) : null };
  }

  private async checkTarget(target: Schedule['target'], scope: Scope): Promise<void> {
    if (target.graph !== undefined && !this.o.hasGraph?.(target.graph.graph_id)) {
      throw RuntimeError.field(
        'target.graph.graph_id',
        `no graph "${target.graph.graph_id}" in this server's langgraph.json`,
      );
    }
    if (target.kind === 'session') {
      if (!(await this.o.storage.sessions.get(target.sessionId, scope))) {
        throw new RuntimeError('SESSION_NOT_FOUND', `Session not found: ${target.sessionId}`);
      }
      return;
    }
    try {
      await this.o.validateSessionInput({ agentName: target.agentName, config: target.config });
    } catch (error) {
      throw under('target', error);
    }
  }

  private async checkCallback(url: string | null): Promise<void> {
    if (!url || this.o.allowPrivateCallbacks) return;
    const refused = await refuseNonPublicHost(new URL(url));
    if (refused?.kind === 'non-public') {
      throw RuntimeError.field(
        'callbackUrl',
        `${refused.message}; callbacks into the server's own network are not allowed by its configuration`,
      );
    }
  }
}
