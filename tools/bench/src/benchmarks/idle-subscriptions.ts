import { mkdtemp } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CognitionClient } from '@cognition/client';
import { FakeOpenAIServer, parseSseBlocks } from '@cognition/runtime/testing/http';
import { compare, formatBytes, median } from '../harness/stats';
import type { Benchmark, BenchContext, ResultRow } from '../harness/types';
import type { OpenStream } from '../peers/peer';
import type { PeerName } from '../peers/start';
import { startPeers, stopPeers } from '../peers/start';
import type { AgentServer } from '../support/agent-server';
import { serverRssBytes, startAgentServer } from '../support/agent-server';
import { heapProbe, liveHeapBytes } from '../support/heap-probe';
import { startSseFloor } from '../support/sse-floor';

/** Issue 27, goal 6: RSS per idle stream at most this multiple of the `node:http` floor's. */
const FLOOR_RATIO_GOAL = 1.2;
/** Issue 27, goal 6: live heap per idle stream (V8's used heap after a full collection). */
const HEAP_BUDGET_BYTES = 12 * 1024;
/** Requests in flight at once while setting up (sessions, sends, connections). */
const PARALLEL = 48;
const MODEL_CALLS_TIMEOUT_MS = 60_000;
/** The server's default heartbeat (COGNITION_SSE_HEARTBEAT_INTERVAL), also the floor's. */
const HEARTBEAT_MS = 15_000;
const FLOOR_LABEL = 'bare `node:http` SSE server (floor)';

