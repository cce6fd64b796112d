import type { AgentEvent, AgentEventEnvelope } from '@cognition/contracts';
import { eventJson } from '@cognition/contracts';
import type {
  AppendRetention,
  CarriedRunUsage,
  EventStore,
  RunFence,
  StoredEventPage,
} from '@cognition/storage';
import { RunFencedError } from '@cognition/storage';
import type { PrismaDb } from '../db/db';
import { guard, isForeignKeyViolation } from '../db/errors';
import type { RawConnection } from '../db/raw-connections';
import { inSqliteTransaction, requireRawConnection } from '../db/raw-connections';
import type { SqliteSession } from '../db/sqlite-connection';
import { pgUtc, rawDate, sqliteTimestamp } from '../db/raw-select';
import { usagePatch } from './run-statements';
import { updateRunOnSqlite } from './run-writes';
import type { RunVersions } from './run-writes-postgres';
import { carriedUsageCtes, updateRunOnPostgres } from './run-writes-postgres';

/**
 * `created_at` is the envelope's `at`, when the event was emitted (not when its batch was
 * written), in UTC as Prisma keeps a DateTime. Ids already held are skipped (`ON CONFLICT DO NOTHING`: an append retried after an unknown
 * outcome stores nothing twice) and events of a session that no longer exists are dropped (the
 * `EXISTS` filter), in the same statement. The SELECT carries a WHERE so SQLite parses the
 * upsert clause.
 */
const SQLITE_INSERT = `INSERT INTO run_events (session_id, id, run_id, event, created_at)
  SELECT ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM sessions WHERE id = ?)
  ON CONFLICT DO NOTHING`;
/**
 * Run fencing (PostgreSQL), in the append's own statement: `refused` is the runs of the fences
 * ($6 run ids, $7 owners, $8 claim numbers) no longer held under them. The run rows that do hold
 * are share-locked until the statement commits: a claim (an UPDATE of the row) waits for the
 * append, or the append waits for the claim and re-checks the row it left (refused then).
 */
const POSTGRES_REFUSED = `refused AS (
    SELECT f.run_id FROM unnest($6::text[], $7::text[], $8::int[]) AS f(run_id, owner, claim)
    WHERE NOT EXISTS (
      SELECT 1 FROM runs r
      WHERE r.id = f.run_id AND r.owner_node = f.owner AND r.lease_attempt = f.claim
      FOR SHARE
    )
  )`;
const POSTGRES_INSERT = `WITH ${POSTGRES_REFUSED},
  inserted AS (
    INSERT INTO run_events (session_id, id, run_id, event, created_at)
    SELECT v.session_id, v.id, v.run_id, v.event, v.at AT TIME ZONE 'UTC'
    FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[])
      AS v(session_id, id, run_id, event, at)
    WHERE EXISTS (SELECT 1 FROM sessions s WHERE s.id = v.session_id)
      AND NOT EXISTS (SELECT 1 FROM refused x WHERE x.run_id = v.run_id)
    ON CONFLICT DO NOTHING
  )`;

/**
 * PostgreSQL: the append and the trim of `retention`'s sessions as one statement. Its CTEs
 * share one snapshot, so the boundary (the id `keep` places below the newest, as the trim's)
 * is taken over the stored ids and the batch's together; the batch's rows at or below it are
 * not inserted, the stored ones are deleted: what an append then a trim leave. $1–$5 the
 * events and $6–$8 the fences (as POSTGRES_INSERT's), $9 the sessions to trim, $10 the number
 * kept.
 */
