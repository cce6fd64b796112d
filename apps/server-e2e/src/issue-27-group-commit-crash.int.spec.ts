import { seededRandom } from '@cognition/api/testing';
import { parseSseBlocks } from '@cognition/runtime/testing/http';
import type { SseFrame } from '@cognition/runtime/testing/http';
import {
  FakeOpenAIServer,
  createSession,
  postMessage,
  startAgentServer,
} from './testing/agent-server';
import { postgresServerDatabase, sqliteServerDatabase } from './testing/postgres';
import type { ServerDatabase } from './testing/postgres';
import type { ServerProcess } from './testing/server-process';
import { tempWorkspace } from './testing/server-process';

/**
 * Issue 27: the durable event log group-commits (a batch waits a few ms for its oldest event),
 * so at any moment a few events of a streaming run may be accepted but not yet stored. The
 * guarantee (docs/runs.md, "Event ids and crashes"): a client only ever receives stored
 * events, so whatever moment a kill -9 lands, the client reconnecting with the last id it
 * received gets a consistent continuation — the replay of what followed, then the `resumed`
 * void marker and the re-generated part — never a gap, never a duplicate id, and it ends with
 * the terminal event.
 *
 * The kill moments are random (a seeded PRNG, the seed printed; `ISSUE27_SEED=<n>` replays a
 * series) delays after the send, spread over the whole turn, so they fall between flushes,
 * inside them and between events.
 */

type Json = Record<string, unknown>;
type Ev = { id: string; event: string; data: Json };

const TRIALS = 5;
const ANSWER = Array.from({ length: 150 }, (_, i) => `w${i + 1}`).join(' ') + '.';

function toEvents(frames: readonly SseFrame[]): Ev[] {
  return frames
    .filter((f) => f.event !== undefined)
    .map((f) => ({
      id: f.id ?? '',
      event: f.event ?? '',
      data: JSON.parse(f.data ?? '{}') as Json,
    }));
}

/** Reads an SSE response into `into` as frames arrive, until it ends or the connection drops. */
async function follow(response: Response, into: Ev[]): Promise<void> {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      const parsed = parseSseBlocks(buffer);
      buffer = parsed.rest;
      into.push(...toEvents(parsed.frames));
    }
  } catch {
    // The server was killed: what arrived so far is what the client holds.
  }
}

/** The answer a client rebuilds from tokens, dropping what a `resumed` marker voids. */
function rebuild(events: Ev[]): string {
  let kept: Ev[] = [];
  for (const e of events) {
    if (e.event === 'resumed') {
      const voidAfter = String(e.data['void_after_event_id']);
      kept = kept.filter((k) => k.id <= voidAfter);
    }
    kept.push(e);
  }
  return kept
    .filter((e) => e.event === 'token')
    .map((e) => String(e.data['content']))
    .join('');
}

const seqOf = (id: string) => Number(id.split(':')[1]);

/** 'ok' per event that follows its predecessor consistently, else what is wrong with it. */
function steps(events: Ev[]): string[] {
  let previous = 0;
  return events.map((e) => {
    const seq = seqOf(e.id);
    const ok = e.event === 'token' ? seq > previous : seq === previous + 1;
    const verdict = ok ? 'ok' : `${e.event} ${seq} after ${previous}`;
    previous = seq;
    return verdict;
  });
}

