import { randomUUID } from 'node:crypto';
import type {
  ListSessionsQuery,
  Session,
  SessionPage,
  SessionSort,
  StringMap,
} from '@cognition/contracts';
import {
  CreateSessionInputSchema,
  ListSessionsQuerySchema,
  StringMapSchema,
  UpdateSessionInputSchema,
} from '@cognition/contracts';
import type { CreateSessionInput, UpdateSessionInput } from '@cognition/contracts';
import type { Scope, SessionStore } from '@cognition/storage';
import { parseInput, StorageError } from '@cognition/storage';
import { z } from 'zod';
import type { PrismaDb, PrismaTx } from '../db/db';
import type { DatabaseProvider } from '../db/migrate';
import { guard, isUniqueViolation } from '../db/errors';
import type { RawConnection } from '../db/raw-connections';
import { requireRawConnection } from '../db/raw-connections';
import type { PolicyRef } from '../mapping';
import {
  expiredWhere,
  liveWhere,
  mapToRows,
  metadataWhere,
  presentSession,
  scopeWhere,
  SESSION_INCLUDE,
  statusWhere,
} from '../mapping';
import type { Prisma } from '../generated/postgres/client';
import { readSession } from './session-reads';

const DeltaSchema = z.number().int().safe();

/** Removes every trace of a thread outside the session row (checkpoints, writes, store items). */
export type ThreadCleanup = (tx: PrismaTx, threadId: string) => Promise<void>;

export function parseScope(scope: Scope): StringMap {
  return parseInput(StringMapSchema, scope, 'scope');
}

export class PrismaSessionStore implements SessionStore {
  /** The driver under `db`: `get` runs on it (session-reads.ts). */
  private readonly raw: RawConnection;

  constructor(
    private readonly db: PrismaDb,
    private readonly cleanupThread: ThreadCleanup,
    private readonly provider: DatabaseProvider,
    private readonly policy: PolicyRef,
  ) {
    this.raw = requireRawConnection(db, 'The session store');
  }

  private present(row: Parameters<typeof presentSession>[0]): Session {
    return presentSession(row, this.policy.current);
  }

  async create(input: CreateSessionInput, scope: Scope): Promise<Session> {
    const data = parseInput(CreateSessionInputSchema, input, 'session');
    const scopes = parseScope(scope);
    const id = data.id ?? randomUUID();
    const now = new Date();
    return guard('create session', async () => {
      try {
        const row = await this.db.session.create({
          data: {
            id,
            threadId: randomUUID(),
            title: data.title ?? null,
            agentName: data.agentName,
            config: JSON.stringify(data.config),
            parentId: data.parentId ?? null,
            workspacePath: data.workspacePath ?? null,
            systemPrompt: data.systemPrompt ?? null,
            task: data.task ?? null,
            expiresAt: data.expiresAt ?? null,
            checkpointRetention: data.checkpointRetention ?? null,
            lastActivityAt: now,
            createdAt: now,
            updatedAt: now,
            scopes: { createMany: { data: mapToRows(scopes) } },
            metadata: { createMany: { data: mapToRows(data.metadata) } },
          },
          include: SESSION_INCLUDE,
        });
        return this.present(row);
      } catch (error) {
        if (isUniqueViolation(error)) {
          throw new StorageError('CONFLICT', `Session already exists: ${id}`, { cause: error });
        }
        throw error;
      }
    });
  }

  async get(id: string, scope: Scope): Promise<Session | null> {
    const scopes = parseScope(scope);
    return guard('get session', async () => {
      const row = await readSession(this.raw, id, scopes, this.policy.current);
      return row ? this.present(row) : null;
    });
  }

  async list(query: ListSessionsQuery, scope: Scope): Promise<SessionPage> {
    const q = parseInput(ListSessionsQuerySchema, query, 'session query');
    const scopes = parseScope(scope);
    const policy = this.policy.current;
    const where: Prisma.SessionWhereInput = {
      AND: [
        ...scopeWhere(scopes),
        ...metadataWhere(q.metadata),
        liveWhere(policy),
        statusWhere(q.status, policy),
      ],
      ...(q.agentName ? { agentName: q.agentName } : {}),
    };
    return guard('list sessions', async () => {
      if (q.titleContains !== undefined) {
        where.id = { in: await this.idsWithTitleContaining(q.titleContains) };
      }
      const [rows, total] = await this.db.$transaction([
        this.db.session.findMany({
          where,
          include: SESSION_INCLUDE,
          orderBy: sessionOrder(q.sort, q.order),
          skip: q.offset,
          take: q.limit,
        }),
        this.db.session.count({ where }),
      ]);
      return { sessions: rows.map((row) => this.present(row)), total };
    });
  }

  /**
   * Ids of sessions whose title contains `text`, ignoring ASCII case. Not Prisma's `contains`:
   * it compiles to LIKE without escaping, so `%` and `_` in the text would match anything, and
   * SQLite's LIKE has no escape character to fix that with.
   */
  private async idsWithTitleContaining(text: string): Promise<string[]> {
    const rows =
      this.provider === 'sqlite'
        ? await this.db.$queryRaw<{ id: string }[]>`
            SELECT id FROM sessions WHERE instr(lower(coalesce(title, '')), lower(${text})) > 0`
        : await this.db.$queryRaw<{ id: string }[]>`
            SELECT id FROM sessions WHERE strpos(lower(coalesce(title, '')), lower(${text})) > 0`;
    return rows.map((row) => row.id);
  }