/** Runs `fn` over `items` with at most `limit` calls in flight. */
async function forEachLimit<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next] as T;
      next += 1;
      await fn(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/**
 * A `runs.events` subscription of the typed client (httpSubscriptionLink over SSE), resolved
 * once the server has sent its first event (the replayed `status: thinking` of the run), so the
 * subscription is known to be set up on the server.
 */
function subscribeTrpc(client: CognitionClient, sessionId: string): Promise<OpenStream> {
  return new Promise((resolve, reject) => {
    let established = false;
    const subscription = client.runs.events.subscribe(
      { sessionId },
      {
        onData: () => {
          if (established) return;
          established = true;
          resolve({ close: () => subscription.unsubscribe() });
        },
        onError: (error) => {
          if (!established) reject(error);
        },
        onComplete: () => {
          if (!established) reject(new Error(`the subscription of ${sessionId} ended at once`));
        },
      },
    );
  });
}

/**
 * `GET /sessions/{id}/events` read with fetch, resolved once the first event arrived; the body
 * is then drained in the background (heartbeats) until `close` aborts the request.
 */
async function subscribeRest(url: string, sessionId: string): Promise<OpenStream> {
  const controller = new AbortController();
  const response = await fetch(`${url}/sessions/${sessionId}/events`, {
    signal: controller.signal,
  });
  if (response.status !== 200 || !response.body) {
    throw new Error(`GET /sessions/${sessionId}/events answered ${response.status}`);
  }
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the event stream of ${sessionId} ended at once`);
    buffer += decoder.decode(value, { stream: true });
    const parsed = parseSseBlocks(buffer);
    buffer = parsed.rest;
    if (parsed.frames.some((frame) => frame.event !== undefined)) break;
  }
  const drain = async (): Promise<void> => {
    for (;;) if ((await reader.read()).done) return;
  };
  // Ends with an AbortError when `close` aborts: expected, nothing to report.
  drain().catch(() => undefined);
  return { close: () => controller.abort() };
}

interface Kind {
  label: string;
  open(agent: AgentServer, sessionId: string): Promise<OpenStream>;
}

const KINDS: readonly Kind[] = [
  {
    label: 'tRPC `runs.events` (typed client)',
    open: (agent, sessionId) => subscribeTrpc(agent.client, sessionId),
  },
  {
    label: 'REST `GET /sessions/{id}/events`',
    open: (agent, sessionId) => subscribeRest(agent.url, sessionId),
  },
];

/** The peers of this case: a stream's memory hardly depends on the storage behind it. */
const PEERS: readonly PeerName[] = ['langgraph', 'mastra-libsql'];

interface Reading {
  perSubscription: number;
  before: number;
  open: number;
  closed: number;
  /** Live heap per stream (open − closed, / count); only where `probeDir` is. */
  heapPerSubscription?: number;
}

/** A server process with `sessions` runs waiting on the model, and an opener of streams per run. */
interface IdleTarget {
  label: string;
  pid: number;
  /** Where the process (started with `heapProbe`) reports its live heap; none for peers. */
  probeDir?: string;
  /** One opener per session; a stream opened by it follows that session's run. */
  openers: (() => Promise<OpenStream>)[];
}

/**
 * On a server where `modelCalls` runs wait on the model (which never answers; made by
 * `prepare`), `count` streams spread over its openers: RSS before, with them open, and after
 * closing them.
 */
async function measureStreams(
  ctx: BenchContext,
  fake: FakeOpenAIServer,
  modelCalls: number,
  count: number,
  prepare: () => Promise<IdleTarget>,
): Promise<Reading> {
  const settleMs = ctx.size(500, 2_000);
  const streams: OpenStream[] = [];
  const requestsBefore = fake.requests.length;
  const { label, pid, openers, probeDir } = await prepare();
  // Only after the RSS readings before and open: a forced full collection changes what RSS
  // would show next.
  let readings = 0;
  const liveHeap = (): Promise<number | undefined> => {
    readings += 1;
    return probeDir ? liveHeapBytes(pid, probeDir, readings) : Promise.resolve(undefined);
  };
  try {
    // Once every run has called the model and waits for its first chunk, the server is idle.
    const deadline = Date.now() + MODEL_CALLS_TIMEOUT_MS;
    while (fake.requests.length - requestsBefore < modelCalls) {
      if (Date.now() > deadline) {
        throw new Error(
          `${fake.requests.length - requestsBefore} of ${modelCalls} runs called the model within ${MODEL_CALLS_TIMEOUT_MS} ms`,
        );
      }
      await sleep(10);
    }
    await sleep(settleMs);
    const before = serverRssBytes(pid).current;

    await forEachLimit(
      Array.from({ length: count }, (_, i) => openers[i % openers.length]),
      PARALLEL,
      async (open) => {
        if (!open) throw new Error('no opener for a stream');
        streams.push(await open());
      },
    );
    await sleep(settleMs);
    const open = serverRssBytes(pid).current;
    const heapOpen = await liveHeap();

    for (const stream of streams.splice(0)) stream.close();
    await sleep(settleMs);
    const closed = serverRssBytes(pid).current;
    // The baseline of the live heap: the same server once the streams closed and their sockets
    // ended (what a closed stream still held would be missing from both, see the notes).
    const heapClosed = await liveHeap();
    ctx.log(`${label}: ${count} subscriptions, RSS +${formatBytes(open - before)}`);
    let heapPerSubscription: number | undefined;
    if (heapOpen !== undefined && heapClosed !== undefined) {
      heapPerSubscription = (heapOpen - heapClosed) / count;
      ctx.log(`${label}: live heap ${formatBytes(heapPerSubscription)} per stream`);
    }
    if (open <= before && !ctx.smoke) {
      throw new Error(
        `${label}: RSS did not grow with ${count} subscriptions open (${formatBytes(before)} → ${formatBytes(open)}): the signal is below this machine's noise`,
      );
    }
    // At smoke sizes (a few dozen streams) a collection can shrink RSS meanwhile: the figure is
    // noise there (no verdict is given), recorded as 0 rather than failing the smoke run.
    return {
      perSubscription: Math.max(0, open - before) / count,
      before,
      open,
      closed,
      ...(heapPerSubscription !== undefined ? { heapPerSubscription } : {}),
    };
  } finally {
    for (const stream of streams) stream.close();
  }
}

