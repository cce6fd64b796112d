import { z } from 'zod';
import { ErrorCodeSchema } from '../errors';
import { IdSchema, StringMapSchema } from '../common';
import { MESSAGE_CONTENT_MAX } from '../sessions/message';
import { ModelUsageSchema } from './usage';
import { ClientToolSchema, PendingActionSchema } from '../agents/agent';
import { CallbackConfigSchema } from './callback';

/**
 * `queued` and `running` are active; a session has at most one active run at a time. `pending`
 * runs wait behind the active one (a message sent with `multitask_strategy` `enqueue`,
 * `interrupt` or `rollback`): not active yet, they start in creation order. `requires_action`:
 * the run paused for a person's decision on tool calls (human in the loop); no process executes
 * it, but it still holds its session (see `holdsSession`) until it is resumed or aborted.
 */
export const RunStatusSchema = z.enum([
  'pending',
  'queued',
  'running',
  'requires_action',
  'completed',
  'failed',
  'aborted',
  'interrupted',
]);
export type RunStatus = z.infer<typeof RunStatusSchema>;
/** How many pending runs one session may hold (a client looping on `enqueue` is refused). */
export const MAX_PENDING_RUNS = 50;
export function isActiveRunStatus(status: RunStatus): boolean {
  return status === 'queued' || status === 'running';
}
/**
 * Whether a run in this status holds its session: an active run, or one paused for a decision.
 * Storage keeps at most one such run per session, so no other run starts while a run waits for
 * a person (a new message is refused, pending runs stay pending).
 */
export function holdsSession(status: RunStatus): boolean {
  return isActiveRunStatus(status) || status === 'requires_action';
}

/**
 * What a message sent while its session has an active run does (LangGraph Platform's
 * double-texting model): `reject` it (409), `enqueue` it behind the active run, `interrupt` the
 * active run (it ends `interrupted`, its partial answer kept) or `rollback` the active run (it
 * is removed with its user message, what it produced and its checkpoints) and start the new one.
 */
export const MultitaskStrategySchema = z.enum(['reject', 'enqueue', 'interrupt', 'rollback']);
export type MultitaskStrategy = z.infer<typeof MultitaskStrategySchema>;

/**
 * What a caller sends to start a turn, besides the session (every transport — the runtime's
 * `send`, tRPC's `messages.send`, REST's body in snake_case — derives its input from this one
 * schema, so they accept exactly the same values).
 */
export const SendMessageFieldsSchema = z.strictObject({
  content: z.string().min(1).max(MESSAGE_CONTENT_MAX),
  /** A message of the same session this one answers (threading); null/absent: none. */
  parentId: IdSchema.nullable().optional(),
  metadata: StringMapSchema.optional(),
  /** http(s) URL POSTed the completion payload when the run ends. */
  callbackUrl: z
    .url({ protocol: /^https?$/, error: 'must be an http or https URL' })
    .max(2048)
    .nullable()
    .optional(),
  /** A retried send with the same key returns the first run instead of starting another. */
  idempotencyKey: z.string().min(1).max(256).nullable().optional(),
  /** While the session has an active run: `reject` (default), `enqueue`, `interrupt`, `rollback`. */
  multitaskStrategy: MultitaskStrategySchema.optional(),
});

export const UsageSchema = z.object({
  inputTokens: z.number().int().min(0),
  outputTokens: z.number().int().min(0),
  /** null when the model's price is unknown: never reported as zero. */
  costUsd: z.number().min(0).nullable(),
  model: z.string().nullable(),
  provider: z.string().nullable(),
  /** true when the provider reported no usage and the figures are estimated. */
  estimated: z.boolean().default(false),
  /**
   * Per provider/model (a run that used several models has several entries). Absent on runs
   * recorded before it existed: the run then counts as one call of `provider`/`model`.
   */
  models: z.array(ModelUsageSchema).optional(),
});
export type Usage = z.infer<typeof UsageSchema>;

export const RunErrorSchema = z.object({
  code: ErrorCodeSchema,
  message: z.string(),
});
export type RunError = z.infer<typeof RunErrorSchema>;

export const RunSchema = z.object({
  id: IdSchema,
  sessionId: IdSchema,
  status: RunStatusSchema,
  /** The user message that started the run. */
  inputMessageId: IdSchema.nullable(),
  idempotencyKey: z.string().nullable(),
  /** How the run was sent while another was active (null: the session was idle). */
  multitaskStrategy: MultitaskStrategySchema.nullable(),
  /** The run that was active when this one was sent (null: none). */
  supersedesRunId: IdSchema.nullable(),
  /** Where the completion payload is POSTed when the run ends (null: nowhere). */
  callbackUrl: z.string().nullable(),
  /** How the callback is sent when an A2A push notification config set it (null: as ours). */
  callbackConfig: CallbackConfigSchema.nullable(),
  /** The server node that claimed the run (several nodes on one database; null: none). */
  ownerNode: z.string().nullable(),
  /** Until when the owner's claim holds; another node takes the run over only after it. */
  leaseExpiresAt: z.date().nullable(),
  /** What a `requires_action` run waits for: the tool calls to decide on (null otherwise). */
  pendingAction: PendingActionSchema.nullable(),
  /** A run of a `langgraph.json` graph: what it was made with (null: an agent run). */
  kwargs: z.lazy(() => GraphRunKwargsSchema).nullable(),
  /** A delayed run: it waits `pending` until then, even on an idle session (null: no delay). */
  startAfter: z.date().nullable(),
  usage: UsageSchema.nullable(),
  error: RunErrorSchema.nullable(),
  createdAt: z.date(),
  startedAt: z.date().nullable(),
  finishedAt: z.date().nullable(),
  updatedAt: z.date(),
});
export type Run = z.infer<typeof RunSchema>;

