import type {
  CallbackAttempt,
  CallbackConfig,
  Message,
  Run,
  RunError,
  Session,
  SessionConfig,
  StringMap,
  ToolCall,
  PendingAction,
  GraphRunKwargs,
  Usage,
} from '@cognition/contracts';
import { abandonedCutoff, readStatusOf } from '@cognition/contracts';
import type { SessionReadStatus } from '@cognition/contracts';
import type { Scope, SessionPolicy } from '@cognition/storage';
import type {
  CallbackAttempt as CallbackAttemptRow,
  Message as MessageRow,
  Run as RunRow,
  Session as SessionRow,
  SessionMetadata as MetadataRow,
  SessionScope as ScopeRow,
} from './generated/postgres/client';
import type { Prisma } from './generated/postgres/client';

/** Rows fetched with every session read, so scopes and metadata come back in one query. */
export const SESSION_INCLUDE = { scopes: true, metadata: true } as const;

export type SessionWithRelations = SessionRow & { scopes: ScopeRow[]; metadata: MetadataRow[] };

function rowsToMap(rows: readonly { key: string; value: string }[]): StringMap {
  const map: StringMap = {};
  for (const row of rows) map[row.key] = row.value;
  return map;
}

export function mapToRows(map: StringMap): { key: string; value: string }[] {
  return Object.entries(map).map(([key, value]) => ({ key, value }));
}

export function parseJson<T>(text: string | null, fallback: T): T {
  if (text === null) return fallback;
  return JSON.parse(text) as T;
}

