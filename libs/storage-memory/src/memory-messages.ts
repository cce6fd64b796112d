// The memory backend's message store: a session's message rows and their checkpoint projection.
import { randomUUID } from 'node:crypto';
import type {
  CreateMessageInput,
  Message,
  MessagePage,
  MessagePageQuery,
} from '@cognition/contracts';
import {
  CreateMessageInputSchema,
  MessagePageQuerySchema,
  StringMapSchema,
} from '@cognition/contracts';
import type { Scope } from '@cognition/storage';
import {
  StorageError,
  parseInput,
  planProjection,
  projectCheckpointMessages,
} from '@cognition/storage';
import type { BaseMessage } from '@langchain/core/messages';
import { clone as copy } from './clone';
import type { MessagesBase } from './langgraph/memory-checkpointer';
import type { MemorySessions } from './sessions/memory-sessions';
import type { MemoryState, MessageRecord } from './memory-state';

/**
 * The memory backend's messages, over the backend's state; sessions decide existence and
 * visibility. Methods are synchronous (the backend wraps them in promises), so each is atomic
 * for async callers.
 */
export class MemoryMessages {
  constructor(
    private readonly state: MemoryState,
    private readonly sessions: MemorySessions,
    private readonly now: () => Date,
  ) {}

  create(input: CreateMessageInput): Message {
    const data = parseInput(CreateMessageInputSchema, input, 'message');
    const record = this.sessions.require(data.sessionId);
    const rows = this.state.messages.get(data.sessionId) ?? [];
    const id = data.id ?? randomUUID();
    if (rows.some((row) => row.message.id === id)) {
      throw new StorageError('CONFLICT', `Message already exists: ${id}`);
    }
    const message: Message = {
      id,
      sessionId: data.sessionId,
      role: data.role,
      content: data.content,
      toolCalls: data.toolCalls,
      toolCallId: data.toolCallId ?? null,
      tokenCount: data.tokenCount ?? null,
      modelUsed: data.modelUsed ?? null,
      parentId: data.parentId ?? null,
      metadata: data.metadata,
      createdAt: this.now(),
    };
    const seq = rows.length === 0 ? 0 : (rows[rows.length - 1]?.seq ?? 0) + 1;
    rows.push({ message: copy(message), seq, pending: true });
    this.state.messages.set(data.sessionId, rows);
    record.session.messageCount += 1;
    record.session.updatedAt = message.createdAt;
    record.session.lastActivityAt = message.createdAt;
    return message;
  }

  get(sessionId: string, messageId: string, scope: Scope): Message | null {
    if (!this.sessions.visible(sessionId, parseInput(StringMapSchema, scope, 'scope'))) return null;
    const row = this.state.messages
      .get(sessionId)
      ?.find((candidate) => candidate.message.id === messageId);
    return row ? copy(row.message) : null;
  }

  page(sessionId: string, query: MessagePageQuery, scope: Scope): MessagePage {
    const { limit, offset, order } = parseInput(
      MessagePageQuerySchema,
      query,
      'message page query',
    );
    this.sessions.requireVisible(sessionId, scope);
    const stored = this.state.messages.get(sessionId) ?? [];
    const rows = order === 'desc' ? [...stored].reverse() : stored;
    return {
      messages: rows.slice(offset, offset + limit).map((row) => copy(row.message)),
      total: rows.length,
      hasMore: offset + limit < rows.length,
    };
  }

  listAll(sessionId: string, scope: Scope): Message[] {
    this.sessions.requireVisible(sessionId, scope);
    return (this.state.messages.get(sessionId) ?? []).map((row) => copy(row.message));
  }

  deleteBySession(sessionId: string): number {
    const record = this.state.sessions.get(sessionId);
    if (!record) return 0;
    const deleted = this.state.messages.get(sessionId)?.length ?? 0;
    this.state.messages.set(sessionId, []);
    record.session.messageCount = 0;
    return deleted;
  }

  /**
   * Makes the session's rows the projection of `messages` (see planProjection). Synchronous.
   * With `base`, when the rows are the projection of that checkpoint, the rows before the
   * base's kept messages stay as they are and only the rest is planned: a step costs what it
   * changed.
   */
  applyProjection(
    sessionId: string,
    checkpointId: string | null,
    messages: BaseMessage[],
    base?: MessagesBase,
  ): void {
    const record = this.sessions.require(sessionId);
    const all = this.state.messages.get(sessionId) ?? [];
    const from =
      base && record.projectedCheckpointId === base.checkpointId
        ? keptMessageCount(messages, base.kept, all)
        : 0;
    const kept = all.slice(0, from);
    const rows = from === 0 ? all : all.slice(from);
    const byId = new Map(rows.map((row) => [row.message.id, row]));
    const plan = planProjection(
      rows.map((row) => ({ id: row.message.id, pending: row.pending })),
      projectCheckpointMessages(sessionId, messages, from),
      from,
    );
    const now = this.now();
    const tail = plan.rows.map((planned): MessageRecord => {
      if (planned.kind === 'pending') {
        const row = byId.get(planned.id) as MessageRecord;
        return { ...row, seq: planned.seq };
      }
      const { seq: _seq, ...message } = planned.message;
      const createdAt = byId.get(message.id)?.message.createdAt ?? now;
      return { message: copy({ ...message, createdAt }), seq: planned.seq, pending: false };
    });
    this.state.messages.set(sessionId, from === 0 ? tail : kept.concat(tail));
    // A message added or removed is activity on the session (lists sort by updatedAt).
    if (plan.messageCount !== all.length) {
      record.session.updatedAt = now;
      record.session.lastActivityAt = now;
    }
    record.session.messageCount = plan.messageCount;
    record.projectedCheckpointId = checkpointId;
  }
}

/**
 * How many leading rows stay as they are: the messages among the first `kept` checkpoint
 * entries (all of them are messages in a thread the runtime writes), provided the rows there
 * are those messages' projection in order; 0 (project everything) otherwise.
 */
function keptMessageCount(
  messages: readonly BaseMessage[],
  kept: number,
  rows: readonly MessageRecord[],
): number {
  const count = Math.min(kept, messages.length, rows.length);
  if (count === 0) return 0;
  const row = rows[count - 1];
  const id = messages[count - 1]?.id;
  const aligned = row?.seq === count - 1 && (id === undefined || row.message.id === id);
  return aligned ? count : 0;
}