const POSTGRES_INSERT_RETAINED = `WITH ${POSTGRES_REFUSED},
  v AS (
    SELECT v.session_id, v.id, v.run_id, v.event, v.at
    FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[])
      AS v(session_id, id, run_id, event, at)
    WHERE EXISTS (SELECT 1 FROM sessions s WHERE s.id = v.session_id)
      AND NOT EXISTS (SELECT 1 FROM refused x WHERE x.run_id = v.run_id)
  ),
  boundary AS (
    SELECT t.session_id, (
      SELECT ids.id FROM (
        SELECT e.id FROM run_events e WHERE e.session_id = t.session_id
        UNION SELECT v.id FROM v WHERE v.session_id = t.session_id
      ) ids ORDER BY ids.id DESC LIMIT 1 OFFSET $10::int
    ) AS id
    FROM unnest($9::text[]) AS t(session_id)
  ),
  inserted AS (
    INSERT INTO run_events (session_id, id, run_id, event, created_at)
    SELECT v.session_id, v.id, v.run_id, v.event, v.at AT TIME ZONE 'UTC' FROM v
    LEFT JOIN boundary b ON b.session_id = v.session_id
    WHERE b.id IS NULL OR v.id > b.id
    ON CONFLICT DO NOTHING
  ),
  deleted AS (
    DELETE FROM run_events e USING boundary b
    WHERE e.session_id = b.session_id AND e.id <= b.id
  ),
  marked AS (
    INSERT INTO run_event_trims (session_id, evicted_up_to)
    SELECT session_id, id FROM boundary WHERE id IS NOT NULL
    ON CONFLICT (session_id) DO UPDATE SET evicted_up_to = excluded.evicted_up_to
  )`;

/** SQLite: whether a run is held under a fence (read in the append's transaction). */
const SQLITE_FENCE = `SELECT 1 AS held FROM runs WHERE id = ? AND owner_node = ? AND lease_attempt = ?`;

async function insertNew(
  raw: RawConnection,
  versions: RunVersions,
  envelopes: readonly AgentEventEnvelope[],
  retention: AppendRetention | undefined,
  fences: readonly RunFence[],
  usage: readonly CarriedRunUsage[],
): Promise<string[]> {
  if (raw.provider === 'sqlite') {
    return inSqliteTransaction(raw.connection, (session) => {
      // In the append's transaction (SQLite serialises them): no claim comes in between.
      const check = session.prepare<{ held: number }>(SQLITE_FENCE);
      const refused = fences
        .filter((f) => check.get(f.runId, f.ownerNode, f.claim) === undefined)
        .map((f) => f.runId);
      const insert = session.prepare(SQLITE_INSERT);
      for (const e of envelopes) {
        if (refused.includes(e.runId)) continue;
        const at = sqliteTimestamp(new Date(e.at));
        insert.run(e.sessionId, e.id, e.runId, eventJson(e.event), at, e.sessionId);
      }
      // The fences were checked above, in this transaction.
      for (const carried of usage) {
        if (!refused.includes(carried.runId)) {
          updateRunOnSqlite(session, carried.runId, usagePatch(carried.usage));
        }
      }
      for (const sessionId of retention?.sessionIds ?? []) {
        trimOnSqlite(session, sessionId, retention?.keep ?? 0);
      }
      return refused;
    });
  }
  // One statement is one atomic commit on its own: no BEGIN/COMMIT round trips around it (a
  // flush of the event log's group commit is then one round trip, its retention and one run's
  // usage included). Named, so each pooled connection prepares it once.
  const values: unknown[] = [
    envelopes.map((e) => e.sessionId),
    envelopes.map((e) => e.id),
    envelopes.map((e) => e.runId),
    envelopes.map((e) => eventJson(e.event)),
    envelopes.map((e) => e.at),
    fences.map((f) => f.runId),
    fences.map((f) => f.ownerNode),
    fences.map((f) => f.claim),
  ];
  const retained = retention !== undefined && retention.sessionIds.length > 0;
  if (retained) values.push([...retention.sessionIds], Math.max(0, retention.keep));
  // One run's usage rides in the statement; another run's (a node running several) follows it.
  const [first, ...rest] = usage;
  const carried =
    first === undefined
      ? null
      : carriedUsageCtes(
          versions,
          first.runId,
          usagePatch(first.usage),
          fences.find((f) => f.runId === first.runId),
          values.length + 1,
        );
  if (carried) values.push(...carried.values);
  const name = `cognition_append_run_events${retained ? '_retained' : ''}${carried ? '_usage' : ''}`;
  const ctes = retained ? POSTGRES_INSERT_RETAINED : POSTGRES_INSERT;
  const result = await raw.pool.query<{ run_id: string | null; row_version: string | null }>({
    name,
    text: carried
      ? `${ctes}, ${carried.sql}
        SELECT run_id, NULL::text AS row_version FROM refused
        UNION ALL SELECT NULL, row_version FROM carried`
      : `${ctes} SELECT run_id, NULL::text AS row_version FROM refused`,
    values,
  });
  const refused = result.rows.flatMap((row) => (row.run_id === null ? [] : [row.run_id]));
  const version = result.rows.find((row) => row.row_version !== null)?.row_version;
  if (carried && version) carried.written(version);
  // Its guard failed (the row changed since this store wrote it, a lease renewal): the update
  // after the append reads the row's version anew instead of failing the same guard again.
  else if (carried && first) versions.delete(first.runId);
  const after = carried && version ? rest : usage;
  for (const { runId, usage: figures } of after) {
    if (refused.includes(runId)) continue;
    try {
      // Not carried (or its guard failed: the row changed since this store wrote it): the
      // run's own update, after the events it follows.
      await updateRunOnPostgres(
        raw.pool,
        versions,
        runId,
        usagePatch(figures),
        fences.find((f) => f.runId === runId),
      );
    } catch (error) {
      // Claimed by another node since its events were stored: refused from now on.
      if (!(error instanceof RunFencedError)) throw error;
      refused.push(runId);
    }
  }
  return refused;
}

