import type { Message, PendingRunInput, Run, Session } from '@cognition/contracts';
import type { Scope, StorageBackend } from '@cognition/storage';
import type { RunInput } from '../execution/run-executor';
import type { SendResult } from './send-input';

/*
 * The user message a run answers. A send stores it with its run, or, for a run that waits
 * (`pending`), only inside the run's pending input until the run starts.
 */

/** The message a pending run will send, as it will read once in the history. */
export function pendingMessage(run: Run, input: PendingRunInput): Message {
  return {
    id: input.messageId,
    sessionId: run.sessionId,
    role: 'user',
    content: input.content,
    toolCalls: [],
    toolCallId: null,
    tokenCount: null,
    modelUsed: null,
    parentId: input.parentId,
    metadata: input.metadata,
    createdAt: run.createdAt,
  };
}

/**
 * The user message of a run started from `pending`: inserted with the id its pending input
 * carries, unless an earlier process inserted it before dying (then that one).
 */
export async function ensureInputMessage(
  storage: StorageBackend,
  run: Run,
): Promise<Message | null> {
  const input = await storage.runs.pendingInput(run.id);
  const id = run.inputMessageId ?? input?.messageId;
  if (!id) return null;
  const existing = await storage.messages.get(run.sessionId, id, {});
  if (existing || !input) return existing;
  return storage.messages.create({
    id: input.messageId,
    sessionId: run.sessionId,
    role: 'user',
    content: input.content,
    parentId: input.parentId,
    metadata: input.metadata,
  });
}

/**
 * What executes `run` in `session` when it starts after its send (promoted from `pending`,
 * adopted, resumed after a crash): a graph run's stored kwargs, or the user message an agent
 * run answers (inserted now if it was pending). null when that message is gone.
 */
export async function inputOfRun(
  storage: StorageBackend,
  run: Run,
  session: Session,
  resumed = false,
): Promise<RunInput | null> {
  const started = { session, callbackUrl: run.callbackUrl, ...(resumed ? { resumed } : {}) };
  if (run.kwargs) return { ...started, graph: run.kwargs };
  const message = await ensureInputMessage(storage, run);
  return message ? { ...started, userMessage: message } : null;
}

/**
 * The answer to a send whose idempotency key matched an earlier run of the session: that run
 * and its message (a pending run's as it will read). null when there is none.
 */
export async function replayedSend(
  storage: StorageBackend,
  sessionId: string,
  key: string,
  scope: Scope,
): Promise<SendResult | null> {
  const run = (await storage.runs.list(sessionId)).find((r) => r.idempotencyKey === key);
  if (!run) return null;
  const input = run.status === 'pending' ? await storage.runs.pendingInput(run.id) : null;
  const message = input
    ? pendingMessage(run, input)
    : run.inputMessageId
      ? await storage.messages.get(sessionId, run.inputMessageId, scope)
      : null;
  if (!message) return null;
  return { run, message, created: false };
}
