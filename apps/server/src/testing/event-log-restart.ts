import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AgentEventEnvelope } from '@cognition/contracts';
import {
  FakeExecutionBackendFactory,
  FakeOpenAIServer,
  eventsOf,
  parseSseBlocks,
  readSse,
} from '@cognition/runtime/testing';
import pino from 'pino';
import superjson from 'superjson';
import { loadConfig } from '../config';
import type { RunningServer } from '../composition/server';
import { startServer } from '../composition/server';

type Json = Record<string, unknown>;

/** The envelopes of a tRPC `runs.events` SSE body (`data:` frames carry superjson envelopes). */
function trpcEnvelopes(body: string): AgentEventEnvelope[] {
  return parseSseBlocks(`${body}\n\n`)
    .frames.filter((f) => f.event === undefined && f.data !== undefined)
    .map((f) => {
      // Parsed in this realm: superjson only walks plain objects of its own realm.
      const raw = JSON.parse(f.data ?? 'null') as Parameters<typeof superjson.deserialize>[0];
      return superjson.deserialize<AgentEventEnvelope>(raw);
    });
}

/**
 * Registers the restart case on a storage chosen by `persistence` (extra environment, e.g. the
 * Postgres URL): a turn streamed before a restart is replayed after it, from a client's
 * `Last-Event-ID`, exactly once, on every stream route.
 */
export function describeRestartReplay(
  name: string,
  persistence: () => Promise<{ env: Record<string, string>; cleanup(): Promise<void> }>,
): void {
  describe(`event streams across a restart (durable event log on ${name})`, () => {
    const workspace = mkdtempSync(path.join(os.tmpdir(), 'cognition-event-log-'));
    let model: FakeOpenAIServer | undefined;
    let running: RunningServer | undefined;
    let storage: { env: Record<string, string>; cleanup(): Promise<void> } | undefined;

    beforeAll(async () => {
      storage = await persistence();
      model = await FakeOpenAIServer.start({
        fallback: { text: 'The answer to the question is forty two.' },
      });
    });
    afterAll(async () => {
      await running?.shutdown();
      await model?.close();
      await storage?.cleanup();
      rmSync(workspace, { recursive: true, force: true });
    });

    const start = () =>
      startServer(
        loadConfig(
          {
            COGNITION_PORT: '0',
            COGNITION_LLM_PROVIDER: 'openai_compatible',
            COGNITION_LLM_MODEL: 'fake-model',
            COGNITION_OPENAI_COMPATIBLE_BASE_URL: model?.baseUrl ?? '',
            ...storage?.env,
          },
          workspace,
        ),
        { logger: pino({ level: 'silent' }), sandbox: new FakeExecutionBackendFactory() },
      );

    it('replays after Last-Event-ID exactly once on REST GET, REST re-attach POST and tRPC', async () => {
      running = await start();
      const created = await fetch(`${running.url}/sessions`, { method: 'POST', body: '{}' });
      const sessionId = String(((await created.json()) as Json).id);
      const messages = () => `${running?.url ?? ''}/sessions/${sessionId}/messages`;
      const sent = await fetch(messages(), {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ content: 'What is the answer?' }),
      });
      expect(sent.status).toBe(200);
      const live = eventsOf((await readSse(sent)).frames);
      expect(live.at(-1)?.event).toBe('done');
      // The stored log event by event (the live stream may have merged tokens it delivered in
      // one batch): a replay from the run's first event.
      const [first] = live;
      if (!first) throw new Error('the POST streamed no event');
      const stored = await fetch(`${running.url}/sessions/${sessionId}/events`, {
        headers: { 'Last-Event-ID': first.id },
      });
      const before = [first, ...eventsOf((await readSse(stored)).frames).slice(1)];
      expect(before.filter((e) => e.event === 'token').length).toBeGreaterThan(3);
      expect(before.at(-1)?.event).toBe('done');
      const text = (events: typeof live) =>
        events.map((e) => (e.event === 'token' ? String(e.data.content) : '')).join('');
      expect(text(live)).toBe(text(before));
      const cursor = before[2]?.id ?? '';
      const missed = before.slice(3);

      await running.shutdown();
      running = await start();

      const expectReplay = (events: { id: string; event: string; data: Json }[]) => {
        expect(events[0]).toEqual({
          id: cursor,
          event: 'reconnected',
          data: { last_event_id: cursor, truncated: false },
        });
        expect(events.slice(1)).toEqual(missed);
      };
      const got = await fetch(`${running.url}/sessions/${sessionId}/events`, {
        headers: { 'Last-Event-ID': cursor },
      });
      expect(got.status).toBe(200);
      expectReplay(eventsOf((await readSse(got)).frames));

      const reattached = await fetch(messages(), {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'Last-Event-ID': cursor },
        body: JSON.stringify({ content: 'What is the answer?' }),
      });
      expect(reattached.status).toBe(200);
      expectReplay(eventsOf((await readSse(reattached)).frames));
      const listed = (await (await fetch(`${messages()}?order=asc`)).json()) as {
        messages: Json[];
      };
      expect(listed.messages.map((m) => m.role)).toEqual(['user', 'assistant']);

      const input = encodeURIComponent(
        JSON.stringify(superjson.serialize({ sessionId, lastEventId: cursor })),
      );
      const trpc = await fetch(`${running.url}/trpc/runs.events?input=${input}`);
      expect(trpc.status).toBe(200);
      const envelopes = trpcEnvelopes(await trpc.text());
      expect(envelopes[0]?.event).toEqual({
        type: 'reconnected',
        last_event_id: cursor,
        truncated: false,
      });
      expect(envelopes.slice(1).map((e) => [e.id, e.event.type])).toEqual(
        missed.map((e) => [e.id, e.event]),
      );
    });
  });
}