/** SQLite: a page of events and the session's eviction mark, under one hold of the connection. */
const SQLITE_READS = {
  first: `SELECT id, run_id, event, created_at AS at FROM run_events WHERE session_id = ?
    ORDER BY id LIMIT ?`,
  after: `SELECT id, run_id, event, created_at AS at FROM run_events WHERE session_id = ? AND id > ?
    ORDER BY id LIMIT ?`,
  trim: 'SELECT evicted_up_to FROM run_event_trims WHERE session_id = ?',
};

/**
 * PostgreSQL: a page of events with the session's eviction mark in one statement (one round
 * trip where the two reads were two): the mark is the row of kind 0 (in `id`), the events the
 * rows of kind 1. $1 session, $2 the id to read after (null: from the first), $3 the limit.
 */
const POSTGRES_PAGE = {
  name: 'cognition_run_events_page',
  text: `SELECT 0 AS kind, evicted_up_to AS id, NULL AS run_id, NULL AS event, NULL AS at
    FROM run_event_trims WHERE session_id = $1::text
    UNION ALL
    SELECT * FROM (SELECT 1 AS kind, id, run_id, event, ${pgUtc('created_at', 'at')} FROM run_events
      WHERE session_id = $1::text AND ($2::text IS NULL OR id > $2::text)
      ORDER BY id LIMIT $3::int) page`,
};

/**
 * PostgreSQL: the trim as one statement (atomic on its own: no BEGIN/COMMIT around it): the id
 * `keep` places below the newest, the rows up to it deleted, the mark moved to it.
 */
const POSTGRES_TRIM = {
  name: 'cognition_trim',
  text: `WITH boundary AS (
      SELECT id FROM run_events WHERE session_id = $1::text ORDER BY id DESC LIMIT 1 OFFSET $2::int
    ),
    deleted AS (
      DELETE FROM run_events WHERE session_id = $1::text AND id <= (SELECT id FROM boundary)
      RETURNING 1
    ),
    mark AS (
      INSERT INTO run_event_trims (session_id, evicted_up_to) SELECT $1::text, id FROM boundary
      ON CONFLICT (session_id) DO UPDATE SET evicted_up_to = excluded.evicted_up_to
    )
    SELECT count(*)::int AS deleted FROM deleted`,
};

/** The trim on SQLite: the id `keep` places below the newest, then what it evicts. */
const SQLITE_TRIM = {
  boundary: 'SELECT id FROM run_events WHERE session_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?',
  delete: 'DELETE FROM run_events WHERE session_id = ? AND id <= ?',
  mark: `INSERT INTO run_event_trims (session_id, evicted_up_to) VALUES (?, ?)
    ON CONFLICT (session_id) DO UPDATE SET evicted_up_to = excluded.evicted_up_to`,
};

/** The trim inside `session`'s open transaction. */
function trimOnSqlite(session: SqliteSession, sessionId: string, keep: number): number {
  const boundary = session
    .prepare<{ id: string }>(SQLITE_TRIM.boundary)
    .all(sessionId, Math.max(0, keep));
  const last = boundary[0]?.id;
  if (last === undefined) return 0;
  const { changes } = session.prepare(SQLITE_TRIM.delete).run(sessionId, last);
  session.prepare(SQLITE_TRIM.mark).run(sessionId, last);
  return changes;
}

