import { ROOT_CHECKPOINT_NS } from '@cognition/storage';
import type pg from 'pg';
import type { GuardedWrites } from '../langgraph/sql/checkpoint-sql';
import type { LatestAndRow, ProjectedRow, ProjectionRequest } from './projection-plan';
import { firstPosition, planWrites, splitLatestAndRows } from './projection-plan';

/*
 * The projection planned ahead of a PostgreSQL put, so that the checkpoint, its rows and the
 * session update are one statement: a put was BEGIN, upsert, lock, read, a write per kind, the
 * session update, COMMIT (six to eight round trips, five puts a turn); planned ahead it is the
 * read and the statement.
 *
 * The read takes no lock, so the statement proves it still current: the session row's `xmin`
 * (the transaction that last updated it) must be the one read. Every writer of a session's rows
 * updates that row in the same transaction (`messages.create` increments `message_count` before
 * it inserts; a projection ends with the session update), so an unchanged `xmin` means no such
 * write committed since the read, and under READ COMMITTED an UPDATE that waited for a
 * concurrent writer re-checks its condition on the row as that writer left it. When the
 * condition fails nothing is written and the put runs the locked transaction
 * (`projectOnPostgres`), which decides again.
 */

/** A Date as PostgreSQL's `timestamp(3)` (without time zone) in UTC, as Prisma stores it. */
export const PG_NOW = (param: string): string => `(${param}::timestamptz AT TIME ZONE 'UTC')`;

export const PROJECTED_NAMES = `id, seq, role, content, tool_calls, tool_call_id, token_count,
  model_used, parent_id, metadata`;

/** The ten arrays {@link columnArrays} binds, as parameters from `$first` on. */
export function projectedArrays(first: number): string {
  const types = ['text', 'int', 'text', 'text', 'text', 'text', 'int', 'text', 'text', 'text'];
  return types.map((type, i) => `$${first + i}::${type}[]`).join(', ');
}

/** The columns of `rows` as the ten arrays {@link projectedArrays} names. */
export function columnArrays(rows: readonly ProjectedRow[]): unknown[] {
  return [
    rows.map((row) => row.id),
    rows.map((row) => row.seq),
    rows.map((row) => row.role),
    rows.map((row) => row.content),
    rows.map((row) => row.tool_calls),
    rows.map((row) => row.tool_call_id),
    rows.map((row) => row.token_count),
    rows.map((row) => row.model_used),
    rows.map((row) => row.parent_id),
    rows.map((row) => row.metadata),
  ];
}

/**
 * The session row (with its `xmin`), the latest root checkpoint id, the lowest `seq` and the
 * rows from the first position to project on (the CASE is `firstPosition`'s rule), in one
 * statement without a lock. $1 thread, $2 the base checkpoint id (or null), $3 its `kept`.
 */
const READ = {
  name: 'cognition_projection_read_ahead',
  text: `SELECT s.id AS session_id, s.projected_checkpoint_id, s.xmin::text AS version,
      l.latest, f.lowest, m.id, m.seq, m.source, m.role, m.content, m.tool_calls,
      m.tool_call_id, m.token_count, m.model_used, m.parent_id, m.metadata
    FROM sessions s
    CROSS JOIN (SELECT max(checkpoint_id) AS latest FROM checkpoints
      WHERE thread_id = $1 AND checkpoint_ns = '${ROOT_CHECKPOINT_NS}') l
    CROSS JOIN LATERAL (SELECT min(seq) AS lowest FROM messages WHERE session_id = s.id) f
    LEFT JOIN messages m ON m.session_id = s.id
      AND m.seq >= CASE WHEN s.projected_checkpoint_id = $2::text THEN $3::int
        ELSE -2147483648 END
    WHERE s.thread_id = $1
    ORDER BY m.seq`,
};

type ReadRow = LatestAndRow & {
  session_id: string;
  projected_checkpoint_id: string | null;
  version: string;
};

/**
 * The guarded CTEs (see `GuardedWrites`): `guard` updates the session row if it is unchanged
 * since the read and no newer root checkpoint exists; the rewrites and creates follow it.
 * Parameters from `$p`: session, version, count, touched, now, checkpoint id, thread, then the
 * rewrites' ten arrays and the creates' ten.
 */
function guardedCtes(p: number): string {
  const touched = (column: string): string =>
    `${column} = CASE WHEN $${p + 3}::boolean THEN ${PG_NOW(`$${p + 4}`)} ELSE ${column} END`;
  return `guard AS (
    UPDATE sessions SET message_count = $${p + 2}::int, projected_checkpoint_id = $${p + 5}::text,
      ${touched('updated_at')}, ${touched('last_activity_at')}
    WHERE id = $${p}::text AND xmin::text = $${p + 1}::text AND EXISTS (SELECT 1 FROM pre)
      AND NOT EXISTS (SELECT 1 FROM checkpoints WHERE thread_id = $${p + 6}::text
        AND checkpoint_ns = '${ROOT_CHECKPOINT_NS}' AND checkpoint_id > $${p + 5}::text)
    RETURNING id
  ),
  rewritten AS (
    UPDATE messages m SET seq = v.seq, role = v.role, content = v.content,
      tool_calls = v.tool_calls, tool_call_id = v.tool_call_id, token_count = v.token_count,
      model_used = v.model_used, parent_id = v.parent_id, metadata = v.metadata,
      source = 'checkpoint'
    FROM unnest(${projectedArrays(p + 7)}) AS v(${PROJECTED_NAMES})
    WHERE m.id = v.id AND m.session_id = $${p}::text AND EXISTS (SELECT 1 FROM guard)
  ),
  created AS (
    INSERT INTO messages (${PROJECTED_NAMES}, session_id, source, created_at)
    SELECT v.*, $${p}::text, 'checkpoint', ${PG_NOW(`$${p + 4}`)}
    FROM unnest(${projectedArrays(p + 17)}) AS v(${PROJECTED_NAMES})
    WHERE EXISTS (SELECT 1 FROM guard)
  )`;
}

/**
 * The projection of `request` planned from an unlocked read, as writes for the put's own
 * statement; undefined when it must run locked: no session, the gate declines, or rows would be
 * deleted or change position (those writes need an order one statement does not give).
 */
export async function planOnPostgres(
  pool: pg.Pool,
  request: ProjectionRequest,
): Promise<GuardedWrites | undefined> {
  const base = request.base;
  const result = await pool.query<ReadRow>({
    ...READ,
    values: [request.threadId, base?.checkpointId ?? null, base?.kept ?? 0],
  });
  const first = result.rows[0];
  if (!first || request.checkpointId === null) return undefined;
  const session = { id: first.session_id, projected_checkpoint_id: first.projected_checkpoint_id };
  const { from } = firstPosition(session, request);
  const { latest, lowest, rows } = splitLatestAndRows(
    result.rows.map(({ session_id: _, projected_checkpoint_id: __, version: ___, ...row }) => row),
  );
  if (!request.gate(latest)) return undefined;
  const writes = planWrites(session.id, rows, request.messages, from, lowest);
  if (writes.deleteIds.length > 0 || writes.moves.length > 0 || writes.parkedBelow !== null)
    return undefined;
  return {
    name: 'projection',
    ctes: guardedCtes,
    values: [
      session.id,
      first.version,
      writes.messageCount,
      writes.countChanged,
      new Date().toISOString(),
      request.checkpointId,
      request.threadId,
      ...columnArrays(writes.rewrites),
      ...columnArrays(writes.creates),
    ],
  };
}
