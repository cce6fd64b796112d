import { ROOT_CHECKPOINT_NS } from '@cognition/storage';
import type pg from 'pg';
import type { GuardedWrites } from '../langgraph/sql/checkpoint-sql';
import type { LatestAndRow, ProjectedRow, ProjectionRequest } from './projection-plan';
import { firstPosition, LOWEST_SEQ, planWrites, splitLatestAndRows } from './projection-plan';

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
    RETURNING id, xmin::text AS version
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
 * What the session looked like right after this process's own guarded put of a thread: the
 * session row's version (the `xmin` its statement left), the checkpoint it projected, the
 * lowest `seq`, and every row from position `readFrom` on as that statement left it. The next
 * put of the thread plans from it instead of reading, under the same guard: if anything touched
 * the session since (another node, `messages.create`, a rewind), its `xmin` moved and the
 * statement writes nothing; the put then plans again from a read.
 */
interface AfterPut {
  sessionId: string;
  version: string;
  projectedCheckpointId: string | null;
  lowest: number | null;
  readFrom: number;
  rows: StoredRow[];
  bytes: number;
}

type AfterPutBase = Omit<AfterPut, 'bytes' | 'rows' | 'version'>;

export type StoredRow = ReturnType<typeof splitLatestAndRows>['rows'][number];

/** Bounds of what is remembered per pool: threads, and bytes (of one thread and of all). */
const AFTER_PUT_MAX_THREADS = 256;
const AFTER_PUT_MAX_THREAD_BYTES = 1024 * 1024;
const AFTER_PUT_MAX_BYTES = 16 * 1024 * 1024;

interface AfterPuts {
  byThread: Map<string, AfterPut>;
  bytes: number;
}

const afterPuts = new WeakMap<pg.Pool, AfterPuts>();

/**
 * Forgets (and returns) what the last put of `threadId` left. Also called when the thread's
 * session is deleted: the entry would otherwise hold the deleted rows until evicted.
 */
export function forgetAfterPut(pool: pg.Pool, threadId: string): AfterPut | undefined {
  const remembered = afterPuts.get(pool);
  const entry = remembered?.byThread.get(threadId);
  if (!remembered || !entry) return undefined;
  remembered.byThread.delete(threadId);
  remembered.bytes -= entry.bytes;
  return entry;
}

/** The threads whose rows are remembered for `pool`, oldest first (what specs can observe). */
export function rememberedThreads(pool: pg.Pool): string[] {
  return [...(afterPuts.get(pool)?.byThread.keys() ?? [])];
}

/** Takes (and forgets) what the last put of `threadId` left, if it holds the rows `request` reads. */
function takeAfterPut(
  pool: pg.Pool,
  request: ProjectionRequest,
): { entry: AfterPut; rows: StoredRow[] } | undefined {
  const entry = forgetAfterPut(pool, request.threadId);
  if (!entry) return undefined;
  const { readFrom } = firstPosition(
    { id: entry.sessionId, projected_checkpoint_id: entry.projectedCheckpointId },
    request,
  );
  if (readFrom < entry.readFrom) return undefined;
  return { entry, rows: entry.rows.filter((row) => row.seq >= readFrom) };
}

function rowBytes(row: StoredRow): number {
  return 200 + row.id.length + row.content.length + row.tool_calls.length + row.metadata.length;
}

/**
 * Remembers the rows a put left (`after`, every row from `readFrom` on, in `seq` order); only
 * the newest that fit {@link AFTER_PUT_MAX_THREAD_BYTES}, then known from the first of them.
 */
function rememberAfterPut(
  pool: pg.Pool,
  threadId: string,
  entry: Omit<AfterPut, 'bytes' | 'rows'>,
  after: StoredRow[],
): void {
  let remembered = afterPuts.get(pool);
  if (!remembered) {
    remembered = { byThread: new Map(), bytes: 0 };
    afterPuts.set(pool, remembered);
  }
  let bytes = 0;
  let first = after.length;
  while (first > 0) {
    const size = rowBytes(after[first - 1] as StoredRow);
    if (bytes + size > AFTER_PUT_MAX_THREAD_BYTES) break;
    bytes += size;
    first -= 1;
  }
  const rows = after.slice(first);
  const readFrom = first > 0 ? (rows[0]?.seq ?? Number.MAX_SAFE_INTEGER) : entry.readFrom;
  const previous = remembered.byThread.get(threadId);
  if (previous) {
    remembered.byThread.delete(threadId);
    remembered.bytes -= previous.bytes;
  }
  remembered.byThread.set(threadId, { ...entry, readFrom, rows, bytes });
  remembered.bytes += bytes;
  for (const [oldest, dropped] of remembered.byThread) {
    if (
      remembered.byThread.size <= AFTER_PUT_MAX_THREADS &&
      remembered.bytes <= AFTER_PUT_MAX_BYTES
    )
      break;
    remembered.byThread.delete(oldest);
    remembered.bytes -= dropped.bytes;
  }
}

