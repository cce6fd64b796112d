import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { FakeOpenAIServer, parseSseBlocks } from '@cognition/runtime/testing/http';
import { createTestDatabase } from '@cognition/storage-prisma/testing';
import {
  compare,
  formatLatency,
  formatMs,
  formatRate,
  median,
  summarizeLatencies,
} from '../harness/stats';
import { json, readUntil } from '../support/rest-sse';
import type { Benchmark, BenchContext, ResultRow } from '../harness/types';
import { fakeProviderEnv } from '../support/agent-server';
import { ensureServerBuilt, serverEnvFor, startServer } from '../support/server-process';
import { multiNodeRows } from './multi-node';
import { readTokenStream } from './token-stream';

const PROMPT = 'Write a long answer.';
const WORDS = [' the', ' quick', ' brown', ' fox', ' jumps', ' over', ' a', ' lazy', ' dog.'];

/**
 * Kill -9 of the built server in the middle of a streamed answer, then a new process on the
 * same SQLite database: ms from spawning it to the `resumed` event of the run read by a client
 * reconnecting with its last event id.
 */
async function restartToResumed(
  ctx: BenchContext,
): Promise<{ resumed: number[]; ready: number[] }> {
  const trials = ctx.size(2, 6);
  const fake = await FakeOpenAIServer.start({ fallback: { text: 'Resumed, and finished.' } });
  const db = await createTestDatabase('sqlite');
  const workspace = path.join(ctx.tmpDir, 'restart');
  mkdirSync(workspace, { recursive: true });
  const env = { ...serverEnvFor(db, workspace), ...fakeProviderEnv(fake) };
  const samples: number[] = [];
  const ready: number[] = [];
  try {
    let server = await startServer({ repoRoot: ctx.repoRoot, env, profileDir: ctx.profileDir });
    try {
      for (let trial = 0; trial < trials; trial += 1) {
        // The answer streams three words, then the model hangs: the run is mid-stream.
        fake.enqueue({ text: ['Cut ', 'off ', 'here ', 'forever'], hangAfterChunks: 3 });
        const session = await json(`${server.url}/sessions`, { method: 'POST', body: '{}' });
        const sent = await fetch(`${server.url}/sessions/${String(session['id'])}/messages`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ content: PROMPT }),
        });
        let lastId = '';
        let tokens = 0;
        const reader = (sent.body as ReadableStream<Uint8Array>).getReader();
        const decoder = new TextDecoder();
        let buffer = '';
        while (tokens < 3) {
          const { value, done } = await reader.read();
          if (done) throw new Error('the stream ended before the model hung');
          buffer += decoder.decode(value, { stream: true });
          const parsed = parseSseBlocks(buffer);
          buffer = parsed.rest;
          for (const frame of parsed.frames) {
            lastId = frame.id ?? lastId;
            if (frame.event === 'token') tokens += 1;
          }
        }
        server.child.kill('SIGKILL');
        await server.stop();
        await reader.cancel().catch(() => undefined);
        const spawned = performance.now();
        server = await startServer({ repoRoot: ctx.repoRoot, env, profileDir: ctx.profileDir });
        const resumed = await fetch(`${server.url}/sessions/${String(session['id'])}/events`, {
          headers: { 'Last-Event-ID': lastId },
        });
        // On to `done`: the resumed run's own model call is over before the next trial scripts one.
        const { at } = await readUntil(resumed, 'resumed', 60_000, 'done');
        samples.push(at - spawned);
        ready.push(server.readyMs);
        ctx.log(
          `restart trial ${trial + 1}/${trials}: ready after ${Math.round(server.readyMs)} ms, resumed after ${Math.round(samples[samples.length - 1] ?? 0)} ms`,
        );
      }
    } finally {
      await server.stop();
    }
  } finally {
    await db.cleanup();
    await fake.close();
  }
  return { resumed: samples, ready };
}

/** tokens/s of one REST stream of `tokens` tokens, per event-log kind, contenders rotating. */
async function streamCost(
  ctx: BenchContext,
  tokens: number,
): Promise<Record<'durable' | 'memory', number[]>> {
  const words = Array.from({ length: tokens }, (_, i) => WORDS[i % WORDS.length] as string);
  const fake = await FakeOpenAIServer.start({ fallback: { text: words } });
  const kinds = ['durable', 'memory'] as const;
  const servers: { kind: (typeof kinds)[number]; url: string; stop(): Promise<void> }[] = [];
  const dbs: { cleanup(): Promise<void> }[] = [];
  try {
    for (const kind of kinds) {
      const db = await createTestDatabase('sqlite');
      dbs.push(db);
      const workspace = path.join(ctx.tmpDir, `stream-${kind}`);
      mkdirSync(workspace, { recursive: true });
      const server = await startServer({
        repoRoot: ctx.repoRoot,
        env: {
          ...serverEnvFor(db, workspace),
          ...fakeProviderEnv(fake),
          COGNITION_EVENT_LOG: kind,
          // Both keep the whole run, so both replay it from its first event.
          COGNITION_SSE_BUFFER_SIZE: String(tokens + 16),
        },
        profileDir: ctx.profileDir,
      });
      servers.push({ kind, url: server.url, stop: () => server.stop() });
    }
    const rates: Record<'durable' | 'memory', number[]> = { durable: [], memory: [] };
    const warmup = 1;
    const repetitions = ctx.size(1, 5);
    for (let r = 0; r < warmup + repetitions; r += 1) {
      for (let k = 0; k < servers.length; k += 1) {
        const server = servers[(r + k) % servers.length];
        if (!server) continue;
        const session = await json(`${server.url}/sessions`, { method: 'POST', body: '{}' });
        const timing = await readTokenStream(
          `${server.url}/sessions/${String(session['id'])}/messages`,
          { content: PROMPT },
        );
        if (timing.tokens !== tokens) {
          throw new Error(`${server.kind}: ${timing.tokens} of ${tokens} tokens arrived`);
        }
        if (r >= warmup) rates[server.kind].push((tokens * 1000) / timing.totalMs);
      }
      ctx.log(r < warmup ? 'warm-up done' : `stream repetition ${r + 1 - warmup}/${repetitions}`);
    }
    return rates;
  } finally {
    for (const server of servers) await server.stop();
    for (const db of dbs) await db.cleanup();
    await fake.close();
  }
}

