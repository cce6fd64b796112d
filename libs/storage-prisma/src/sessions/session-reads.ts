import type { StringMap } from '@cognition/contracts';
import type { SessionPolicy } from '@cognition/storage';
import type { RawConnection } from '../db/raw-connections';
import type { RawSelect } from '../db/raw-select';
import { pgUtc, rawDate, rawDateOrNull, rawSelect } from '../db/raw-select';
import type { SessionWithRelations } from '../mapping';

/**
 * `sessions.get` (every send, every event subscription, most routes) as one prepared statement
 * on the driver: the row by primary key joined to its scopes and metadata (one `UNION ALL`).
 * Through Prisma it was three statements of about a millisecond of CPU each (the
 * query compile). The caller's scope and the session's liveness are the same predicates as
 * `scopeWhere` and `liveWhere` of mapping.ts, checked on the row.
 */
const COLUMNS = `id, thread_id, title, status, agent_name, config, message_count, version,
  parent_id, workspace_path, projected_checkpoint_id, system_prompt, task`;
const DATES = ['ended_at', 'last_activity_at', 'expires_at', 'created_at', 'updated_at'] as const;

/** The session's scopes (kind 0) and metadata (kind 1); `p` is the session id's parameter. */
function mapsOf(p: string): string {
  return `SELECT 0 AS kind, key, value FROM session_scopes WHERE session_id = ${p}
      UNION ALL SELECT 1 AS kind, key, value FROM session_metadata WHERE session_id = ${p}`;
}

/**
 * The row with its scopes and metadata, one row per pair (the row's columns repeated; one row
 * with null pair columns when it has none), in one statement: on PostgreSQL one round trip
 * where the row and the pairs were two.
 */
const READ: RawSelect = {
  name: 'cognition_session_with_maps',
  sqlite: `SELECT ${COLUMNS}, checkpoint_retention, ${DATES.join(', ')},
      m.kind, m.key, m.value
    FROM sessions LEFT JOIN (${mapsOf('?')}) m ON true
    WHERE id = ? ORDER BY m.kind, m.key`,
  postgres: `SELECT ${COLUMNS}, checkpoint_retention, ${DATES.map((column) => pgUtc(column)).join(', ')},
      m.kind, m.key, m.value
    FROM sessions LEFT JOIN (${mapsOf('$1')}) m ON true
    WHERE id = $1 ORDER BY m.kind, m.key`,
};

interface RawSessionRow {
  id: string;
  thread_id: string;
  title: string | null;
  status: string;
  agent_name: string;
  config: string;
  message_count: number;
  version: number;
  parent_id: string | null;
  workspace_path: string | null;
  projected_checkpoint_id: string | null;
  system_prompt: string | null;
  task: string | null;
  checkpoint_retention: string | null;
  ended_at: unknown;
  last_activity_at: unknown;
  expires_at: unknown;
  created_at: unknown;
  updated_at: unknown;
  /** The pair's columns: null on the one row of a session without pairs. */
  kind: number | bigint | null;
  key: string | null;
  value: string | null;
}

/** Whether a session is live at the policy's now: `liveWhere` of mapping.ts on one row. */
export function isLive(
  row: { expiresAt: Date | null; lastActivityAt: Date },
  policy: SessionPolicy,
): boolean {
  const now = policy.now();
  if (row.expiresAt !== null) return row.expiresAt > now;
  if (policy.ttlSeconds <= 0) return true;
  return row.lastActivityAt > new Date(now.getTime() - policy.ttlSeconds * 1000);
}

/** Whether `scopes` (the session's) hold every pair of `scope`: `scopeWhere` on one row. */
export function inScope(scopes: StringMap, scope: StringMap): boolean {
  return Object.entries(scope).every(([key, value]) => scopes[key] === value);
}

/**
 * The session `id` with its scopes and metadata when it is live and visible to `scope`, else
 * null (not distinguished, like the Prisma read it replaces).
 */
export async function readSession(
  raw: RawConnection,
  id: string,
  scope: StringMap,
  policy: SessionPolicy,
): Promise<SessionWithRelations | null> {
  const rows = await rawSelect<RawSessionRow>(
    raw,
    READ,
    raw.provider === 'sqlite' ? [id, id, id] : [id],
  );
  const row = rows[0];
  if (!row) return null;
  const expiresAt = rawDateOrNull(row.expires_at);
  const lastActivityAt = rawDate(row.last_activity_at);
  if (!isLive({ expiresAt, lastActivityAt }, policy)) return null;
  const pairs = rows.flatMap(({ kind, key, value }) =>
    kind === null || key === null || value === null ? [] : [{ kind: Number(kind), key, value }],
  );
  const scopes = pairs.filter((pair) => pair.kind === 0);
  const metadata = pairs.filter((pair) => pair.kind === 1);
  const scopeMap: StringMap = {};
  for (const pair of scopes) scopeMap[pair.key] = pair.value;
  if (!inScope(scopeMap, scope)) return null;
  return {
    id: row.id,
    threadId: row.thread_id,
    title: row.title,
    status: row.status,
    agentName: row.agent_name,
    config: row.config,
    messageCount: Number(row.message_count),
    version: Number(row.version),
    parentId: row.parent_id,
    workspacePath: row.workspace_path,
    projectedCheckpointId: row.projected_checkpoint_id,
    systemPrompt: row.system_prompt,
    task: row.task,
    endedAt: rawDateOrNull(row.ended_at),
    lastActivityAt,
    expiresAt,
    checkpointRetention: row.checkpoint_retention,
    createdAt: rawDate(row.created_at),
    updatedAt: rawDate(row.updated_at),
    scopes: scopes.map((pair) => ({ sessionId: id, key: pair.key, value: pair.value })),
    metadata: metadata.map((pair) => ({ sessionId: id, key: pair.key, value: pair.value })),
  };
}
