import type { FeedbackInput, MessageFeedback } from '@cognition/contracts';
import { FeedbackInputSchema, IdSchema } from '@cognition/contracts';
import type { FeedbackStore, Scope } from '@cognition/storage';
import { parseInput, StorageError } from '@cognition/storage';
import type { PrismaDb, PrismaTx } from '../db/db';
import { guard } from '../db/errors';
import { scopeWhere } from '../mapping';
import { parseScope } from '../sessions/session-store';
import { lockUsageRow } from './usage-records';

const IdsSchema = IdSchema.array().max(10_000);

/**
 * Feedback rows plus the session's feedback figures (count, score sum) on its usage row, moved
 * in the same transaction. The usage row is locked first, so concurrent writes to one session's
 * feedback queue and the figures stay exact.
 */
export class PrismaFeedbackStore implements FeedbackStore {
  constructor(private readonly db: PrismaDb) {}

  async set(
    sessionId: string,
    messageId: string,
    input: FeedbackInput,
    scope: Scope,
  ): Promise<MessageFeedback> {
    const data = parseInput(FeedbackInputSchema, input, 'feedback');
    const scopes = parseScope(scope);
    const mid = parseInput(IdSchema, messageId, 'message id');
    return guard('set feedback', () =>
      this.db.$transaction(async (tx) => {
        await requireSession(tx, sessionId, scopes);
        const message = await tx.message.findFirst({
          where: { id: mid, sessionId },
          select: { role: true },
        });
        if (!message) throw new StorageError('MESSAGE_NOT_FOUND', `Message not found: ${mid}`);
        if (message.role !== 'assistant') {
          throw new StorageError(
            'VALIDATION_ERROR',
            `Feedback is for assistant messages; ${mid} is a ${message.role} message`,
            {
              issues: [
                {
                  path: 'messageId',
                  message: `is a ${message.role} message, not an assistant message`,
                },
              ],
            },
          );
        }
        await lockUsageRow(tx, sessionId);
        const previous = await tx.messageFeedback.findUnique({
          where: { sessionId_messageId: { sessionId, messageId: mid } },
        });
        const now = new Date();
        const row = previous
          ? await tx.messageFeedback.update({
              where: { sessionId_messageId: { sessionId, messageId: mid } },
              data: { score: data.score, text: data.text ?? null, updatedAt: now },
            })
          : await tx.messageFeedback.create({
              data: {
                sessionId,
                messageId: mid,
                score: data.score,
                text: data.text ?? null,
                createdAt: now,
                updatedAt: now,
              },
            });
        await tx.sessionUsage.update({
          where: { sessionId },
          data: {
            feedbackCount: { increment: previous ? 0 : 1 },
            feedbackScoreSum: { increment: data.score - (previous?.score ?? 0) },
          },
        });
        return toFeedback(row);
      }),
    );
  }

  async delete(sessionId: string, messageId: string, scope: Scope): Promise<boolean> {
    const scopes = parseScope(scope);
    const mid = parseInput(IdSchema, messageId, 'message id');
    return guard('delete feedback', () =>
      this.db.$transaction(async (tx) => {
        await requireSession(tx, sessionId, scopes);
        await lockUsageRow(tx, sessionId);
        const previous = await tx.messageFeedback.findUnique({
          where: { sessionId_messageId: { sessionId, messageId: mid } },
        });
        if (!previous) return false;
        await tx.messageFeedback.delete({
          where: { sessionId_messageId: { sessionId, messageId: mid } },
        });
        await tx.sessionUsage.update({
          where: { sessionId },
          data: {
            feedbackCount: { decrement: 1 },
            feedbackScoreSum: { decrement: previous.score },
          },
        });
        return true;
      }),
    );
  }

  async forMessages(
    sessionId: string,
    messageIds: readonly string[],
  ): Promise<Map<string, MessageFeedback>> {
    const ids = parseInput(IdsSchema, messageIds, 'message ids');
    return guard('read feedback', async () => {
      if (ids.length === 0) return new Map<string, MessageFeedback>();
      const rows = await this.db.messageFeedback.findMany({
        where: { sessionId, messageId: { in: ids } },
      });
      return new Map(rows.map((row) => [row.messageId, toFeedback(row)]));
    });
  }
}

async function requireSession(
  tx: PrismaTx,
  sessionId: string,
  scopes: Record<string, string>,
): Promise<void> {
  const session = await tx.session.findFirst({
    where: { id: sessionId, AND: scopeWhere(scopes) },
    select: { id: true },
  });
  if (!session) throw StorageError.sessionNotFound(sessionId);
}

function toFeedback(row: {
  score: number;
  text: string | null;
  createdAt: Date;
  updatedAt: Date;
}): MessageFeedback {
  return { score: row.score, text: row.text, createdAt: row.createdAt, updatedAt: row.updatedAt };
}