function describeCrashSeries(name: string, database: () => Promise<ServerDatabase>): void {
  describe(`issue 27: kill -9 at random moments of a group-committed stream, ${name}`, () => {
    let fake: FakeOpenAIServer;
    const workspace = tempWorkspace('cognition-issue27-');
    let db: ServerDatabase;
    let server: ServerProcess | undefined;
    const start = () => startAgentServer(fake, workspace.dir, db.env);

    beforeAll(async () => {
      // 1 ms between words: several events are accepted within each flush interval.
      fake = await FakeOpenAIServer.start({ fallback: { text: ANSWER, chunkDelayMs: 1 } });
      db = await database();
    });
    afterAll(async () => {
      await server?.stop('SIGKILL');
      await fake.close();
      await db.drop();
      workspace.remove();
    });

    it(`${TRIALS} trials`, async () => {
      const seed = Number(process.env['ISSUE27_SEED'] ?? Date.now() % 2 ** 31);
      const random = seededRandom(seed);
      // Printed so a failure can be replayed with ISSUE27_SEED.
      process.stdout.write(`issue-27 crash series (${name}): seed ${seed}\n`);
      server = await start();
      // Uninterrupted turns: how long a warm turn streams, to spread the kill moments over it
      // (the first turn of a process is slower; the second one is measured).
      let turnMs = 0;
      for (const round of [1, 2]) {
        const warm: Ev[] = [];
        const sessionId = await createSession(server.url);
        const started = Date.now();
        await follow(await postMessage(server.url, sessionId, { content: `warm ${round}` }), warm);
        turnMs = Date.now() - started;
        expect(warm.at(-1)?.event).toBe('done');
      }

      for (let trial = 0; trial < TRIALS; trial += 1) {
        const delay = Math.floor(random() * turnMs * 0.9);
        const context = `${name} trial ${trial + 1}/${TRIALS} (seed ${seed}): kill -9 ${delay} ms after the send`;
        const sessionId = await createSession(server.url);
        const before: Ev[] = [];
        const reading = follow(
          await postMessage(server.url, sessionId, { content: `trial ${trial}` }),
          before,
        );
        await new Promise((resolve) => setTimeout(resolve, delay));
        const killed = server;
        await killed.stop('SIGKILL');
        await reading;
        server = await start();
        try {
          const last = before.at(-1)?.id;
          const after: Ev[] = [];
          await follow(
            await fetch(`${server.url}/sessions/${sessionId}/events`, {
              headers: last === undefined ? {} : { 'Last-Event-ID': last },
            }),
            after,
          );
          // With a cursor, the continuation starts with `reconnected` at that id.
          const continuation = last === undefined ? after : after.slice(1);
          if (last !== undefined) {
            expect({ context, first: after[0] }).toEqual({
              context,
              first: {
                id: last,
                event: 'reconnected',
                data: { last_event_id: last, truncated: false, at: expect.any(String) as unknown },
              },
            });
          }
          const all = [...before, ...continuation];
          const trace = all.map((e) => `${e.id.slice(-3)} ${e.event}`).join(', ');
          // No gap and no duplicate: ids strictly increase, and each event follows the one
          // before it — a token frame may stand for several consecutive tokens (coalesced for a
          // client that fell behind: it carries the id of the last), any other event is the
          // next id exactly. The rebuilt text below catches a lost or repeated token.
          expect({ context, trace, steps: steps(all) }).toEqual({
            context,
            trace,
            steps: all.map(() => 'ok'),
          });
          expect({ context, runs: new Set(all.map((e) => e.id.split(':')[0])).size }).toEqual({
            context,
            runs: 1,
          });
          expect({ context, trace, end: all.at(-1)?.event, answer: rebuild(all) }).toEqual({
            context,
            trace,
            end: 'done',
            answer: ANSWER,
          });
          process.stdout.write(
            `${context}: client held ${before.length} events, ${continuation.length} after reconnecting\n`,
          );
        } catch (error) {
          const logs = [...killed.stdout.slice(-20), ...server.stdout.slice(-20)].join('\n');
          throw new Error(
            `${String(error)}\n--- server logs (killed, then restarted) ---\n${logs}`,
            {
              cause: error,
            },
          );
        }
      }
      await server.stop('SIGTERM');
      server = undefined;
    }, 300_000);
  });
}

describeCrashSeries('SQLite', () => sqliteServerDatabase('cognition-issue27-sqlite-'));

describeCrashSeries('PostgreSQL', postgresServerDatabase);
