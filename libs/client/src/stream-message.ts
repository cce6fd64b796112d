import type { RouterInputs, RouterOutputs } from '@cognition/api';
import type { AgentEvent, AgentEventEnvelope } from '@cognition/contracts';
import type { CognitionClient } from './client';

/** Input of `messages.send` (and of `streamMessage`). */
export type SendMessageInput = RouterInputs['messages']['send'];
/** What `messages.send` returns: `{ run, message, created }`. */
export type SendMessageResult = RouterOutputs['messages']['send'];

export interface StreamMessageOptions {
  /** Aborting stops the send or the stream; the generator then throws `signal.reason`. */
  signal?: AbortSignal;
  /** Called once the message is stored and its run exists, before the first event. */
  onSent?: (result: SendMessageResult) => void;
}

/**
 * Whether the stream of a run ends after this event: its terminal `done` or `error`, or an
 * `interrupt` (the run paused for a decision). Kept local so the client bundle does not carry
 * the contracts' zod schemas for a three-value check.
 */
function endsStream(event: AgentEvent): boolean {
  return event.type === 'done' || event.type === 'error' || event.type === 'interrupt';
}

/**
 * Sends a message and yields the events of the run it starts, ending after the run's terminal
 * event (`done`, or `error` — an aborted run ends with `error { code: 'ABORTED' }`, which is
 * yielded, not thrown), or after an `interrupt` when the run pauses for a person's decision
 * (continue it with `resumeRun`). The generator's return value is the send result.
 *
 * One request per turn: `messages.stream` stores the message and streams its run's events in
 * the same response.
 *
 * Guarantees:
 * - the stream starts at the run's first event, so nothing is missed;
 * - a dropped connection is resumed through the `runs.events` subscription with the last event
 *   id received, so events arrive once each, in order; the resumed stream starts with a
 *   `reconnected` event (`truncated: true` means the server's buffer had already lost some
 *   events: reload the session's messages rather than rebuilding text from tokens);
 * - leaving the loop early (`break`, `return`) or aborting `signal` closes the response.
 *
 * Fails with the `TRPCClientError` of the send (e.g. `data.code === 'RUN_IN_PROGRESS'`, 409) or
 * of the resumed subscription, and with an `Error` when the server ends the stream before the
 * terminal event twice (e.g. it shut down).
 */
export async function* streamMessage(
  client: CognitionClient,
  input: SendMessageInput,
  options: StreamMessageOptions = {},
): AsyncGenerator<AgentEventEnvelope, SendMessageResult, undefined> {
  const { signal } = options;
  // The link stops aborting a call once its result has arrived, but this result goes on
  // streaming: the request gets its own controller, aborted when the generator ends.
  const request = new AbortController();
  const onAbort = (): void => request.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort);
  try {
    const { events, ...sent } = await client.messages.stream.mutate(input, {
      signal: request.signal,
    });
    options.onSent?.(sent);
    signal?.throwIfAborted();
    let lastEventId: string | undefined;
    try {
      for await (const envelope of events) {
        lastEventId = envelope.id;
        yield envelope;
        if (envelope.runId === sent.run.id && endsStream(envelope.event)) return sent;
      }
    } catch {
      if (signal?.aborted) throw signal.reason;
      // The connection broke: resumed below. A failure that is not about the connection
      // shows again there, as the subscription's error.
    }
    yield* followRun(
      client,
      { sessionId: input.sessionId, runId: sent.run.id, ...(lastEventId ? { lastEventId } : {}) },
      signal,
    );
    return sent;
  } finally {
    request.abort();
    signal?.removeEventListener('abort', onAbort);
  }
}

/** Input of `runs.resume` (and of `resumeRun`): one decision per tool call the run waits on. */
export type ResumeRunInput = RouterInputs['runs']['resume'];
/** What `runs.resume` returns: the run and the id of its `interrupt` event. */
export type ResumeRunResult = RouterOutputs['runs']['resume'];

/**
 * Resumes a run paused for a person's decision (its stream ended with an `interrupt` event) and
 * yields what it does from there, on the same run id: a `reconnected` event naming the
 * interrupt, then its events until its terminal event (or its next `interrupt`). Fails with the
 * `TRPCClientError` of the resume: 409 (`CONFLICT`) when the run no longer waits, 422
 * (`VALIDATION_ERROR`, `data.issues` naming `decisions.<i>.<field>`) for a decision that does
 * not fit.
 */
export async function* resumeRun(
  client: CognitionClient,
  input: ResumeRunInput,
  options: { signal?: AbortSignal } = {},
): AsyncGenerator<AgentEventEnvelope, ResumeRunResult, undefined> {
  const { signal } = options;
  const resumed = await client.runs.resume.mutate(input, signal ? { signal } : undefined);
  signal?.throwIfAborted();
  yield* followRun(
    client,
    {
      sessionId: input.sessionId,
      runId: input.runId,
      ...(resumed.lastEventId !== null ? { lastEventId: resumed.lastEventId } : {}),
    },
    signal,
  );
  return resumed;
}

/** The events of one run from the `runs.events` subscription, until its stream ends. */
async function* followRun(
  client: CognitionClient,
  target: { sessionId: string; runId: string; lastEventId?: string },
  signal: AbortSignal | undefined,
): AsyncGenerator<AgentEventEnvelope, void, undefined> {
  const queue: AgentEventEnvelope[] = [];
  let ended = false;
  let failure: { error: unknown } | null = null;
  let wake: (() => void) | null = null;
  const notify = (): void => {
    const resolve = wake;
    wake = null;
    resolve?.();
  };
  const finish = (error?: { error: unknown }): void => {
    if (ended) return;
    ended = true;
    if (error) failure = error;
    notify();
  };
  const onAbort = (): void => finish({ error: signal?.reason });
  signal?.addEventListener('abort', onAbort);

  const subscription = client.runs.events.subscribe(target, {
    onData: (tracked) => {
      queue.push(tracked.data);
      notify();
    },
    onError: (error) => finish({ error }),
    onComplete: () => finish(),
  });
  try {
    for (;;) {
      while (queue.length > 0 && !failure) {
        const envelope = queue.shift();
        if (!envelope) break;
        yield envelope;
        if (envelope.runId === target.runId && endsStream(envelope.event)) return;
      }
      if (failure) throw (failure as { error: unknown }).error;
      if (ended) {
        throw new Error(
          `The event stream of run ${target.runId} ended before its terminal event; ` +
            `its outcome is in runs.get({ sessionId, runId })`,
        );
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
  } finally {
    subscription.unsubscribe();
    signal?.removeEventListener('abort', onAbort);
  }
}
