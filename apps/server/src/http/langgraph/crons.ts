import type { ApiServices, ScheduleApi } from '@cognition/api';
import { ApiError, describeError } from '@cognition/api';
import type { GraphRunKwargs, PatchScheduleFields, Schedule } from '@cognition/contracts';
import type { Scope } from '@cognition/storage';
import { z } from 'zod';
import type { Assistants } from './assistants';
import { AGENT_GRAPH_PREFIX, systemAssistantId } from './assistants';
import { graphKwargs, graphNodes, refuseOtherRuns } from './graph-runs';
import type { Runs } from './runs';
import { RunCreateSchema, humanText } from './run-wire';
import type { Threads } from './threads';
import { JsonObject, LangGraphHttpError, decodeMetadata, encodeMetadata } from './wire';

/**
 * Crons (docs/langgraph-api.md, "Crons"): a LangGraph cron is one of our schedules, on the same
 * store as `/schedules`, fired by the same scheduler (exactly once across nodes, misfires
 * coalesced). `POST /runs/crons` makes a schedule whose every firing starts a new session of the
 * assistant's agent (`on_run_completed`: delete by default, as LangGraph); a thread's cron
 * continues that session. `cron_id` is the schedule id. A `langgraph.json` graph's assistant's
 * cron stores the kwargs of the graph run each firing makes (`input`, `config`, `context` as a
 * thread run takes them) in its target (`target.graph`).
 */

const RunFields = RunCreateSchema.pick({
  assistant_id: true,
  input: true,
  metadata: true,
  config: true,
  context: true,
  multitask_strategy: true,
  interrupt_before: true,
  interrupt_after: true,
  webhook: true,
  checkpoint_during: true,
  durability: true,
  if_not_exists: true,
});

const EndTime = z.iso.datetime({ offset: true }).nullable();

export const CronCreateSchema = RunFields.extend({
  schedule: z.string().min(1),
  /** Ours: the IANA zone the expression is read in (LangGraph reads it in UTC, the default). */
  timezone: z.string().min(1).optional(),
  end_time: EndTime.optional(),
  on_run_completed: z.enum(['delete', 'keep']).optional(),
  enabled: z.boolean().optional(),
}).strict();
export type CronCreate = z.output<typeof CronCreateSchema>;

export const CronPatchSchema = z
  .object({
    schedule: z.string().min(1).optional(),
    timezone: z.string().min(1).optional(),
    end_time: EndTime.optional(),
    input: JsonObject.optional(),
    metadata: JsonObject.optional(),
    config: JsonObject.optional(),
    context: JsonObject.optional(),
    webhook: z.url().nullable().optional(),
    interrupt_before: RunFields.shape.interrupt_before,
    interrupt_after: RunFields.shape.interrupt_after,
    on_run_completed: z.enum(['delete', 'keep']).optional(),
    enabled: z.boolean().optional(),
  })
  .strict();

const SORT_FIELDS = [
  'cron_id',
  'assistant_id',
  'thread_id',
  'created_at',
  'updated_at',
  'next_run_date',
] as const;

export const CronCountSchema = z
  .object({ assistant_id: z.string().min(1).optional(), thread_id: z.uuid().optional() })
  .strict();

export const CronSearchSchema = CronCountSchema.extend({
  enabled: z.boolean().optional(),
  limit: z.number().int().min(1).max(1000).default(10),
  offset: z.number().int().min(0).default(0),
  sort_by: z.enum(SORT_FIELDS).default('created_at'),
  sort_order: z.enum(['asc', 'desc']).default('desc'),
  select: z
    .array(
      z.enum([
        'cron_id',
        'assistant_id',
        'thread_id',
        'on_run_completed',
        'end_time',
        'schedule',
        'timezone',
        'created_at',
        'updated_at',
        'user_id',
        'payload',
        'next_run_date',
        'metadata',
        'enabled',
      ]),
    )
    .optional(),
}).strict();