/** Our built server on SQLite, fresh for each measurement; `kind` opens the streams. */
async function measureOurs(
  ctx: BenchContext,
  fake: FakeOpenAIServer,
  kind: Kind,
  sessions: number,
  count: number,
): Promise<Reading> {
  const probeDir = await mkdtemp(path.join(ctx.tmpDir, 'heap-'));
  const probe = heapProbe(ctx.repoRoot, probeDir);
  const agent = await startAgentServer(ctx, {
    provider: 'sqlite',
    fake,
    // The runs never finish: waiting out the default 10 s grace at shutdown would only add time.
    env: { COGNITION_SHUTDOWN_GRACE_SECONDS: '0.1', ...probe.env },
    nodeArgs: probe.nodeArgs,
  });
  try {
    return await measureStreams(ctx, fake, sessions, count, async () => {
      const pid = agent.server.child.pid;
      if (pid === undefined) throw new Error('the server process has no pid');
      const openers: IdleTarget['openers'] = [];
      for (let i = 0; i < sessions; i += 1) {
        const session = await agent.client.sessions.create.mutate({ title: `idle ${i}` });
        await agent.client.messages.send.mutate({ sessionId: session.id, content: 'Hello?' });
        openers.push(() => kind.open(agent, session.id));
      }
      return { label: kind.label, pid, openers, probeDir };
    });
  } finally {
    await agent.cleanup();
  }
}

/** A peer, started for this measurement only (its runs never end); its client opens the streams. */
async function measurePeer(
  ctx: BenchContext,
  fake: FakeOpenAIServer,
  name: PeerName,
  sessions: number,
  count: number,
): Promise<{ label: string; reading: Reading }> {
  // Every run must be waiting on the model at once: the LangGraph dev server gets a run worker per
  // session (its default 10 would queue the other runs, which then never call the model).
  const peers = await startPeers(ctx, fake.baseUrl, [name], { langgraphWorkers: sessions });
  try {
    const peer = peers.get(name);
    if (!peer) throw new Error(`peer ${name} did not start`);
    const reading = await measureStreams(ctx, fake, sessions, count, async () => {
      const openers: IdleTarget['openers'] = [];
      for (let i = 0; i < sessions; i += 1) {
        openers.push(await peer.startIdleRun(await peer.newThread()));
      }
      return { label: peer.label, pid: peer.pid, openers };
    });
    return { label: peer.label, reading };
  } finally {
    await stopPeers(peers);
  }
}

/**
 * The physical limit: a bare `node:http` server in its own process holding `count` event
 * streams that got one event and then only heartbeats (no framework, no run, no event log),
 * read with the REST opener.
 */
async function measureFloor(
  ctx: BenchContext,
  fake: FakeOpenAIServer,
  count: number,
): Promise<Reading> {
  const probeDir = await mkdtemp(path.join(ctx.tmpDir, 'heap-'));
  const floor = await startSseFloor(ctx.repoRoot, {
    idleHeartbeatMs: HEARTBEAT_MS,
    ...heapProbe(ctx.repoRoot, probeDir),
  });
  try {
    const url = floor.url.replace(/\/$/, '');
    return await measureStreams(ctx, fake, 0, count, () =>
      Promise.resolve({
        label: FLOOR_LABEL,
        pid: floor.pid,
        openers: [() => subscribeRest(url, 'floor')],
        probeDir,
      }),
    );
  } finally {
    await floor.stop();
  }
}

function rssFigures(reading: Reading): string {
  return `RSS ${formatBytes(reading.before)} → ${formatBytes(reading.open)} open → ${formatBytes(reading.closed)} closed`;
}

function figuresOf(reading: Reading): string {
  return `${formatBytes(reading.perSubscription)} per stream · ${rssFigures(reading)}`;
}