function toSession(row: SessionWithRelations): Session {
  return {
    id: row.id,
    threadId: row.threadId,
    title: row.title,
    status: row.status as Session['status'],
    agentName: row.agentName,
    config: parseJson<SessionConfig>(row.config, {}),
    scopes: rowsToMap(row.scopes),
    metadata: rowsToMap(row.metadata),
    messageCount: row.messageCount,
    version: row.version,
    parentId: row.parentId,
    workspacePath: row.workspacePath,
    systemPrompt: row.systemPrompt,
    task: row.task,
    endedAt: row.endedAt,
    lastActivityAt: row.lastActivityAt,
    expiresAt: row.expiresAt,
    checkpointRetention: row.checkpointRetention,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

/** A mutable holder of the backend's session policy, shared by its stores. */
export interface PolicyRef {
  current: SessionPolicy;
}

/** The session as reads report it (`abandoned` computed at read time). */
export function presentSession(row: SessionWithRelations, policy: SessionPolicy): Session {
  const session = toSession(row);
  return {
    ...session,
    status: readStatusOf(session, policy.now(), policy.abandonAfterSeconds),
  };
}

function ttlCutoff(policy: SessionPolicy, now: Date): Date | null {
  return policy.ttlSeconds > 0 ? new Date(now.getTime() - policy.ttlSeconds * 1000) : null;
}

/** Sessions not expired at the policy's now (see SessionPolicy): every read and write adds it. */
export function liveWhere(policy: SessionPolicy): Prisma.SessionWhereInput {
  const now = policy.now();
  const cutoff = ttlCutoff(policy, now);
  return {
    OR: [
      { expiresAt: { gt: now } },
      { expiresAt: null, ...(cutoff ? { lastActivityAt: { gt: cutoff } } : {}) },
    ],
  };
}

/** Sessions expired at the policy's now (the sweep's selection). */
export function expiredWhere(policy: SessionPolicy): Prisma.SessionWhereInput {
  const now = policy.now();
  const cutoff = ttlCutoff(policy, now);
  return {
    OR: [
      { expiresAt: { lte: now } },
      ...(cutoff ? [{ expiresAt: null, lastActivityAt: { lte: cutoff } }] : []),
    ],
  };
}

/**
 * The list filter of a read status: `abandoned` and `active` split the stored `active` rows at
 * the abandon cutoff, in SQL (the `(status, last_activity_at)` index serves both).
 */
export function statusWhere(
  status: SessionReadStatus | undefined,
  policy: SessionPolicy,
): Prisma.SessionWhereInput {
  if (status === undefined) return {};
  const cutoff = abandonedCutoff(policy.now(), policy.abandonAfterSeconds);
  if (status === 'abandoned') {
    return cutoff ? { status: 'active', lastActivityAt: { lte: cutoff } } : { id: { in: [] } };
  }
  if (status === 'active') {
    return cutoff ? { status: 'active', lastActivityAt: { gt: cutoff } } : { status: 'active' };
  }
  return { status };
}

export function toMessage(row: MessageRow): Message {
  return {
    id: row.id,
    sessionId: row.sessionId,
    role: row.role as Message['role'],
    content: row.content,
    toolCalls: parseJson<ToolCall[]>(row.toolCalls, []),
    toolCallId: row.toolCallId,
    tokenCount: row.tokenCount,
    modelUsed: row.modelUsed,
    parentId: row.parentId,
    metadata: parseJson<StringMap>(row.metadata, {}),
    createdAt: row.createdAt,
  };
}

/** The columns {@link toRun} reads (the raw run reads select exactly these). */
export type RunFields = Omit<
  RunRow,
  'activeSessionId' | 'baseCheckpointId' | 'pendingInput' | 'leaseAttempt'
>;

export function toRun(row: RunFields): Run {
  return {
    id: row.id,
    sessionId: row.sessionId,
    status: row.status as Run['status'],
    inputMessageId: row.inputMessageId,
    idempotencyKey: row.idempotencyKey,
    multitaskStrategy: row.multitaskStrategy as Run['multitaskStrategy'],
    supersedesRunId: row.supersedesRunId,
    callbackUrl: row.callbackUrl,
    callbackConfig: parseJson<CallbackConfig | null>(row.callbackConfig, null),
    ownerNode: row.ownerNode,
    leaseExpiresAt: row.leaseExpiresAt,
    pendingAction: parseJson<PendingAction | null>(row.pendingAction, null),
    kwargs: parseJson<GraphRunKwargs | null>(row.kwargs, null),
    usage: parseJson<Usage | null>(row.usage, null),
    error: parseJson<RunError | null>(row.error, null),
    createdAt: row.createdAt,
    startedAt: row.startedAt,
    finishedAt: row.finishedAt,
    updatedAt: row.updatedAt,
    startAfter: row.startAfter,
  };
}

export function toCallbackAttempt(row: CallbackAttemptRow): CallbackAttempt {
  return {
    runId: row.runId,
    deliveryId: row.deliveryId,
    url: row.url,
    attempt: row.attempt,
    startedAt: row.startedAt,
    durationMs: row.durationMs,
    status: row.status,
    ok: row.ok,
    error: row.error,
  };
}

/** Oldest first; the (run_id, started_at) index serves it. */
export const CALLBACK_ATTEMPT_ORDER: Prisma.CallbackAttemptOrderByWithRelationInput[] = [
  { startedAt: 'asc' },
  { attempt: 'asc' },
  { deliveryId: 'asc' },
];

/**
 * Sessions visible to `scope`: one `EXISTS` per scope key (an indexed lookup on
 * `session_scopes(session_id, key)`), so filtering happens in SQL on both providers.
 */
export function scopeWhere(scope: Scope): Prisma.SessionWhereInput[] {
  return Object.entries(scope).map(([key, value]) => ({ scopes: { some: { key, value } } }));
}

/** Sessions whose metadata matches every predicate exactly. */
export function metadataWhere(predicates: StringMap | undefined): Prisma.SessionWhereInput[] {
  return Object.entries(predicates ?? {}).map(([key, value]) => ({
    metadata: { some: { key, value } },
  }));
}

/**
 * Message rows in thread order. `seq` is unique per session (`messages_session_id_seq_key`), so
 * it is the whole order and the index serves it: no sort, and an offset is an index range.
 */
export const MESSAGE_ORDER: Prisma.MessageOrderByWithRelationInput[] = [{ seq: 'asc' }];