/**
 * A message this process inserted into a session with a statement that saw the session row at
 * version `seen` and left it at `version`: when that is the version remembered after the
 * thread's last put, nothing else happened in between, so the row joins what is remembered
 * (the next put then needs no read); otherwise what is remembered is stale and is dropped.
 * When nothing is remembered and the session had no rows (`lowestBefore` null: a new session's
 * first message), its rows are this one alone, which is remembered the same way.
 */
export function noteDirectInsert(
  pool: pg.Pool,
  sessionId: string,
  insert: {
    seen: string;
    version: string;
    thread_id: string;
    projected_checkpoint_id: string | null;
    lowest_before: number | null;
  },
  row: StoredRow,
): void {
  const entry = forgetAfterPut(pool, insert.thread_id);
  const base: AfterPutBase | undefined = entry
    ? entry.version === insert.seen && row.seq >= entry.readFrom
      ? { ...entry, lowest: entry.lowest === null ? row.seq : Math.min(entry.lowest, row.seq) }
      : undefined
    : insert.lowest_before === null
      ? {
          sessionId,
          projectedCheckpointId: insert.projected_checkpoint_id,
          lowest: row.seq,
          readFrom: LOWEST_SEQ,
        }
      : undefined;
  if (!base) return;
  rememberAfterPut(pool, insert.thread_id, { ...base, version: insert.version }, [
    ...(entry?.rows ?? []),
    row,
  ]);
}

/**
 * The projection of `request` planned from an unlocked read — or, when this process's last put
 * of the thread is the base of this one, from what that put left (no read: see
 * {@link AfterPut}) — as writes for the put's own statement; undefined when it must run locked:
 * no session, the gate declines, or rows would be deleted or change position (those writes need
 * an order one statement does not give).
 */
export async function planOnPostgres(
  pool: pg.Pool,
  request: ProjectionRequest,
): Promise<GuardedWrites | undefined> {
  if (request.checkpointId === null) return undefined;
  const checkpointId = request.checkpointId;
  const known = takeAfterPut(pool, request);
  let session: { id: string; projected_checkpoint_id: string | null };
  let version: string;
  let latest: string | null;
  let lowest: number | null;
  let rows: StoredRow[];
  if (known) {
    session = {
      id: known.entry.sessionId,
      projected_checkpoint_id: known.entry.projectedCheckpointId,
    };
    version = known.entry.version;
    // The guard proves that no newer root checkpoint exists; as far as this process knows, the
    // latest is the one it projected.
    latest = known.entry.projectedCheckpointId;
    lowest = known.entry.lowest;
    rows = known.rows;
  } else {
    const base = request.base;
    const result = await pool.query<ReadRow>({
      ...READ,
      values: [request.threadId, base?.checkpointId ?? null, base?.kept ?? 0],
    });
    const first = result.rows[0];
    if (!first) return undefined;
    session = { id: first.session_id, projected_checkpoint_id: first.projected_checkpoint_id };
    version = first.version;
    ({ latest, lowest, rows } = splitLatestAndRows(
      result.rows.map(
        ({ session_id: _, projected_checkpoint_id: __, version: ___, ...row }) => row,
      ),
    ));
  }
  const { from, readFrom } = firstPosition(session, request);
  if (!request.gate(latest)) return undefined;
  const writes = planWrites(session.id, rows, request.messages, from, lowest);
  if (writes.deleteIds.length > 0 || writes.moves.length > 0 || writes.parkedBelow !== null)
    return undefined;
  const sessionId = session.id;
  return {
    name: 'projection',
    ctes: guardedCtes,
    values: [
      sessionId,
      version,
      writes.messageCount,
      writes.countChanged,
      new Date().toISOString(),
      checkpointId,
      request.threadId,
      ...columnArrays(writes.rewrites),
      ...columnArrays(writes.creates),
    ],
    planned: known ? 'remembered' : 'read',
    applied: (newVersion) => {
      // The rows as the statement left them: those read, rewritten or created (none moved).
      const written = new Map<string, StoredRow>(rows.map((row) => [row.id, row]));
      for (const row of [...writes.rewrites, ...writes.creates])
        written.set(row.id, { ...row, source: 'checkpoint' });
      const created = writes.creates.map((row) => row.seq);
      const low = lowest === null ? created : [lowest, ...created];
      rememberAfterPut(
        pool,
        request.threadId,
        {
          sessionId,
          version: newVersion,
          projectedCheckpointId: checkpointId,
          lowest: low.length > 0 ? Math.min(...low) : null,
          readFrom,
        },
        [...written.values()].sort((x, y) => x.seq - y.seq),
      );
    },
  };
}
