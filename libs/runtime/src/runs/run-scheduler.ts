import type { Message, Run, Session } from '@cognition/contracts';
import {
  IdSchema,
  MESSAGE_CONTENT_MAX,
  StringMapSchema,
  toFieldIssues,
} from '@cognition/contracts';
import type { Scope, StorageBackend } from '@cognition/storage';
import { z } from 'zod';
import { RuntimeError } from '../errors';
import { newMessageId, newRunId } from '../ids';
import type { Logger } from '../logger';
import { refuseNonPublicHost } from '../net/public-address';
import type { ActiveRuns } from './active-runs';
import type { RunExecutor } from './run-executor';

/** Input of `send`. `scope` is the caller's scope (from auth), never from the request body. */
export interface SendInput {
  sessionId: string;
  scope: Scope;
  content: string;
  /** A message of the same session this one answers (threading); null/absent: none. */
  parentId?: string | null;
  metadata?: Record<string, string>;
  /** http(s) URL POSTed the completion payload when the run ends. */
  callbackUrl?: string | null;
  /** A retried send with the same key returns the first run instead of starting another. */
  idempotencyKey?: string | null;
}

export interface SendResult {
  run: Run;
  /** The persisted user message (for a replayed idempotency key: the first one). */
  message: Message;
  /** false when the idempotency key matched an earlier run. */
  created: boolean;
}

const SendInputSchema = z.strictObject({
  sessionId: IdSchema,
  scope: StringMapSchema,
  content: z.string().min(1).max(MESSAGE_CONTENT_MAX),
  parentId: IdSchema.nullable().optional(),
  metadata: StringMapSchema.optional(),
  callbackUrl: z
    .url({ protocol: /^https?$/, error: 'must be an http or https URL' })
    .max(2048)
    .nullable()
    .optional(),
  idempotencyKey: z.string().min(1).max(256).nullable().optional(),
});

const NOT_ACCEPTING: readonly Session['status'][] = ['suspended', 'completed', 'failed'];

export interface RunSchedulerOptions {
  storage: StorageBackend;
  active: ActiveRuns;
  executor: Pick<RunExecutor, 'execute'>;
  logger: Logger;
  /** Whether callbacks may target loopback/private addresses. */
  allowPrivateCallbacks: boolean;
}

/** The session of `sessionId` within `scope`, or SESSION_NOT_FOUND. */
export async function requireSession(
  storage: StorageBackend,
  sessionId: string,
  scope: Scope,
): Promise<Session> {
  const session = await storage.sessions.get(sessionId, scope);
  if (!session) throw new RuntimeError('SESSION_NOT_FOUND', `Session not found: ${sessionId}`);
  return session;
}

/**
 * Admission of sends: validates, persists the user message, creates the run and starts its
 * execution in the background. Sends of one session are serialised in-process so a losing
 * concurrent send never persists a user message no run answers (storage still arbitrates
 * between nodes through its one-active-run rule).
 */
export class RunScheduler {
  private readonly sendLocks = new Map<string, Promise<void>>();
  private accepting = true;

  constructor(private readonly o: RunSchedulerOptions) {}

  /** Refuses every later send with UNAVAILABLE (shutdown). */
  stopAccepting(): void {
    this.accepting = false;
  }

  /**
   * @throws RuntimeError VALIDATION_ERROR (field named), SESSION_NOT_FOUND, CONFLICT (session
   *   does not accept messages), UNAVAILABLE (shutting down); RUN_IN_PROGRESS when the session
   *   already has an active run.
   */
  async send(input: SendInput): Promise<SendResult> {
    const parsed = SendInputSchema.safeParse(input);
    if (!parsed.success) {
      const issues = toFieldIssues(parsed.error);
      throw new RuntimeError(
        'VALIDATION_ERROR',
        `Invalid message: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
        { issues },
      );
    }
    if (!this.accepting) throw new RuntimeError('UNAVAILABLE', 'The server is shutting down');
    return this.withSessionLock(parsed.data.sessionId, () => this.sendLocked(parsed.data));
  }

  private async withSessionLock<T>(sessionId: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.sendLocks.get(sessionId) ?? Promise.resolve();
    const current = previous.then(fn, fn);
    const settled = current.then(
      () => undefined,
      () => undefined,
    );
    this.sendLocks.set(sessionId, settled);
    try {
      return await current;
    } finally {
      if (this.sendLocks.get(sessionId) === settled) this.sendLocks.delete(sessionId);
    }
  }

  private async sendLocked(input: z.output<typeof SendInputSchema>): Promise<SendResult> {
    const { storage } = this.o;
    const { sessionId, scope, content, callbackUrl, idempotencyKey } = input;
    const session = await requireSession(storage, sessionId, scope);
    if (idempotencyKey) {
      const replayed = await this.findByIdempotencyKey(session.id, idempotencyKey, scope);
      if (replayed) return replayed;
    }
    if (NOT_ACCEPTING.includes(session.status)) {
      throw new RuntimeError(
        'CONFLICT',
        `Session ${session.id} is ${session.status} and accepts no messages`,
      );
    }
    const parentId = input.parentId ?? null;
    if (parentId !== null && !(await storage.messages.get(session.id, parentId, scope))) {
      throw RuntimeError.field('parentId', `no message ${parentId} in this session`);
    }
    if (callbackUrl && !this.o.allowPrivateCallbacks) {
      // Refused here, where the caller can still be told; delivery checks again (DNS changes).
      // A host that does not resolve now is accepted: that may pass, and delivery retries.
      const refused = await refuseNonPublicHost(new URL(callbackUrl));
      if (refused?.kind === 'non-public') {
        throw RuntimeError.field(
          'callbackUrl',
          `${refused.message}; callbacks into the server's own network are not allowed by its configuration`,
        );
      }
    }
    if (await storage.runs.getActive(session.id)) {
      throw new RuntimeError('RUN_IN_PROGRESS', `Session ${session.id} already has an active run`);
    }
    const message = await storage.messages.create({
      id: newMessageId(),
      sessionId: session.id,
      role: 'user',
      content,
      parentId,
      metadata: input.metadata ?? {},
    });
    const { run, created } = await storage.runs.create({
      id: newRunId(),
      sessionId: session.id,
      status: 'queued',
      inputMessageId: message.id,
      idempotencyKey: idempotencyKey ?? null,
    });
    if (!created) {
      const first = run.inputMessageId
        ? await storage.messages.get(session.id, run.inputMessageId, scope)
        : null;
      return { run, message: first ?? message, created: false };
    }
    const active = this.o.active.add(run.id, session.id, scope);
    active.done = this.o.executor
      .execute(active, { session, userMessage: message, callbackUrl: callbackUrl ?? null })
      .catch((error: unknown) => {
        this.o.logger.error({ err: error, runId: run.id }, 'run execution crashed');
        this.o.active.remove(run.id);
      });
    return { run, message, created: true };
  }

  private async findByIdempotencyKey(
    sessionId: string,
    key: string,
    scope: Scope,
  ): Promise<SendResult | null> {
    const { storage } = this.o;
    const run = (await storage.runs.list(sessionId)).find((r) => r.idempotencyKey === key);
    if (!run) return null;
    const message = run.inputMessageId
      ? await storage.messages.get(sessionId, run.inputMessageId, scope)
      : null;
    if (!message) return null;
    return { run, message, created: false };
  }
}
