import type { AgentEvent, AgentEventEnvelope } from '@cognition/contracts';
import type { EventStore, StoredEventPage } from '@cognition/storage';
import type { PrismaDb } from './db';
import { guard, isForeignKeyViolation, isUniqueViolation } from './errors';

/**
 * The durable run-event log: one row per event (`run_events`), the eviction mark per session in
 * `run_event_trims`. Appends are one transaction per batch, so a streamed run costs one write
 * per batch the event log groups, not one per token.
 */
export class PrismaEventStore implements EventStore {
  constructor(private readonly db: PrismaDb) {}

  append(envelopes: readonly AgentEventEnvelope[]): Promise<void> {
    if (envelopes.length === 0) return Promise.resolve();
    return guard('append events', async () => {
      // A concurrent append of the same ids or a session deleted meanwhile makes the insert
      // fail as a whole; the retry filters again and then stores what is left.
      for (let attempt = 1; ; attempt += 1) {
        try {
          await this.insertNew(envelopes);
          return;
        } catch (error) {
          const retryable = isUniqueViolation(error) || isForeignKeyViolation(error);
          if (!retryable || attempt >= 3) throw error;
        }
      }
    });
  }

  private async insertNew(envelopes: readonly AgentEventEnvelope[]): Promise<void> {
    await this.db.$transaction(async (tx) => {
      const sessionIds = [...new Set(envelopes.map((e) => e.sessionId))];
      const live = new Set(
        (
          await tx.session.findMany({ where: { id: { in: sessionIds } }, select: { id: true } })
        ).map((s) => s.id),
      );
      const held = new Set(
        (
          await tx.runEvent.findMany({
            where: {
              OR: sessionIds
                .filter((id) => live.has(id))
                .map((sessionId) => ({
                  sessionId,
                  id: { in: envelopes.filter((e) => e.sessionId === sessionId).map((e) => e.id) },
                })),
            },
            select: { sessionId: true, id: true },
          })
        ).map((row) => `${row.sessionId}\u0000${row.id}`),
      );
      const seen = new Set<string>();
      const data = envelopes.filter((e) => {
        const key = `${e.sessionId}\u0000${e.id}`;
        if (!live.has(e.sessionId) || held.has(key) || seen.has(key)) return false;
        seen.add(key);
        return true;
      });
      if (data.length === 0) return;
      await tx.runEvent.createMany({
        data: data.map((e) => ({
          sessionId: e.sessionId,
          id: e.id,
          runId: e.runId,
          event: JSON.stringify(e.event),
        })),
      });
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