async function trimOn(raw: RawConnection, sessionId: string, keep: number): Promise<number> {
  const skip = Math.max(0, keep);
  if (raw.provider === 'sqlite') {
    return inSqliteTransaction(raw.connection, (session) => trimOnSqlite(session, sessionId, skip));
  }
  const result = await raw.pool.query<{ deleted: number }>({
    ...POSTGRES_TRIM,
    values: [sessionId, skip],
  });
  return result.rows[0]?.deleted ?? 0;
}

/**
 * The durable run-event log: one row per event (`run_events`), the eviction mark per session in
 * `run_event_trims`. Appends are one transaction per batch, so a streamed run costs one write
 * per batch the event log groups (`StorageEventLog`'s group commit: every run of the node in
 * one batch), not one per token; they go straight to the driver (one prepared multi-row
 * statement on PostgreSQL, one prepared insert per event in one transaction on SQLite) because
 * Prisma's per-query cost was most of the time of a streamed token (benchmark 9a).
 */
export class PrismaEventStore implements EventStore {
  private readonly raw: RawConnection;

  constructor(
    db: PrismaDb,
    /** The run store's row versions (PostgreSQL): a carried usage is guarded by them. */
    private readonly versions: RunVersions,
  ) {
    this.raw = requireRawConnection(db, 'The event store');
  }

  append(
    envelopes: readonly AgentEventEnvelope[],
    retention?: AppendRetention,
    fences: readonly RunFence[] = [],
    usage: readonly CarriedRunUsage[] = [],
  ): Promise<string[]> {
    if (envelopes.length === 0 && !retention?.sessionIds.length && usage.length === 0) {
      return Promise.resolve([]);
    }
    // Sorted: concurrent appends share-lock run rows in one order.
    const sorted = [...fences].sort((a, b) => (a.runId < b.runId ? -1 : 1));
    return guard('append events', async () => {
      // A session deleted between the existence check and the insert (Postgres) makes the
      // statement fail on the foreign key; the retry no longer inserts its events.
      for (let attempt = 1; ; attempt += 1) {
        try {
          return await insertNew(this.raw, this.versions, envelopes, retention, sorted, usage);
        } catch (error) {
          if (!isForeignKeyViolation(error) || attempt >= 3) throw error;
        }
      }
    });
  }

  listAfter(sessionId: string, after: string | undefined, limit: number): Promise<StoredEventPage> {
    return guard('list events', async () => {
      const { rows, evictedUpTo } = await pageOf(this.raw, sessionId, after, limit);
      return {
        events: rows.map((row) => ({
          id: row.id,
          sessionId,
          runId: row.run_id,
          at: rawDate(row.at).toISOString(),
          event: JSON.parse(row.event) as AgentEvent,
        })),
        evictedUpTo,
      };
    });
  }

  trim(sessionId: string, keep: number): Promise<number> {
    return guard('trim events', () => trimOn(this.raw, sessionId, keep));
  }
}

interface EventRow {
  id: string;
  run_id: string;
  event: string;
  /** `created_at`: a Date on PostgreSQL, ISO text on SQLite. */
  at: unknown;
}

async function pageOf(
  raw: RawConnection,
  sessionId: string,
  after: string | undefined,
  limit: number,
): Promise<{ rows: EventRow[]; evictedUpTo: string | null }> {
  if (raw.provider === 'postgresql') {
    const result = await raw.pool.query<EventRow & { kind: number }>({
      ...POSTGRES_PAGE,
      values: [sessionId, after ?? null, limit],
    });
    const mark = result.rows.find((row) => row.kind === 0);
    return { rows: result.rows.filter((row) => row.kind === 1), evictedUpTo: mark?.id ?? null };
  }
  return raw.connection.run((session) => {
    const rows =
      after === undefined
        ? session.prepare<EventRow>(SQLITE_READS.first).all(sessionId, limit)
        : session.prepare<EventRow>(SQLITE_READS.after).all(sessionId, after, limit);
    const mark = session.prepare<{ evicted_up_to: string }>(SQLITE_READS.trim).get(sessionId);
    return { rows, evictedUpTo: mark?.evicted_up_to ?? null };
  });
}