export const durableRunsBenchmark: Benchmark = {
  id: 9,
  title:
    '(9a) Durable runs: restart → first resumed event; cost of the durable event log. (9b) Several nodes: takeover after a node’s kill -9; load through a balancer, 3 nodes vs 1',
  measuredAs:
    'kill -9 of the built server (SQLite) mid-stream, then ms from spawning the next process to the `resumed` event read by a client reconnecting with `Last-Event-ID` (p50 over trials); REST tokens/s of a long answer with `COGNITION_EVENT_LOG=durable` (events in SQLite) and `memory`, in the same run; 9b: three nodes on one PostgreSQL and Redis — ms from a node’s kill -9 to the `resumed` event on another node, and concurrent sessions through HAProxy over three nodes and over one',
  comparedWith:
    'the same server with the in-process event log (`COGNITION_EVENT_LOG=memory`); 9b: one node behind the same balancer',
  goal: 'reported (no goal set by the issue)',
  async run(ctx) {
    await ensureServerBuilt(ctx.repoRoot);
    const measured = await restartToResumed(ctx);
    const restart = summarizeLatencies(measured.resumed);
    const readyP50 = median(measured.ready);
    const tokens = ctx.size(2_000, 20_000);
    const rates = await streamCost(ctx, tokens);
    const durable = median(rates.durable);
    const memory = median(rates.memory);
    const n = rates.durable.length;
    const cluster = await multiNodeRows(ctx);
    const rows: ResultRow[] = [
      {
        case: 'restart → first resumed event (kill -9 mid-stream, SQLite)',
        figures: `${formatLatency(restart)}; of which spawn → /ready p50 ${formatMs(readyP50)}`,
        metrics: {
          p50Ms: restart.p50,
          p99Ms: restart.p99,
          readyP50Ms: readyP50,
          samples: restart.samples,
        },
      },
      {
        case: `REST SSE, ${tokens.toLocaleString('en-US')} tokens, durable event log`,
        figures: `${formatRate(durable, 'tokens/s')} (median, n=${n}); in-process log ${formatRate(memory, 'tokens/s')}`,
        metrics: {
          tokensPerSecond: durable,
          memoryTokensPerSecond: memory,
          tokens,
          repetitions: n,
        },
        comparison: compare(
          durable,
          memory,
          'in-process event log',
          `${formatRate(memory, 'tokens/s')} (median, n=${n})`,
        ),
      },
      ...cluster,
    ];
    return {
      rows,
      notes: [
        'Restart: one server on a SQLite database with the fake OpenAI-compatible model; each trial starts a turn whose model call streams three words and hangs, reads the stream until the third token, kills the server with SIGKILL, spawns a new one on the same database, and times spawn → the `resumed` event on `GET /sessions/{id}/events` with the last event id seen (startup, migrations check, recovery and the replay included).',
        `Stream cost: two servers on their own SQLite databases, one with the durable event log (every event stored, grouped into one transaction per batch, published after it is stored) and one with the in-process ring buffer; both keep the whole run (\`COGNITION_SSE_BUFFER_SIZE\` = tokens + 16). The zero-latency fake model streams ${tokens.toLocaleString('en-US')} one-word chunks; tokens/s is tokens / (send → \`done\`) read by the REST client of benchmark 2; the servers take turns (rotating), after one warm-up each.`,
        '9b takeover: three nodes (lease 2 s) on one PostgreSQL database and one Redis, the fake model; each trial starts a turn on one node whose model call streams three words and hangs, follows the run from another node (`GET /sessions/{id}/events`), kills the first node with SIGKILL and times the kill → the `resumed` event the follower reads (lease expiry, the sweep of a live node, the resumed step); the killed node is started again before the next trial.',
        '9b load: the nodes run with the default lease (15 s); every session at once creates a session and sends one message through HAProxy (round robin) and reads the answer to `done` over REST SSE; turns/s is finished turns / wall time; the same with one node behind the balancer. All processes share the machine’s cores, so three nodes do not get three times the CPU: the ratio says what the cluster machinery costs or gains on one machine, not on three.',
      ],
    };
  },
};