export interface Cron {
  cron_id: string;
  assistant_id: string;
  thread_id: string | null;
  on_run_completed?: 'delete' | 'keep';
  end_time: string | null;
  schedule: string;
  timezone: string;
  created_at: string;
  updated_at: string;
  payload: Record<string, unknown>;
  user_id: string | null;
  next_run_date: string | null;
  metadata: Record<string, unknown>;
  enabled: boolean;
}

/** Our field names (the schedule contract's) as the cron wire names them. */
const WIRE_FIELD: Record<string, string> = {
  expression: 'schedule',
  timezone: 'timezone',
  endTime: 'end_time',
  callbackUrl: 'webhook',
  content: 'input',
  metadata: 'metadata',
  multitaskStrategy: 'multitask_strategy',
  enabled: 'enabled',
  target: 'assistant_id',
};

/** A refusal of the schedule service re-worded in the cron's field names (`body.schedule`). */
function naming(error: unknown): unknown {
  const described = describeError(error);
  if (described.code !== 'VALIDATION_ERROR' || !described.issues?.length) return error;
  const errors = described.issues.map((issue) => {
    const head = issue.path.split('.')[0] ?? issue.path;
    return { path: `body.${WIRE_FIELD[head] ?? issue.path}`, message: issue.message };
  });
  return new LangGraphHttpError(
    422,
    `Invalid body: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`,
    errors,
  );
}

function refuse(field: string, message: string): LangGraphHttpError {
  return new LangGraphHttpError(422, `Invalid body: body.${field}: ${message}`, [
    { path: `body.${field}`, message },
  ]);
}

/** Fields a cron body may carry that this server does not act on: refused, never ignored. */
function refuseNotYet(body: {
  interrupt_before?: unknown;
  interrupt_after?: unknown;
  if_not_exists?: string | undefined;
}): void {
  const message = 'not supported yet (docs/langgraph-api.md)';
  if (body.interrupt_before !== undefined) throw refuse('interrupt_before', message);
  if (body.interrupt_after !== undefined) throw refuse('interrupt_after', message);
  if (body.if_not_exists === 'create') throw refuse('if_not_exists', message);
}

/** Most schedules one search or count reads when it filters or sorts beyond the store's order. */
const SCAN_PAGE = 500;

export class Crons {
  constructor(
    private readonly services: ApiServices,
    private readonly assistants: Assistants,
    private readonly threads: Threads,
    private readonly runs: Runs,
  ) {}

  private get schedules(): ScheduleApi {
    const { schedules } = this.services;
    if (!schedules) throw new ApiError('UNAVAILABLE', 'Schedules are not enabled on this server');
    return schedules;
  }

  /** `POST /runs/crons` (thread null) and `POST /threads/{id}/runs/crons`. */
  async create(threadId: string | null, body: CronCreate, scope: Scope): Promise<Cron> {
    refuseNotYet(body);
    const { assistant, target: ran } = await this.assistants.get(body.assistant_id, scope);
    let graph: GraphRunKwargs | undefined;
    let content: string;
    let agent = 'default';
    if (ran.kind === 'graph') {
      const graphId = ran.graph.graphId;
      graph = graphKwargs({ graphId, nodes: graphNodes(ran.graph) }, body, assistant);
      // What a REST reader of the schedule sees: the firing sends no message.
      content = `run of graph "${graphId}"`;
    } else {
      // A stored assistant's cron keeps its graph's agent, not the assistant.
      agent = ran.name;
      content = humanText(body.input);
    }
    let target;
    if (threadId === null) {
      target = {
        kind: 'new_session' as const,
        agentName: agent,
        onRunCompleted: body.on_run_completed ?? ('delete' as const),
        ...(graph ? { graph } : {}),
      };
    } else {
      if (body.on_run_completed !== undefined) {
        throw refuse('on_run_completed', "only a cron without a thread ends its runs' threads");
      }
      const session = await this.threads.session(threadId, scope);
      if (graph) {
        refuseOtherRuns(
          session.id,
          graph.graph_id,
          await this.services.storage.runs.list(session.id),
        );
      } else await this.runs.bindAgent(session, agent, scope);
      target = { kind: 'session' as const, sessionId: session.id, ...(graph ? { graph } : {}) };
    }
    try {
      const schedule = await this.schedules.create(
        {
          expression: body.schedule,
          ...(body.timezone !== undefined ? { timezone: body.timezone } : {}),
          ...(body.end_time != null ? { endTime: body.end_time } : {}),
          ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
          target,
          content,
          metadata: encodeMetadata(body.metadata ?? {}),
          ...(body.webhook !== undefined ? { callbackUrl: body.webhook } : {}),
          ...(body.multitask_strategy !== undefined
            ? { multitaskStrategy: body.multitask_strategy }
            : {}),
        },
        scope,
      );
      return await this.view(schedule, scope);
    } catch (error) {
      throw naming(error);
    }
  }

