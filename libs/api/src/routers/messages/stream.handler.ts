import type { AgentEventEnvelope } from '@cognition/contracts';
import type { ApiContext } from '../../context';
import type { RunSendResult } from '../../services/run-service';
import type { SendMessageApiInput } from './schemas';
import { sendMessageHandler } from './send.handler';

/** What `messages.stream` returns: the send's result, and the run's events as they happen. */
export interface MessageStream extends RunSendResult {
  /**
   * The run's events from its first one, ending after its terminal event (or an `interrupt`).
   * Over HTTP it streams in the same response (`httpBatchStreamLink`); it does not reconnect by
   * itself: after a dropped connection, `runs.events` with the last id received continues it.
   */
  events: AsyncGenerator<AgentEventEnvelope, void, undefined>;
}

/**
 * `messages.send` and the run's events in one request: a turn is one round trip, and the
 * events are opened for the run the send returned, without looking the session and run up again.
 * The send's errors reject the call as `messages.send`'s do (422, 404, 409), before any event.
 */
export async function streamMessageHandler({
  ctx,
  input,
  signal,
}: {
  ctx: ApiContext;
  input: SendMessageApiInput;
  signal: AbortSignal | undefined;
}): Promise<MessageStream> {
  const sent = await sendMessageHandler({ ctx, input });
  const events = await ctx.services.runs.eventsOfRun(sent.run, signal ? { signal } : {});
  return { ...sent, events };
}