  /**
   * One conditional `UPDATE ... WHERE id = ? [AND version = ?] AND <in scope>` decides the write;
   * only when it matches nothing does a read tell "missing" from "version conflict".
   */
  async update(id: string, input: UpdateSessionInput, scope: Scope): Promise<Session> {
    const data = parseInput(UpdateSessionInputSchema, input, 'session update');
    const scopes = parseScope(scope);
    const now = new Date();
    return guard('update session', () =>
      this.db.$transaction(async (tx) => {
        const changed = await tx.session.updateMany({
          where: {
            id,
            ...(data.expectedVersion === undefined ? {} : { version: data.expectedVersion }),
            AND: [...scopeWhere(scopes), liveWhere(this.policy.current)],
          },
          data: {
            ...(data.title !== undefined ? { title: data.title } : {}),
            ...(data.status !== undefined ? { status: data.status } : {}),
            ...(data.agentName !== undefined ? { agentName: data.agentName } : {}),
            ...(data.config !== undefined ? { config: JSON.stringify(data.config) } : {}),
            ...(data.systemPrompt !== undefined ? { systemPrompt: data.systemPrompt } : {}),
            ...(data.task !== undefined ? { task: data.task } : {}),
            ...(data.endedAt !== undefined ? { endedAt: data.endedAt } : {}),
            ...(data.expiresAt !== undefined ? { expiresAt: data.expiresAt } : {}),
            ...(data.checkpointRetention !== undefined
              ? { checkpointRetention: data.checkpointRetention }
              : {}),
            version: { increment: 1 },
            updatedAt: now,
            lastActivityAt: now,
          },
        });
        if (changed.count === 0) {
          const current = await tx.session.findFirst({
            where: { id, AND: [...scopeWhere(scopes), liveWhere(this.policy.current)] },
            select: { version: true },
          });
          if (!current) throw StorageError.sessionNotFound(id);
          throw new StorageError(
            'VERSION_CONFLICT',
            `Session ${id} is at version ${current.version}, not ${String(data.expectedVersion)}`,
          );
        }
        if (data.metadata !== undefined) {
          await tx.sessionMetadata.deleteMany({ where: { sessionId: id } });
          await tx.sessionMetadata.createMany({
            data: mapToRows(data.metadata).map((row) => ({ sessionId: id, ...row })),
          });
        }
        const row = await tx.session.findUniqueOrThrow({ where: { id }, include: SESSION_INCLUDE });
        return this.present(row);
      }),
    );
  }

  async updateMessageCount(id: string, delta: number): Promise<number> {
    const by = parseInput(DeltaSchema, delta, 'message count delta');
    return guard('update message count', async () => {
      const rows = await this.db.session.updateManyAndReturn({
        where: { id },
        data: { messageCount: { increment: by } },
        select: { messageCount: true },
      });
      const row = rows[0];
      if (!row) throw StorageError.sessionNotFound(id);
      return row.messageCount;
    });
  }

  /**
   * One transaction: the thread's checkpoints and store items go with the session row, whose
   * foreign keys cascade to scopes, metadata, messages and runs.
   */
  async delete(id: string, scope: Scope): Promise<boolean> {
    const scopes = parseScope(scope);
    return guard('delete session', () =>
      this.db.$transaction(async (tx) => {
        const session = await tx.session.findFirst({
          where: { id, AND: [...scopeWhere(scopes), liveWhere(this.policy.current)] },
          select: { threadId: true },
        });
        if (!session) return false;
        await this.cleanupThread(tx, session.threadId);
        const deleted = await tx.session.deleteMany({ where: { id } });
        return deleted.count > 0;
      }),
    );
  }

  /**
   * Picks up to `limit` expired sessions, then deletes each in a transaction of its own that
   * re-checks the expiry under the row's lock (`DELETE … WHERE id = ? AND <expired>` decides):
   * a process that lost the race to another sweeper, or a session touched meanwhile, deletes
   * nothing. So several nodes may sweep one database at once.
   */
  async sweepExpired(limit: number): Promise<string[]> {
    const take = parseInput(z.number().int().min(1).max(10_000), limit, 'sweep limit');
    return guard('sweep expired sessions', async () => {
      const candidates = await this.db.session.findMany({
        where: expiredWhere(this.policy.current),
        select: { id: true, threadId: true },
        orderBy: { lastActivityAt: 'asc' },
        take,
      });
      const deleted: string[] = [];
      for (const candidate of candidates) {
        const gone = await this.db.$transaction(async (tx) => {
          const claimed = await tx.session.updateMany({
            where: { id: candidate.id, AND: [expiredWhere(this.policy.current)] },
            data: { messageCount: { increment: 0 } },
          });
          if (claimed.count === 0) return false;
          await this.cleanupThread(tx, candidate.threadId);
          const removed = await tx.session.deleteMany({ where: { id: candidate.id } });
          return removed.count > 0;
        });
        if (gone) deleted.push(candidate.id);
      }
      return deleted;
    });
  }
}

/** ListSessionsQuery's order: the sort key, then creation time and id as tie-breakers. */
function sessionOrder(
  sort: SessionSort,
  order: 'asc' | 'desc',
): Prisma.SessionOrderByWithRelationInput[] {
  const first: Prisma.SessionOrderByWithRelationInput =
    sort === 'updated_at'
      ? { updatedAt: order }
      : sort === 'created_at'
        ? { createdAt: order }
        : sort === 'title'
          ? { title: { sort: order, nulls: order === 'asc' ? 'first' : 'last' } }
          : { messageCount: order };
  return [first, { createdAt: order }, { id: order }];
}
