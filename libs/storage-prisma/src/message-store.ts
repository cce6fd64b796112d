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
import type { PrismaDb } from './db';
import { guard, isRecordNotFound, isUniqueViolation } from './errors';
import { MESSAGE_ORDER, scopeWhere, toMessage } from './mapping';
import { parseScope } from './session-store';

export class PrismaMessageStore implements MessageStore {
  constructor(private readonly db: PrismaDb) {}

  /**
   * The session's message_count is incremented first, inside the insert's transaction: the
   * increment takes the session row's write lock, so concurrent inserts serialize on it and each
   * takes `seq = new count - 1`, a distinct position. A failed insert rolls the increment back.
   */
  async create(input: CreateMessageInput): Promise<Message> {
    const data = parseInput(CreateMessageInputSchema, input, 'message');
    const id = data.id ?? randomUUID();
    return guard('create message', () =>
      this.db.$transaction(async (tx) => {
        let count: number;
        try {
          const session = await tx.session.update({
            where: { id: data.sessionId },
            data: { messageCount: { increment: 1 } },
            select: { messageCount: true },
          });
          count = session.messageCount;
        } catch (error) {
          if (isRecordNotFound(error)) throw StorageError.sessionNotFound(data.sessionId);
          throw error;
        }
        try {
          const row = await tx.message.create({
            data: {
              id,
              sessionId: data.sessionId,
              seq: count - 1,
              role: data.role,
              content: data.content,
              toolCalls: JSON.stringify(data.toolCalls),
              toolCallId: data.toolCallId ?? null,
              tokenCount: data.tokenCount ?? null,
              modelUsed: data.modelUsed ?? null,
              parentId: data.parentId ?? null,
              metadata: JSON.stringify(data.metadata),
              source: 'direct',
              createdAt: new Date(),
            },
          });
          return toMessage(row);
        } catch (error) {
          if (isUniqueViolation(error)) {
            throw new StorageError('CONFLICT', `Message already exists: ${id}`, { cause: error });
          }
          throw error;
        }
      }),
    );
  }

  async get(sessionId: string, messageId: string, scope: Scope): Promise<Message | null> {
    const scopes = parseScope(scope);
    return guard('get message', async () => {
      const row = await this.db.message.findFirst({
        where: { id: messageId, sessionId, session: { AND: scopeWhere(scopes) } },
      });
      return row ? toMessage(row) : null;
    });
  }

  async page(sessionId: string, query: MessagePageQuery, scope: Scope): Promise<MessagePage> {
    const q = parseInput(MessagePageQuerySchema, query, 'message page query');
    const scopes = parseScope(scope);
    return guard('page messages', async () => {
      await this.requireSession(sessionId, scopes);
      const [rows, total] = await this.db.$transaction([
        this.db.message.findMany({
          where: { sessionId },
          orderBy: MESSAGE_ORDER,
          skip: q.offset,
          take: q.limit,
        }),
        this.db.message.count({ where: { sessionId } }),
      ]);
      return { messages: rows.map(toMessage), total, hasMore: q.offset + rows.length < total };
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
      where: { id: sessionId, AND: scopeWhere(scope) },
      select: { id: true },
    });
    if (!found) throw StorageError.sessionNotFound(sessionId);
  }
}
