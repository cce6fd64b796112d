import type { AgentEvent, AgentEventEnvelope } from '@cognition/contracts';
import type { EventStore, StoredEventPage } from '@cognition/storage';
import { StorageError } from '@cognition/storage';
import type { PrismaDb } from './db';
import { guard, isForeignKeyViolation } from './errors';
import { inPostgresTransaction, inSqliteTransaction, rawConnectionOf } from './raw-connections';

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

async function insertNew(db: PrismaDb, envelopes: readonly AgentEventEnvelope[]): Promise<void> {
  const raw = rawConnectionOf(db);
  if (raw?.provider === 'sqlite') {
    // How Prisma's SQLite adapter stores a DateTime (its default `iso8601` format).
    const now = new Date().toISOString().replace('Z', '+00:00');
    await inSqliteTransaction(raw.connection, (session) => {
      const insert = session.prepare(SQLITE_INSERT);
      for (const e of envelopes) {
        insert.run(e.sessionId, e.id, e.runId, JSON.stringify(e.event), now, e.sessionId);
      }
    });
    return;
  }
  if (raw?.provider === 'postgresql') {
    await inPostgresTransaction(raw.pool, (client) =>
      client.query(POSTGRES_INSERT, [
        envelopes.map((e) => e.sessionId),
        envelopes.map((e) => e.id),
        envelopes.map((e) => e.runId),
        envelopes.map((e) => JSON.stringify(e.event)),
      ]),
    );
    return;
  }
  throw new StorageError(
    'STORAGE_ERROR',
    'The event store needs a Prisma client made by createSqliteHandle/createPostgresHandle',
  );
}

/**
 * The durable run-event log: one row per event (`run_events`), the eviction mark per session in
 * `run_event_trims`. Appends are one transaction per batch, so a streamed run costs one write
 * per batch the event log groups, not one per token; they go straight to the driver (one
 * statement on PostgreSQL, one prepared insert per event on SQLite) because Prisma's per-query
 * cost was most of the time of a streamed token (benchmark 9a).
 */
export class PrismaEventStore implements EventStore {
  constructor(private readonly db: PrismaDb) {}

  append(envelopes: readonly AgentEventEnvelope[]): Promise<void> {
    if (envelopes.length === 0) return Promise.resolve();
    return guard('append events', async () => {
      // A session deleted between the existence check and the insert (Postgres) makes the
      // statement fail on the foreign key; the retry no longer inserts its events.
      for (let attempt = 1; ; attempt += 1) {
        try {
          await insertNew(this.db, envelopes);
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
        this.db.runEvent.findMany({
          where: { sessionId, ...(after === undefined ? {} : { id: { gt: after } }) },
          orderBy: { id: 'asc' },
          take: limit,
        }),
        this.db.runEventTrim.findUnique({ where: { sessionId } }),
      ]);
      return {
        events: rows.map((row) => ({
          id: row.id,
          sessionId: row.sessionId,
          runId: row.runId,
          event: JSON.parse(row.event) as AgentEvent,
        })),
        evictedUpTo: trim?.evictedUpTo ?? null,
      };
    });
  }

  trim(sessionId: string, keep: number): Promise<number> {
    return guard('trim events', () =>
      this.db.$transaction(async (tx) => {
        const boundary = await tx.runEvent.findMany({
          where: { sessionId },
          orderBy: { id: 'desc' },
          skip: Math.max(0, keep),
          take: 1,
          select: { id: true },
        });
        const last = boundary[0]?.id;
        if (last === undefined) return 0;
        const { count } = await tx.runEvent.deleteMany({
          where: { sessionId, id: { lte: last } },
        });
        await tx.runEventTrim.upsert({
          where: { sessionId },
          create: { sessionId, evictedUpTo: last },
          update: { evictedUpTo: last },
        });
        return count;
      }),
    );
  }
}
