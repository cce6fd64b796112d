import type {
  NewSessionActivity,
  SessionActivity,
  SessionActivityPage,
  SessionActivityQuery,
} from '@cognition/contracts';
import { SessionActivityQuerySchema } from '@cognition/contracts';
import type { Scope, SessionActivityStore } from '@cognition/storage';
import { parseInput, StorageError } from '@cognition/storage';
import { clone } from '../clone';

/** What the activity store needs of the sessions: visibility to a scope (expiry included). */
export interface ActivitySessions {
  exists(sessionId: string): boolean;
  visible(sessionId: string, scope: Scope): boolean;
  now(): Date;
}

/** The memory backend's session activity log: one list in append order. */
export class MemoryActivityStore implements SessionActivityStore {
  private entries: SessionActivity[] = [];
  private nextId = 1;

  constructor(private readonly sessions: ActivitySessions) {}

  append(entry: NewSessionActivity): Promise<SessionActivity | null> {
    if (!this.sessions.exists(entry.sessionId)) return Promise.resolve(null);
    const stored: SessionActivity = {
      ...clone(entry),
      id: this.nextId,
      createdAt: this.sessions.now(),
    };
    this.nextId += 1;
    this.entries.push(stored);
    return Promise.resolve(clone(stored));
  }

  appendMany(entries: readonly NewSessionActivity[]): Promise<SessionActivity[]> {
    const stored: SessionActivity[] = [];
    for (const entry of entries) {
      if (!this.sessions.exists(entry.sessionId)) continue;
      const record: SessionActivity = {
        ...clone(entry),
        id: this.nextId,
        createdAt: this.sessions.now(),
      };
      this.nextId += 1;
      this.entries.push(record);
      stored.push(clone(record));
    }
    return Promise.resolve(stored);
  }

  page(sessionId: string, query: SessionActivityQuery, scope: Scope): Promise<SessionActivityPage> {
    try {
      const { limit, offset } = parseInput(SessionActivityQuerySchema, query, 'activity query');
      if (!this.sessions.visible(sessionId, scope)) throw StorageError.sessionNotFound(sessionId);
      const own = this.entries.filter((e) => e.sessionId === sessionId).reverse();
      return Promise.resolve({
        entries: clone(own.slice(offset, offset + limit)),
        total: own.length,
        hasMore: offset + limit < own.length,
      });
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }

  listAfter(
    afterId: number,
    limit: number,
    scope: Scope,
    sessionId?: string,
  ): Promise<SessionActivity[]> {
    const found: SessionActivity[] = [];
    for (const entry of this.entries) {
      if (found.length >= limit) break;
      if (entry.id <= afterId) continue;
      if (sessionId !== undefined && entry.sessionId !== sessionId) continue;
      if (!this.sessions.visible(entry.sessionId, scope)) continue;
      found.push(entry);
    }
    return Promise.resolve(clone(found));
  }

  deleteSession(sessionId: string): void {
    this.entries = this.entries.filter((e) => e.sessionId !== sessionId);
  }
}
