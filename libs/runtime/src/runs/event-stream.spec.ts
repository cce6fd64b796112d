import type { AgentEvent, AgentEventEnvelope } from '@cognition/contracts';
import type { EventLog } from '../events/event-log';
import { InMemoryEventLog } from '../events/event-log';
import { eventId, newRunId } from '../ids';
import { openEventStream } from './event-stream';

const SESSION = 'session-1';

function envelope(runId: string, seq: number, event?: AgentEvent): AgentEventEnvelope {
  return {
    id: eventId(runId, seq),
    sessionId: SESSION,
    runId,
    event: event ?? { type: 'token', content: `t${seq}` },
  };
}

/** A log whose live delivery drops some events (a fan-out across nodes losing messages). */
function lossy(store: InMemoryEventLog, dropped: (e: AgentEventEnvelope) => boolean): EventLog {
  return {
    append: (e) => store.append(e),
    readAfter: (session, after) => store.readAfter(session, after),
    subscribe: (session, listener) => store.subscribe(session, (e) => !dropped(e) && listener(e)),
    dropSession: (session) => store.dropSession(session),
  };
}

/** Follows `run`, executing on another node (never local), from its start to its end. */
function follow(log: EventLog, run: string, isActive: () => boolean, pollMs: number) {
  return openEventStream({
    log,
    sessionId: SESSION,
    targetRunId: run,
    onlyRunId: run,
    cursor: `${run}:`,
    lastEventId: undefined,
    isLocal: () => false,
    isActive: () => Promise.resolve(isActive()),
    signals: [],
    pollMs,
  });
}

async function collect(stream: AsyncIterable<AgentEventEnvelope>): Promise<string[]> {
  const ids: string[] = [];
  for await (const e of stream) ids.push(e.id);
  return ids;
}

/** Following a run that executes on another node (never local). */
describe('openEventStream of a run executed elsewhere', () => {
  it('fills a gap in live delivery from the stored log, in order, once each', async () => {
    const store = new InMemoryEventLog({ bufferSize: 100 });
    const run = newRunId();
    let active = true;
    const log = lossy(store, (e) => e.id === eventId(run, 3) || e.id === eventId(run, 4));
    // A poll far away: the gap must be filled without waiting for one.
    const reading = collect(follow(log, run, () => active, 60_000));
    for (let seq = 1; seq <= 6; seq += 1) await store.append(envelope(run, seq));
    await store.append(envelope(run, 7, { type: 'done', assistant_data: null }));
    active = false;
    expect(await reading).toEqual([1, 2, 3, 4, 5, 6, 7].map((seq) => eventId(run, seq)));
  });

  it('waits briefly for the last events of a run that ended before they were stored', async () => {
    const store = new InMemoryEventLog({ bufferSize: 100 });
    const run = newRunId();
    // Live delivery is lost entirely: only the stored log tells.
    const log = lossy(store, () => true);
    await store.append(envelope(run, 1));
    const reading = collect(follow(log, run, () => false, 50));
    setTimeout(
      () => void store.append(envelope(run, 2, { type: 'done', assistant_data: null })),
      300,
    );
    expect(await reading).toEqual([eventId(run, 1), eventId(run, 2)]);
  });
});