export const idleSubscriptionsBenchmark: Benchmark = {
  id: 4,
  title: '1,000 idle open subscriptions',
  measuredAs:
    "the built server's RSS increase and live heap increase (after a forced full collection) per open event stream (tRPC `runs.events` and REST `GET /sessions/{id}/events`), 1,000 streams over 20 sessions whose runs wait on the model",
  comparedWith:
    'a bare `node:http` SSE server holding as many streams (the floor); peers: the LangGraph.js API server (in-memory, `runs.joinStream`), Mastra (LibSQL, `agent.observe`)',
  goal: 'RSS ≤ 1.2× the floor and live heap ≤ 12 KiB per stream (issue 27, goal 6); ≤ 1.0× each peer',
  async run(ctx) {
    const count = ctx.size(40, 1_000);
    const sessions = ctx.size(4, 20);
    const rounds = ctx.size(1, 2);
    // Every chat completion hangs after its headers: each run stays active, silent, for good.
    const fake = await FakeOpenAIServer.start({ fallback: { hangAfterChunks: 0 } });
    try {
      const readings = new Map<Kind, Reading[]>(KINDS.map((kind) => [kind, []]));
      const floorReadings: Reading[] = [];
      for (let round = 0; round < rounds; round += 1) {
        // ABBA order over rounds: neither kind always runs first.
        const order = round % 2 === 0 ? KINDS : [...KINDS].reverse();
        for (const kind of order) {
          readings.get(kind)?.push(await measureOurs(ctx, fake, kind, sessions, count));
        }
        floorReadings.push(await measureFloor(ctx, fake, count));
      }
      const floorPer = median(floorReadings.map((r) => r.perSubscription));
      const floorHeap = median(floorReadings.map((r) => r.heapPerSubscription ?? 0));
      const floorFigures = `${formatBytes(floorPer)} per stream (rounds: ${floorReadings
        .map((r) => formatBytes(r.perSubscription))
        .join(', ')}) · live heap ${formatBytes(floorHeap)}`;
      // Peers at full sizes only (the smoke run measures them in benchmark 1), one round each.
      const peerReadings: { label: string; reading: Reading }[] = [];
      for (const name of ctx.smoke ? [] : PEERS) {
        peerReadings.push(await measurePeer(ctx, fake, name, sessions, count));
      }
      const rows = KINDS.map((kind): ResultRow => {
        const all = readings.get(kind) ?? [];
        const per = median(all.map((r) => r.perSubscription));
        // The RSS figures shown are those of the round closest to the median.
        const mid = all.reduce<Reading | undefined>(
          (best, r) =>
            best && Math.abs(best.perSubscription - per) <= Math.abs(r.perSubscription - per)
              ? best
              : r,
          undefined,
        );
        if (!mid) throw new Error(`${kind.label}: no reading`);
        const heap = median(all.map((r) => r.heapPerSubscription ?? 0));
        const range = (of: (r: Reading) => number): string =>
          all.length > 1 ? ` (rounds: ${all.map((r) => formatBytes(of(r))).join(', ')})` : '';
        return {
          case: `${kind.label}, ${count.toLocaleString('en-US')} idle`,
          figures:
            `${formatBytes(per)} per subscription${range((r) => r.perSubscription)} · ` +
            `live heap ${formatBytes(heap)}${range((r) => r.heapPerSubscription ?? 0)} · ` +
            rssFigures(mid),
          metrics: {
            subscriptions: count,
            sessions,
            perSubscriptionBytes: per,
            heapPerSubscriptionBytes: heap,
            rssBeforeBytes: mid.before,
            rssOpenBytes: mid.open,
            rssClosedBytes: mid.closed,
          },
          // Smoke sizes measure a few dozen subscriptions, within RSS noise: no verdict there.
          ...(per > 0 && floorPer > 0
            ? {
                comparison: compare(
                  per,
                  floorPer,
                  FLOOR_LABEL,
                  floorFigures,
                  ctx.smoke ? undefined : { kind: 'at-most', ratio: FLOOR_RATIO_GOAL },
                ),
              }
            : {}),
          ...(!ctx.smoke && heap > HEAP_BUDGET_BYTES
            ? {
                failure: `live heap ${formatBytes(heap)} per subscription > ${formatBytes(HEAP_BUDGET_BYTES)}`,
              }
            : {}),
          ...(peerReadings.length > 0
            ? {
                peers: peerReadings.map(({ label, reading }) =>
                  compare(per, reading.perSubscription, label, figuresOf(reading), {
                    kind: 'at-most',
                    ratio: 1,
                  }),
                ),
              }
            : {}),
        };
      });
      return {
        rows,
        notes: [
          `A subscription stays open only while its run is active (with no run, \`runs.events\` ends at once and \`GET /sessions/{id}/events\` answers 204), so "idle" means waiting on a run whose model has not answered: ${sessions} sessions each get a run whose chat completion hangs after its headers (the fake OpenAI-compatible server), then ${count.toLocaleString('en-US')} subscriptions are spread over them (per-subscription state does not depend on sharing a session). The runs exist before the first reading, so their memory is not counted.`,
          'Each subscription counts as open once its first event (the replayed `status: thinking`) arrived; up to 48 are opened at once. tRPC: `runs.events.subscribe` of the typed client (httpSubscriptionLink, `eventsource`); REST: `fetch` of the SSE route, body drained.',
          `RSS (VmRSS of /proc/<pid>/status) is read after ${ctx.size(0.5, 2)} s of quiet before opening, with all open, and after closing; per subscription = (open − before) / count. Live heap: our server and the floor run tools/bench/src/support/heap-probe.cjs (preloaded with \`--require\`), which on SIGUSR2 forces a full garbage collection and reports V8's used heap size; it is read right after the RSS readings with all open and after closing (so the forced collections change no RSS reading but the one after closing): live heap per subscription = (open − closed) / count. Unlike RSS it does not depend on the machine's load or on when V8 last collected; it leaves out what a closed stream would still hold (a leak), which the server's specs check. ${rounds > 1 ? `${rounds} rounds, each kind on a fresh server per round (ABBA order); the median is shown, with the RSS figures of the round closest to it.` : 'One round per kind, each on a fresh server.'} RSS includes garbage not yet collected and V8's heap headroom, so it is above the live heap; it does not fall back after closing (V8 keeps the pages for reuse).`,
          `Issue 27, goal 6: RSS per subscription ≤ ${FLOOR_RATIO_GOAL}× the floor's (the comparison's verdict) and live heap per subscription ≤ ${formatBytes(HEAP_BUDGET_BYTES)} (a row above it is marked FAILED); smoke sizes give no verdict.`,
          `Floor: a bare \`node:http\` server in its own process (tools/bench/src/support/sse-floor-server.mjs, idle mode) answering each request with the SSE headers, \`retry:\` and one \`status\` event, then a \`: ping\` every ${HEARTBEAT_MS / 1000} s (the server's default heartbeat) — no framework, no run, no event log; the same REST opener, count and RSS readings, once per round after ours. It is what Node's HTTP server itself keeps per open stream (socket, parser, request and response), which no server on it can go below.`,
          ctx.smoke
            ? 'Peers are measured at full sizes only (the smoke run measures them in benchmark 1).'
            : `Peers, one round each on a fresh process, measured the same way (same fake model hanging, ${sessions} threads with a run each, ${count.toLocaleString('en-US')} streams spread over the runs, the same RSS readings): the LangGraph.js API server (in-memory, started with ${sessions} run workers instead of its default 10, so every run is waiting on the model rather than queued) — background runs (\`runs.create\`, stream mode \`messages-tuple\`, resumable), each stream \`runs.joinStream\` of \`@langchain/langgraph-sdk\` from the start of the run, open once its first (replayed) event arrived; Mastra (LibSQL) — each run is an \`agent.stream\` request kept open (part of the baseline), each stream \`agent.observe({ runId })\` of \`@mastra/client-js\`, open once its response headers arrived (it replayed no event of the waiting run in trials, so there is no first event to wait for). Each row is compared with each peer (goal ≤ 1.0×).`,
        ],
      };
    } finally {
      await fake.close();
    }
  },
};
