import type { AgentEvent, AgentEventEnvelope } from '@cognition/contracts';
import type { EventStore, StoredEventPage } from '@cognition/storage';
import type { PrismaDb } from '../db/db';
import { guard, isForeignKeyViolation } from '../db/errors';
import type { RawConnection } from '../db/raw-connections';
import {
  inPostgresTransaction,
  inSqliteTransaction,
  requireRawConnection,
} from '../db/raw-connections';
import type { RawSelect } from '../db/raw-select';
import { rawSelect, sqliteTimestamp } from '../db/raw-select';

/**
 * Ids already held are skipped (`ON CONFLICT DO NOTHING`: an append retried after an unknown
 * outcome stores nothing twice) and events of a session that no longer exists are dropped (the
 * `EXISTS` filter), in the same statement. The SELECT carries a WHERE so SQLite parses the
 * upsert clause.
 */
const SQLITE_INSERT = `INSERT INTO run_events (session_id, id, run_id, event, created_at)
  SELECT ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM sessions WHERE id = ?)
  ON CONFLICT DO NOTHING`;
const POSTGRES_INSERT = `INSERT INTO run_events (session_id, id, run_id, event, created_at)
  SELECT v.session_id, v.id, v.run_id, v.event, now()
  FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS v(session_id, id, run_id, event)
  WHERE EXISTS (SELECT 1 FROM sessions s WHERE s.id = v.session_id)
  ON CONFLICT DO NOTHING`;

async function insertNew(
  raw: RawConnection,
  envelopes: readonly AgentEventEnvelope[],
): Promise<void> {
  if (raw.provider === 'sqlite') {
    const now = sqliteTimestamp(new Date());
    await inSqliteTransaction(raw.connection, (session) => {
      const insert = session.prepare(SQLITE_INSERT);
      for (const e of envelopes) {
        insert.run(e.sessionId, e.id, e.runId, JSON.stringify(e.event), now, e.sessionId);
      }
    });
    return;
  }
  {
    // One statement is one atomic commit on its own: no BEGIN/COMMIT round trips around it (a
    // flush of the event log's group commit is then one round trip). Named, so each pooled
    // connection prepares it once.
    await raw.pool.query({
      name: 'cognition_append_run_events',
      text: POSTGRES_INSERT,
      values: [
        envelopes.map((e) => e.sessionId),
        envelopes.map((e) => e.id),
        envelopes.map((e) => e.runId),
        envelopes.map((e) => JSON.stringify(e.event)),
      ],
    });
  }
}

const READS = {
  first: {
    name: 'cognition_run_events_first',
    sqlite: 'SELECT id, run_id, event FROM run_events WHERE session_id = ? ORDER BY id LIMIT ?',
    postgres: 'SELECT id, run_id, event FROM run_events WHERE session_id = $1 ORDER BY id LIMIT $2',
  },
  after: {
    name: 'cognition_run_events_after',
    sqlite: `SELECT id, run_id, event FROM run_events WHERE session_id = ? AND id > ?
      ORDER BY id LIMIT ?`,
    postgres: `SELECT id, run_id, event FROM run_events WHERE session_id = $1 AND id > $2
      ORDER BY id LIMIT $3`,
  },
  trim: {
    name: 'cognition_run_event_trim',
    sqlite: 'SELECT evicted_up_to FROM run_event_trims WHERE session_id = ?',
    postgres: 'SELECT evicted_up_to FROM run_event_trims WHERE session_id = $1',
  },
} satisfies Record<string, RawSelect>;

/** The trim in both dialects: the id `keep` places below the newest, then what it evicts. */
const TRIM = {
  boundary: {
    sqlite: 'SELECT id FROM run_events WHERE session_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?',
    postgres: 'SELECT id FROM run_events WHERE session_id = $1 ORDER BY id DESC LIMIT 1 OFFSET $2',
  },
  delete: {
    sqlite: 'DELETE FROM run_events WHERE session_id = ? AND id <= ?',
    postgres: 'DELETE FROM run_events WHERE session_id = $1 AND id <= $2',
  },
  mark: {
    sqlite: `INSERT INTO run_event_trims (session_id, evicted_up_to) VALUES (?, ?)
      ON CONFLICT (session_id) DO UPDATE SET evicted_up_to = excluded.evicted_up_to`,
    postgres: `INSERT INTO run_event_trims (session_id, evicted_up_to) VALUES ($1, $2)
      ON CONFLICT (session_id) DO UPDATE SET evicted_up_to = excluded.evicted_up_to`,
  },
};

async function trimOn(raw: RawConnection, sessionId: string, keep: number): Promise<number> {
  const skip = Math.max(0, keep);
  if (raw.provider === 'sqlite') {
    return inSqliteTransaction(raw.connection, (session) => {
      const boundary = session.prepare<{ id: string }>(TRIM.boundary.sqlite).all(sessionId, skip);
      const last = boundary[0]?.id;
      if (last === undefined) return 0;
      const { changes } = session.prepare(TRIM.delete.sqlite).run(sessionId, last);
      session.prepare(TRIM.mark.sqlite).run(sessionId, last);
      return changes;
    });
  }
  return inPostgresTransaction(raw.pool, async (client) => {
    const boundary = await client.query<{ id: string }>({
      name: 'cognition_trim_boundary',
      text: TRIM.boundary.postgres,
      values: [sessionId, skip],
    });
    const last = boundary.rows[0]?.id;
    if (last === undefined) return 0;
    const deleted = await client.query({
      name: 'cognition_trim_delete',
      text: TRIM.delete.postgres,
      values: [sessionId, last],
    });
    await client.query({
      name: 'cognition_trim_mark',
      text: TRIM.mark.postgres,
      values: [sessionId, last],
    });
    return deleted.rowCount ?? 0;
  });
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

  constructor(db: PrismaDb) {
    this.raw = requireRawConnection(db, 'The event store');
  }

  append(envelopes: readonly AgentEventEnvelope[]): Promise<void> {
    if (envelopes.length === 0) return Promise.resolve();
    return guard('append events', async () => {
      // A session deleted between the existence check and the insert (Postgres) makes the
      // statement fail on the foreign key; the retry no longer inserts its events.
      for (let attempt = 1; ; attempt += 1) {
        try {
          await insertNew(this.raw, envelopes);
          return;
        } catch (error) {
          if (!isForeignKeyViolation(error) || attempt >= 3) throw error;
        }
      }
    });
  }

  listAfter(sessionId: string, after: string | undefined, limit: number): Promise<StoredEventPage> {
    return guard('list events', async () => {
      const [rows, trim] = await Promise.all([
        after === undefined
          ? rawSelect<EventRow>(this.raw, READS.first, [sessionId, limit])
          : rawSelect<EventRow>(this.raw, READS.after, [sessionId, after, limit]),
        rawSelect<{ evicted_up_to: string }>(this.raw, READS.trim, [sessionId]),
      ]);
      return {
        events: rows.map((row) => ({
          id: row.id,
          sessionId,
          runId: row.run_id,
          event: JSON.parse(row.event) as AgentEvent,
        })),
        evictedUpTo: trim[0]?.evicted_up_to ?? null,
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
}
