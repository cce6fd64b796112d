import type {
  NewSessionActivity,
  SessionActivity,
  SessionActivityPage,
  SessionActivityQuery,
  StringMap,
} from '@cognition/contracts';
import { SessionActivityQuerySchema } from '@cognition/contracts';
import type { Scope, SessionActivityStore } from '@cognition/storage';
import { parseInput, StorageError } from '@cognition/storage';
import type { PrismaDb } from '../db/db';
import { guard, isForeignKeyViolation } from '../db/errors';
import type { PolicyRef } from '../mapping';
import { liveWhere, scopeWhere } from '../mapping';
import type { SessionActivity as ActivityRow } from '../generated/postgres/client';
import { parseScope } from './session-store';

function toActivity(row: ActivityRow): SessionActivity {
  return {
    id: row.id,
    sessionId: row.sessionId,
    type: row.type as SessionActivity['type'],
    action: row.action as SessionActivity['action'],
    versionBefore: row.versionBefore,
    versionAfter: row.versionAfter,
    statusBefore: row.statusBefore as SessionActivity['statusBefore'],
    statusAfter: row.statusAfter as SessionActivity['statusAfter'],
    errorCode: row.errorCode,
    detail: JSON.parse(row.detail) as StringMap,
    createdAt: row.createdAt,
  };
}

/** The session activity log on the `session_activity` table (cascade-deleted with its session). */
export class PrismaActivityStore implements SessionActivityStore {
  constructor(
    private readonly db: PrismaDb,
    private readonly policy: PolicyRef,
  ) {}

  async append(entry: NewSessionActivity): Promise<SessionActivity | null> {
    return guard('append session activity', async () => {
      try {
        const row = await this.db.sessionActivity.create({
          data: {
            sessionId: entry.sessionId,
            type: entry.type,
            action: entry.action,
            versionBefore: entry.versionBefore,
            versionAfter: entry.versionAfter,
            statusBefore: entry.statusBefore,
            statusAfter: entry.statusAfter,
            errorCode: entry.errorCode,
            detail: JSON.stringify(entry.detail),
            createdAt: new Date(),
          },
        });
        return toActivity(row);
      } catch (error) {
        // The session is gone (deleted meanwhile, or never existed): nothing to log it on.
        if (isForeignKeyViolation(error)) return null;
        throw error;
      }
    });
  }

  /** One INSERT of every entry (`createManyAndReturn`: ids in insertion order). */
  async appendMany(entries: readonly NewSessionActivity[]): Promise<SessionActivity[]> {
    if (entries.length === 0) return [];
    const now = new Date();
    return guard('append session activity', async () => {
      try {
        const rows = await this.db.sessionActivity.createManyAndReturn({
          data: entries.map((entry) => ({
            sessionId: entry.sessionId,
            type: entry.type,
            action: entry.action,
            versionBefore: entry.versionBefore,
            versionAfter: entry.versionAfter,
            statusBefore: entry.statusBefore,
            statusAfter: entry.statusAfter,
            errorCode: entry.errorCode,
            detail: JSON.stringify(entry.detail),
            createdAt: now,
          })),
        });
        return rows.map(toActivity).sort((a, b) => a.id - b.id);
      } catch (error) {
        if (isForeignKeyViolation(error)) return [];
        throw error;
      }
    });
  }

  async page(
    sessionId: string,
    query: SessionActivityQuery,
    scope: Scope,
  ): Promise<SessionActivityPage> {
    const q = parseInput(SessionActivityQuerySchema, query, 'activity query');
    const scopes = parseScope(scope);
    return guard('page session activity', async () => {
      const visible = await this.db.session.findFirst({
        where: { id: sessionId, AND: [...scopeWhere(scopes), liveWhere(this.policy.current)] },
        select: { id: true },
      });
      if (!visible) throw StorageError.sessionNotFound(sessionId);
      const [rows, total] = await Promise.all([
        this.db.sessionActivity.findMany({
          where: { sessionId },
          orderBy: { id: 'desc' },
          skip: q.offset,
          take: q.limit,
        }),
        this.db.sessionActivity.count({ where: { sessionId } }),
      ]);
      return { entries: rows.map(toActivity), total, hasMore: q.offset + rows.length < total };
    });
  }

  async listAfter(
    afterId: number,
    limit: number,
    scope: Scope,
    sessionId?: string,
  ): Promise<SessionActivity[]> {
    const scopes = parseScope(scope);
    return guard('list session activity', async () => {
      const rows = await this.db.sessionActivity.findMany({
        where: {
          id: { gt: afterId },
          ...(sessionId !== undefined ? { sessionId } : {}),
          session: { AND: [...scopeWhere(scopes), liveWhere(this.policy.current)] },
        },
        orderBy: { id: 'asc' },
        take: limit,
      });
      return rows.map(toActivity);
    });
  }
}