  async get(cronId: string, scope: Scope): Promise<Cron> {
    return this.view(await this.schedule(cronId, scope), scope);
  }

  async patch(cronId: string, body: z.output<typeof CronPatchSchema>, scope: Scope): Promise<Cron> {
    refuseNotYet(body);
    const stored = await this.schedule(cronId, scope);
    if (body.on_run_completed !== undefined) {
      const current = stored.target.kind === 'new_session' ? stored.target.onRunCompleted : null;
      if (current !== body.on_run_completed) {
        throw refuse('on_run_completed', 'cannot be changed: delete the cron and create it again');
      }
    }
    if (stored.target.graph !== undefined) {
      for (const field of ['input', 'config', 'context'] as const) {
        if (body[field] !== undefined) {
          throw refuse(
            field,
            "a graph's cron keeps its run's kwargs: delete the cron and create it again",
          );
        }
      }
    }
    const patch: PatchScheduleFields = {
      ...(body.schedule !== undefined ? { expression: body.schedule } : {}),
      ...(body.timezone !== undefined ? { timezone: body.timezone } : {}),
      ...(body.end_time !== undefined ? { endTime: body.end_time } : {}),
      ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
      ...(body.input !== undefined ? { content: humanText(body.input) } : {}),
      ...(body.metadata !== undefined ? { metadata: encodeMetadata(body.metadata) } : {}),
      ...(body.webhook !== undefined ? { callbackUrl: body.webhook } : {}),
    };
    try {
      return await this.view(await this.schedules.patch(stored.id, patch, scope), scope);
    } catch (error) {
      throw naming(error);
    }
  }

  async delete(cronId: string, scope: Scope): Promise<void> {
    const stored = await this.schedule(cronId, scope);
    await this.schedules.delete(stored.id, scope);
  }

  async search(body: z.output<typeof CronSearchSchema>, scope: Scope): Promise<Partial<Cron>[]> {
    const found = await this.matching(body, scope);
    const sign = body.sort_order === 'asc' ? 1 : -1;
    const key = body.sort_by;
    found.sort((a, b) => sign * String(a[key] ?? '').localeCompare(String(b[key] ?? '')));
    const page = found.slice(body.offset, body.offset + body.limit);
    const select = body.select;
    if (!select) return page;
    return page.map((cron) => Object.fromEntries(select.map((field) => [field, cron[field]])));
  }

  async count(body: z.output<typeof CronCountSchema>, scope: Scope): Promise<number> {
    return (await this.matching(body, scope)).length;
  }

