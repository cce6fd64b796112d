import { randomUUID } from 'node:crypto';
import type {
  CreateMessageInput,
  Message,
  MessagePage,
  MessagePageQuery,
} from '@cognition/contracts';
import { CreateMessageInputSchema, MessagePageQuerySchema } from '@cognition/contracts';
import type { MessageStore, Scope } from '@cognition/storage';
import { parseInput, StorageError } from '@cognition/storage';
import type { PrismaDb, PrismaTx } from '../db/db';
import { guard, isUniqueViolation, uniqueViolationFields } from '../db/errors';
import type { RawConnection } from '../db/raw-connections';
import { requireRawConnection } from '../db/raw-connections';
import type { PolicyRef } from '../mapping';
import { liveWhere, MESSAGE_ORDER, scopeWhere, toMessage } from '../mapping';
import { parseScope } from '../sessions/session-store';
import { insertMessageRaw, readMessageRaw } from './message-writes';

export class PrismaMessageStore implements MessageStore {
  /** The driver under `db`: `create` runs on it (message-writes.ts). */
  private readonly raw: RawConnection;

  constructor(
    private readonly db: PrismaDb,
    private readonly policy: PolicyRef,
  ) {
    this.raw = requireRawConnection(db, 'The message store');
  }

  /**
   * The session's message_count is incremented first, inside the insert's transaction: the
   * increment takes the session row's write lock, so concurrent inserts (and projection writes,
   * which take the same lock first) serialize on it. The row then goes right after the session's
   * last row (`seq` = last seq + 1, one probe of the `(session_id, seq)` index), which keeps the
   * positions dense even if `updateMessageCount` moved the count away from the row count. A
   * failed insert rolls the increment back. Prepared statements on the driver
   * (message-writes.ts): the user message of every send.
   */
  async create(input: CreateMessageInput): Promise<Message> {
    const data = parseInput(CreateMessageInputSchema, input, 'message');
    const id = data.id ?? randomUUID();
    const now = new Date();
    return guard('create message', async () => {
      try {
        return await insertMessageRaw(
          this.raw,
          {
            id,
            sessionId: data.sessionId,
            role: data.role,
            content: data.content,
            toolCalls: JSON.stringify(data.toolCalls),
            toolCallId: data.toolCallId ?? null,
            tokenCount: data.tokenCount ?? null,
            modelUsed: data.modelUsed ?? null,
            parentId: data.parentId ?? null,
            metadata: JSON.stringify(data.metadata),
            createdAt: new Date(),
          },
          now,
        );
      } catch (error) {
        // Only the primary key can clash: the session lock makes `seq` free.
        if (isUniqueViolation(error) && !uniqueViolationFields(error).includes('seq')) {
          throw new StorageError('CONFLICT', `Message already exists: ${id}`, { cause: error });
        }
        throw error;
      }
    });
  }

  async get(sessionId: string, messageId: string, scope: Scope): Promise<Message | null> {
    const scopes = parseScope(scope);
    return guard('get message', async () => {
      return readMessageRaw(this.raw, sessionId, messageId, scopes, this.policy.current);
    });
  }

  /**
   * Reads the page as a range of the unique `(session_id, seq)` index: positions are dense
   * (`0 … count − 1`, kept so by every write path), so the row at `offset` has `seq = offset` and
   * a deep page costs what the first one does. `total` is the last position + 1, another index
   * probe, instead of a `COUNT(*)` over the session's rows; with dense positions it is the row
   * count.
   */
  async page(sessionId: string, query: MessagePageQuery, scope: Scope): Promise<MessagePage> {
    const q = parseInput(MessagePageQuerySchema, query, 'message page query');
    const scopes = parseScope(scope);
    return guard('page messages', async () => {
      // Independent reads; nothing is returned unless the session is visible to the caller.
      const [, ascRows, total] = await Promise.all([
        this.requireSession(sessionId, scopes),
        q.order === 'asc'
          ? this.db.message.findMany({
              where: { sessionId, seq: { gte: q.offset } },
              orderBy: MESSAGE_ORDER,
              take: q.limit,
            })
          : Promise.resolve([]),
        nextSeq(this.db, sessionId),
      ]);
      // Newest first: the same index range read backwards from position total − 1 − offset.
      const rows =
        q.order === 'asc'
          ? ascRows
          : await this.db.message.findMany({
              where: { sessionId, seq: { lte: total - 1 - q.offset } },
              orderBy: { seq: 'desc' },
              take: q.limit,
            });
      // A write between the two reads may have appended rows the total does not count yet.
      const seen = Math.max(total, rows.length === 0 ? 0 : q.offset + rows.length);
      return { messages: rows.map(toMessage), total: seen, hasMore: q.offset + rows.length < seen };
    });
  }

  async listAll(sessionId: string, scope: Scope): Promise<Message[]> {
    const scopes = parseScope(scope);
    return guard('list messages', async () => {
      await this.requireSession(sessionId, scopes);
      const rows = await this.db.message.findMany({ where: { sessionId }, orderBy: MESSAGE_ORDER });
      return rows.map(toMessage);
    });
  }

  async deleteBySession(sessionId: string): Promise<number> {
    return guard('delete messages', () =>
      this.db.$transaction(async (tx) => {
        const deleted = await tx.message.deleteMany({ where: { sessionId } });
        await tx.session.updateMany({ where: { id: sessionId }, data: { messageCount: 0 } });
        return deleted.count;
      }),
    );
  }

  private async requireSession(sessionId: string, scope: Scope): Promise<void> {
    const found = await this.db.session.findFirst({
      where: { id: sessionId, AND: [...scopeWhere(scope), liveWhere(this.policy.current)] },
      select: { id: true },
    });
    if (!found) throw StorageError.sessionNotFound(sessionId);
  }
}

/**
 * The position after the session's last row, which is its row count while positions are dense:
 * the last entry of the `(session_id, seq)` index, not a scan.
 */
async function nextSeq(db: PrismaDb | PrismaTx, sessionId: string): Promise<number> {
  const last = await db.message.findFirst({
    where: { sessionId },
    orderBy: { seq: 'desc' },
    select: { seq: true },
  });
  return last ? last.seq + 1 : 0;
}
