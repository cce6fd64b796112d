import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PendingAction, Run } from '@cognition/contracts';
import type { StorageBackend } from '@cognition/storage';
import { createMemoryStorage } from '@cognition/storage-memory';
import { CallbackDispatcher } from '../callbacks/callback-dispatcher';
import type { CompletionPayload } from '../callbacks/callback-dispatcher';
import { StorageEventLog } from '../events/storage-event-log';
import { eventId } from '../ids';
import { silentLogger } from '../logger';
import { repairTerminalEvent } from './run-recovery';

/**
 * Issue 31, run fencing of the writes that are not an executor's: the repair of a missing
 * terminal event and the completion callback. Each is stored only while the run is held under
 * the claim it was made for; a claim that came in between (another node resumed or took the
 * run) refuses it, so nothing of it reaches the run's stream or its receiver.
 */

const ACTION: PendingAction = {
  tool_calls: [{ id: 'call_1', name: 'execute', args: { command: 'ls' }, allowed: ['approve'] }],
};
const at = (ms: number) => new Date(Date.UTC(2030, 0, 1) + ms);

describe('issue 31: the terminal-event repair and the callback are fenced', () => {
  let storage: StorageBackend;
  let log: StorageEventLog;
  beforeEach(async () => {
    storage = createMemoryStorage();
    await storage.initialize();
    log = new StorageEventLog({ store: storage.events, flushIntervalMs: 0 });
  });
  afterEach(() => storage.close());

  /** A run node-a executed (claim 1) and paused; the `interrupt` ending its stream is missing. */
  async function pausedWithoutInterrupt(): Promise<Run> {
    const session = await storage.sessions.create({}, {});
    const { run } = await storage.runs.create({ sessionId: session.id });
    await storage.runs.claim(run.id, 'node-a', at(0), at(60_000));
    await log.append({
      id: eventId(run.id, 1),
      sessionId: run.sessionId,
      runId: run.id,
      at: at(1).toISOString(),
      event: { type: 'tool_call', id: 'call_1', name: 'execute', args: { command: 'ls' } },
    });
    return storage.runs.update(run.id, { status: 'requires_action', pendingAction: ACTION });
  }

  const types = async (run: Run) =>
    (await log.readAfter(run.sessionId)).events.map((e) => [e.id, e.event.type]);

  it('repairs a paused run held under its claim (its interrupt, once)', async () => {
    const paused = await pausedWithoutInterrupt();
    await repairTerminalEvent(storage, log, silentLogger, paused);
    await repairTerminalEvent(storage, log, silentLogger, paused);
    expect(await types(paused)).toEqual([
      [eventId(paused.id, 1), 'tool_call'],
      [eventId(paused.id, 2), 'interrupt'],
    ]);
  });

  it('writes nothing when node-b resumes and claims the run while the repair reads it', async () => {
    const paused = await pausedWithoutInterrupt();
    // The repair reads the run's claim, then the run: node-b's resume and claim land right
    // after (its executor numbers its events from the same last stored one).
    const get = storage.runs.get.bind(storage.runs);
    jest.spyOn(storage.runs, 'get').mockImplementationOnce(async (id) => {
      const read = await get(id);
      await storage.runs.settlePaused(id, {
        status: 'queued',
        ownerNode: 'node-b',
        leaseExpiresAt: at(120_000),
      });
      await storage.runs.claim(id, 'node-b', at(2), at(120_000));
      return read;
    });
    await repairTerminalEvent(storage, log, silentLogger, paused);
    expect(await types(paused)).toEqual([[eventId(paused.id, 1), 'tool_call']]);
    // node-b's `resumed` takes the id the repair would have taken.
    const mine = await storage.events.append(
      [
        {
          id: eventId(paused.id, 2),
          sessionId: paused.sessionId,
          runId: paused.id,
          at: at(3).toISOString(),
          event: {
            type: 'resumed',
            run_id: paused.id,
            void_after_event_id: eventId(paused.id, 1),
            attempt: 1,
          },
        },
      ],
      undefined,
      [(await storage.runs.fenceOf(paused.id)) ?? { runId: paused.id, ownerNode: '?', claim: -1 }],
    );
    expect(mine).toEqual([]);
    expect(await types(paused)).toEqual([
      [eventId(paused.id, 1), 'tool_call'],
      [eventId(paused.id, 2), 'resumed'],
    ]);
  });

  it('sends no callback for a run whose claim another node took; sends it under the claim that holds', async () => {
    const hits: string[] = [];
    const server = http.createServer((req, res) => {
      hits.push(String(req.headers['x-cognition-delivery']));
      res.writeHead(200).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    try {
      const session = await storage.sessions.create({}, {});
      const { run } = await storage.runs.create({ sessionId: session.id });
      const first = await storage.runs.claim(run.id, 'node-a', at(0), at(1000));
      const second = await storage.runs.claim(run.id, 'node-b', at(2000), at(60_000));
      const payload: CompletionPayload = {
        session_id: session.id,
        message_id: null,
        run_id: run.id,
        status: 'completed',
        output: '',
        token_usage: { input: 0, output: 0 },
        model_used: null,
        completed_at: at(3000).toISOString(),
        error: null,
      };
      const dispatcher = new CallbackDispatcher(storage.runs, { allowPrivateNetwork: true });
      // node-a ended the run too, its end refused or unrecorded: its callback stays unsent.
      await dispatcher.dispatch(url, payload, null, {
        runId: run.id,
        ownerNode: 'node-a',
        claim: first ?? -1,
      });
      expect(hits).toEqual([]);
      expect(await storage.runs.listPendingCallbacks()).toEqual([]);
      expect(await storage.runs.listCallbackAttempts(run.id)).toEqual([]);
      await dispatcher.dispatch(url, payload, null, {
        runId: run.id,
        ownerNode: 'node-b',
        claim: second ?? -1,
      });
      expect(hits).toHaveLength(1);
      expect((await storage.runs.listCallbackAttempts(run.id)).map((a) => a.ok)).toEqual([true]);
      await dispatcher.close();
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