export const CreateRunInputSchema = z
  .object({
    id: IdSchema.optional(),
    sessionId: IdSchema,
    status: z.enum(['pending', 'queued', 'running']).default('queued'),
    inputMessageId: IdSchema.nullable().optional(),
    idempotencyKey: z.string().min(1).max(256).nullable().optional(),
    multitaskStrategy: MultitaskStrategySchema.nullable().optional(),
    supersedesRunId: IdSchema.nullable().optional(),
    callbackUrl: z.string().max(2048).nullable().optional(),
    callbackConfig: CallbackConfigSchema.nullable().optional(),
    /** Required for a `pending` agent run: the message it sends when it starts. */
    pendingInput: z
      .lazy(() => PendingRunInputSchema)
      .nullable()
      .optional(),
    /** A graph run's kwargs: it runs them instead of answering a message. */
    kwargs: z
      .lazy(() => GraphRunKwargsSchema)
      .nullable()
      .optional(),
    /** A `pending` run that does not start before this time (`Run.startAfter`). */
    startAfter: z.date().nullable().optional(),
    /** Claimed at creation by the node that will execute it (see `RunStore.claim`). */
    ownerNode: z.string().min(1).nullable().optional(),
    leaseExpiresAt: z.date().nullable().optional(),
  })
  .strict()
  .refine(
    (input) => input.status !== 'pending' || input.pendingInput != null || input.kwargs != null,
    { path: ['pendingInput'], message: 'a pending run needs the message it will send' },
  )
  .refine((input) => input.startAfter == null || input.status === 'pending', {
    path: ['startAfter'],
    message: 'only a pending run waits for a start time',
  });
export type CreateRunInput = z.input<typeof CreateRunInputSchema>;

export const UpdateRunInputSchema = z
  .object({
    status: RunStatusSchema.optional(),
    usage: UsageSchema.nullable().optional(),
    error: RunErrorSchema.nullable().optional(),
    startedAt: z.date().nullable().optional(),
    finishedAt: z.date().nullable().optional(),
    /** The thread's head checkpoint when the run started (what a rollback returns to). */
    baseCheckpointId: z.string().nullable().optional(),
    pendingAction: PendingActionSchema.nullable().optional(),
    /** Where the completion payload goes (set or removed while the run has not ended). */
    callbackUrl: z.string().max(2048).nullable().optional(),
    callbackConfig: CallbackConfigSchema.nullable().optional(),
  })
  .strict();
export type UpdateRunInput = z.input<typeof UpdateRunInputSchema>;

/**
 * The user message a `pending` run sends when it starts: durable from the moment the run is
 * accepted, it enters the message history (with `messageId`) only then.
 */
export const PendingRunInputSchema = z
  .object({
    messageId: IdSchema,
    content: z.string().min(1),
    parentId: IdSchema.nullable(),
    metadata: z.record(z.string(), z.string()),
    /** Tools the client runs, offered to the model for this run only (AG-UI frontend tools). */
    clientTools: z.array(ClientToolSchema).optional(),
  })
  .strict();
export type PendingRunInput = z.infer<typeof PendingRunInputSchema>;

/**
 * What a run of a `langgraph.json` graph was made with (the LangGraph API's run kwargs, in its
 * snake_case): stored with the run, so any node can execute it, queue it behind another run, or
 * take it up again after a crash. `input` and `command` are what `graph.stream` gets (a command
 * becomes LangGraph's `Command`); `stream_mode` the modes its chunks are recorded in.
 */
/** A `Send` of a command's `goto`: a node to run with its own input (LangGraph's `Send`). */
const GraphSendSchema = z
  .object({
    lg_name: z.literal('Send').optional(),
    node: z.string().min(1),
    args: z.unknown(),
    timeout: z.number().positive().optional(),
  })
  .strict();

/** Where a command goes next: a node's name, a `Send`, or a list of them. */
export const GraphCommandGotoSchema = z.union([
  z.string().min(1),
  GraphSendSchema,
  z.array(z.union([z.string().min(1), GraphSendSchema])).max(100),
]);

/** The nodes a graph run is interrupted before or after: names, or `"*"` for every node. */
export const GraphInterruptNodesSchema = z.union([
  z.literal('*'),
  z.array(z.string().min(1)).max(100),
]);

export const GraphRunKwargsSchema = z
  .object({
    graph_id: z.string().min(1),
    /** The assistant the run was made with (a stored one's id, or the graph's system assistant). */
    assistant_id: z.string().min(1).optional(),
    input: z.unknown().nullable(),
    command: z
      .object({
        resume: z.unknown().optional(),
        update: z.unknown().optional(),
        goto: GraphCommandGotoSchema.optional(),
      })
      .strict()
      .nullable(),
    config: z.record(z.string(), z.unknown()),
    context: z.record(z.string(), z.unknown()),
    stream_mode: z.array(z.string().min(1)).min(1),
    stream_subgraphs: z.boolean(),
    /** Nodes the run stops before / after (`"*"`: every node), as LangGraph's `interruptBefore`. */
    interrupt_before: GraphInterruptNodesSchema.optional(),
    interrupt_after: GraphInterruptNodesSchema.optional(),
    /**
     * The checkpoint the run starts from (time travel): LangGraph continues from it, so the
     * thread's history forks there. Absent: the thread's head.
     */
    checkpoint_id: z.string().min(1).optional(),
    /** The run's own metadata (the LangGraph API's run `metadata`): kept and answered as sent. */
    metadata: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();
export type GraphRunKwargs = z.infer<typeof GraphRunKwargsSchema>;
