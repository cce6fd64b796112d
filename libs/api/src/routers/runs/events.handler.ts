import type { AgentEventEnvelope } from '@cognition/contracts';
import type { TrackedEnvelope } from '@trpc/server';
import { tracked } from '@trpc/server';
import type { ApiContext } from '../../context';
import { mapAsyncIterator } from '../../map-iterator';
import type { RunEventsApiInput } from './schemas';

/** Tracks each envelope with its id; leaving early (client gone) returns `stream`, releasing it. */
function trackEvents(
  stream: AsyncGenerator<AgentEventEnvelope, void, undefined>,
): AsyncGenerator<TrackedEnvelope<AgentEventEnvelope>, void, undefined> {
  return mapAsyncIterator(stream, (envelope) => tracked(envelope.id, envelope));
}

/**
 * The events of a session's run as a tRPC subscription. Each event is `tracked` with its id, so
 * `httpSubscriptionLink` resumes a dropped connection by itself: it reconnects with the last id
 * as `lastEventId` and gets exactly the events after it (a `reconnected` event first).
 *
 * Follows `runId` when given, else the session's active run, else its latest run; replays from
 * the start of that run (or after `lastEventId`), then live, and ends after the run's terminal
 * event. Not a generator on purpose: the session lookup happens before the stream starts, so a
 * session outside the caller's scope fails with NOT_FOUND (through the error middleware) before
 * any event.
 */
export async function runEventsHandler({
  ctx,
  input,
  signal,
}: {
  ctx: ApiContext;
  input: RunEventsApiInput;
  signal: AbortSignal | undefined;
}): Promise<AsyncGenerator<TrackedEnvelope<AgentEventEnvelope>, void, undefined>> {
  const stream = await ctx.services.runs.events(input.sessionId, ctx.caller.scope, {
    ...(input.runId !== undefined ? { runId: input.runId } : {}),
    ...(input.lastEventId ? { lastEventId: input.lastEventId } : {}),
    ...(signal ? { signal } : {}),
  });
  return trackEvents(stream);
}
