import { createPrismaStorage } from '@cognition/storage-prisma';
import { eventsOf, readSse } from '@cognition/runtime/testing/http';
import type { SseFrame } from '@cognition/runtime/testing/http';
import {
  FakeOpenAIServer,
  createSession,
  postMessage,
  startAgentServer,
} from './testing/agent-server';
import { http } from './testing/http';
import { postgresServerDatabase, sqliteServerDatabase } from './testing/postgres';
import type { ServerProcess } from './testing/server-process';
import { tempWorkspace } from './testing/server-process';

/**
 * The kill series: a streamed turn with a tool call, the server killed with SIGKILL at a random
 * point of it, restarted on the same database. Every run resumes and completes under its id,
 * the answer is whole and stored once, `message_count` equals the rows, a rebuild of the
 * projection from the checkpoint changes nothing, and the client reconnecting with its last
 * event id reads the whole answer with no gap and no duplicate (the `resumed` marker aside).
 */

type Json = Record<string, unknown>;
type Ev = { id: string; event: string; data: Json };

const TRIALS = 10;
const PREAMBLE = 'Let me write it down first.';
const ANSWER = Array.from({ length: 24 }, (_, i) => `word${i + 1}`).join(' ') + '.';

/** Tool call first; once the thread holds its result, the final answer, word by word. */
function reply(request: { body: { messages?: { role: string }[] } }) {
  const last = request.body.messages?.at(-1);
  return last?.role === 'tool'
    ? { text: ANSWER, chunkDelayMs: 3 }
    : {
        text: PREAMBLE,
        chunkDelayMs: 3,
        toolCalls: [{ name: 'write_file', args: { path: 'notes.txt', content: 'kept' } }],
      };
}

/** The answer a client rebuilds: tokens after the tool round, minus what `resumed` voids. */
function rebuild(events: Ev[]): string {
  let kept: Ev[] = [];
  for (const e of events) {
    if (e.event === 'resumed') {
      const voidAfter = String(e.data['void_after_event_id']);
      kept = kept.filter((k) => k.id <= voidAfter);
    }
    kept.push(e);
  }
  const lastTool = kept.map((e) => e.event).lastIndexOf('tool_result');
  return kept
    .slice(lastTool + 1)
    .filter((e) => e.event === 'token')
    .map((e) => String(e.data['content']))
    .join('');
}

function describeKillSeries(
  name: string,
  database: () => Promise<{
    env: Record<string, string>;
    storageUrl: string;
    drop(): Promise<void>;
  }>,
): void {
  describe(`kill -9 mid-turn, ${name}: runs resume and complete`, () => {
    let fake: FakeOpenAIServer;
    const workspace = tempWorkspace();
    let db: { env: Record<string, string>; storageUrl: string; drop(): Promise<void> };
    let server: ServerProcess | undefined;
    const start = () => startAgentServer(fake, workspace.dir, db.env);

    beforeAll(async () => {
      fake = await FakeOpenAIServer.start({ fallback: reply });
      db = await database();
    });
    afterAll(async () => {
      await server?.stop('SIGKILL');
      await fake.close();
      await db.drop();
      workspace.remove();
    });

    it(`${TRIALS} trials`, async () => {
      server = await start();
      // One uninterrupted turn gives the length of the stream to pick kill points in.
      const whole = eventsOf(
        (
          await readSse(
            await postMessage(server.url, await createSession(server.url), { content: 'warm up' }),
          )
        ).frames,
      );
      expect(whole.at(-1)?.event).toBe('done');
      const sessions: string[] = [];
      for (let trial = 0; trial < TRIALS; trial += 1) {
        const killAt = 1 + Math.floor(Math.random() * (whole.length - 2));
        const sessionId = await createSession(server.url);
        sessions.push(sessionId);
        const before = eventsOf(
          (
            await readSse(
              await postMessage(server.url, sessionId, { content: `trial ${trial}` }),
              (_f: SseFrame, frames: SseFrame[]) => eventsOf(frames).length >= killAt,
            )
          ).frames,
        );
        const runId = before[0]?.id.split(':')[0] ?? '';
        await server.stop('SIGKILL');
        server = await start();

        const last = before.at(-1)?.id ?? '';
        const resumedStream = await fetch(`${server.url}/sessions/${sessionId}/events`, {
          headers: { 'Last-Event-ID': last },
        });
        const after = eventsOf((await readSse(resumedStream)).frames);
        const context = `${name} trial ${trial}, killed after ${killAt} events`;
        expect({ context, first: after[0] }).toEqual({
          context,
          first: {
            id: last,
            event: 'reconnected',
            data: { last_event_id: last, truncated: false },
          },
        });
        const all = [...before, ...after.slice(1)];
        const trace = all
          .map(
            (e) =>
              `${e.id.slice(-3)} ${e.event} ${e.event === 'resumed' ? JSON.stringify(e.data) : ''}`,
          )
          .join('\n');
        const ids = all.map((e) => e.id);
        expect({ context, ids }).toEqual({ context, ids: [...new Set(ids)].sort() });
        expect({ context, runs: new Set(all.map((e) => e.id.split(':')[0])) }).toEqual({
          context,
          runs: new Set([runId]),
        });
        expect({ context, trace, answer: rebuild(all) }).toEqual({
          context,
          trace,
          answer: ANSWER,
        });
        const done = all.at(-1);
        expect({
          context,
          done: done?.event,
          content: (done?.data['assistant_data'] as Json)?.['content'],
        }).toEqual({
          context,
          done: 'done',
          content: ANSWER,
        });
        const run = await http(server.url, 'GET', `/sessions/${sessionId}/runs/${runId}`);
        expect({ context, status: run.json?.['status'] }).toEqual({ context, status: 'completed' });
        const rows = (
          await http(server.url, 'GET', `/sessions/${sessionId}/messages?limit=500&order=asc`)
        ).json?.['messages'] as Json[];
        expect({ context, rows: rows.map((m) => [m['role'], m['content']]) }).toEqual({
          context,
          rows: [
            ['user', `trial ${trial}`],
            ['assistant', PREAMBLE],
            ['tool', expect.stringContaining('notes.txt') as string],
            ['assistant', ANSWER],
          ],
        });
        const session = await http(server.url, 'GET', `/sessions/${sessionId}`);
        expect({ context, count: session.json?.['message_count'] }).toEqual({
          context,
          count: rows.length,
        });
      }
      await server.stop('SIGTERM');
      server = undefined;

      // The projection agrees with the checkpoint: rebuilding it from the checkpoint is a no-op.
      const storage = createPrismaStorage(
        db.storageUrl.startsWith('postgres')
          ? { provider: 'postgresql', url: db.storageUrl }
          : { provider: 'sqlite', path: db.storageUrl },
      );
      await storage.initialize();
      try {
        for (const sessionId of sessions) {
          const projected = await storage.messages.listAll(sessionId, {});
          await storage.rebuildMessageProjection(sessionId);
          expect(await storage.messages.listAll(sessionId, {})).toEqual(projected);
        }
      } finally {
        await storage.close();
      }
    }, 300_000);
  });
}

describeKillSeries('SQLite', () => sqliteServerDatabase('cognition-kill-sqlite-'));

describeKillSeries('PostgreSQL', postgresServerDatabase);