  /** Every cron of the tenant passing the filters (a thread's crons are read by the store). */
  private async matching(
    filter: { assistant_id?: string; thread_id?: string; enabled?: boolean },
    scope: Scope,
  ): Promise<Cron[]> {
    // A cron shows its agent's system assistant, which a stored assistant's filter names too.
    const assistantId =
      filter.assistant_id !== undefined
        ? systemAssistantId(
            (await this.assistants.get(filter.assistant_id, scope)).assistant.graph_id,
          )
        : undefined;
    if (filter.thread_id !== undefined) await this.threads.session(filter.thread_id, scope);
    const schedules: Schedule[] = [];
    for (let offset = 0; ; offset += SCAN_PAGE) {
      const { items, total } = await this.schedules.list(scope, {
        ...(filter.enabled !== undefined ? { enabled: filter.enabled } : {}),
        ...(filter.thread_id !== undefined ? { sessionId: filter.thread_id } : {}),
        limit: SCAN_PAGE,
        offset,
      });
      schedules.push(...items.filter((s) => s.kind === 'cron'));
      if (items.length === 0 || offset + items.length >= total) break;
    }
    const agents = new Map<string, Promise<string | null>>();
    const crons = await Promise.all(schedules.map((s) => this.view(s, scope, agents)));
    return crons.filter(
      (c) =>
        assistantId === undefined ||
        c.assistant_id === assistantId ||
        c.assistant_id === filter.assistant_id,
    );
  }

  /** The schedule behind a cron id, in the caller's scope; 404 "Cron not found" otherwise. */
  private async schedule(cronId: string, scope: Scope): Promise<Schedule> {
    try {
      const schedule = await this.schedules.get(cronId, scope);
      if (schedule.kind === 'cron') return schedule;
    } catch (error) {
      if (describeError(error).code !== 'NOT_FOUND') throw error;
    }
    throw new LangGraphHttpError(404, 'Cron not found');
  }

  private async view(
    schedule: Schedule,
    scope: Scope,
    agents = new Map<string, Promise<string | null>>(),
  ): Promise<Cron> {
    const { target } = schedule;
    // A graph's cron: its assistant and payload are the stored run kwargs'.
    if (target.graph !== undefined) {
      const { graph } = target;
      return cronView(schedule, graph.assistant_id ?? systemAssistantId(graph.graph_id), {
        input: graph.input,
        config: graph.config,
        context: graph.context,
      });
    }
    let agent: string | null;
    if (target.kind === 'new_session') agent = target.agentName;
    else {
      let known = agents.get(target.sessionId);
      if (!known) {
        known = this.services.storage.sessions
          .get(target.sessionId, scope)
          .then((s) => s?.agentName ?? null);
        agents.set(target.sessionId, known);
      }
      agent = await known;
    }
    return cronView(schedule, systemAssistantId(`${AGENT_GRAPH_PREFIX}${agent ?? 'default'}`), {
      input: { messages: [{ type: 'human', content: schedule.content }] },
    });
  }
}

/** A schedule as the SDK's cron, for its assistant and what each firing sends. */
function cronView(schedule: Schedule, assistantId: string, sends: Record<string, unknown>): Cron {
  const { target } = schedule;
  return {
    cron_id: schedule.id,
    assistant_id: assistantId,
    thread_id: target.kind === 'session' ? target.sessionId : null,
    ...(target.kind === 'new_session' ? { on_run_completed: target.onRunCompleted } : {}),
    end_time: schedule.endTime?.toISOString() ?? null,
    schedule: schedule.expression ?? '',
    timezone: schedule.timezone,
    created_at: schedule.createdAt.toISOString(),
    updated_at: schedule.updatedAt.toISOString(),
    payload: {
      assistant_id: assistantId,
      ...sends,
      multitask_strategy: schedule.multitaskStrategy,
      ...(schedule.callbackUrl ? { webhook: schedule.callbackUrl } : {}),
    },
    user_id: null,
    next_run_date: schedule.enabled ? (schedule.nextFireAt?.toISOString() ?? null) : null,
    metadata: decodeMetadata(schedule.metadata),
    enabled: schedule.enabled,
  };
}
