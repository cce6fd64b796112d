import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { FuzzReport } from '@cognition/api/testing';
import {
  describeRequest,
  restTargets,
  runFuzz,
  seedTenant,
  trpcTargets,
} from '@cognition/api/testing';
import { FakeOpenAIServer } from '@cognition/runtime/testing/http';
import { createTestDatabase } from '@cognition/storage-prisma/testing';
import type { Benchmark, BenchContext, ResultRow } from '../harness/types';
import { ensureServerBuilt, serverEnvFor, startServer } from '../support/server-process';

const ALICE_KEY = 'bench-fuzz-alice-0123456789';
const BOB_KEY = 'bench-fuzz-bob-0123456789ab';
const ADMIN_KEY = 'bench-fuzz-admin-0123456789';
const MAX_BODY_BYTES = 1024 * 1024;
/** The seed of a full run; a finding names its request index, so `seed + index` replays it. */
const SEED = 31_000;

type Provider = 'sqlite' | 'postgresql';

async function fuzzOne(
  ctx: BenchContext,
  provider: Provider,
): Promise<{ row: ResultRow; notes: string[] }> {
  const label = provider === 'sqlite' ? 'SQLite' : 'PostgreSQL';
  const requests = ctx.size(200, 10_000);
  const db = await createTestDatabase(provider);
  const workspace = path.join(ctx.tmpDir, provider);
  mkdirSync(workspace, { recursive: true });
  const fake = await FakeOpenAIServer.start({ fallback: { text: 'Fine, thanks.' } });
  const server = await startServer({
    repoRoot: ctx.repoRoot,
    profileDir: ctx.profileDir,
    readyHeaders: { Authorization: `Bearer ${ALICE_KEY}` },
    env: {
      ...serverEnvFor(db, workspace),
      COGNITION_LLM_PROVIDER: 'openai_compatible',
      COGNITION_LLM_MODEL: 'bench-model',
      COGNITION_OPENAI_COMPATIBLE_BASE_URL: fake.baseUrl,
      COGNITION_LOG_LEVEL: 'warn',
      COGNITION_SCOPING_ENABLED: 'true',
      COGNITION_SCOPE_KEYS: 'user',
      COGNITION_API_KEYS: `${ALICE_KEY}:user=alice,${BOB_KEY}:user=bob`,
      COGNITION_ADMIN_API_KEYS: `${ADMIN_KEY}:user=admin`,
      COGNITION_MAX_BODY_BYTES: `${MAX_BODY_BYTES / 1024}kb`,
    },
  });
  try {
    const alice = { Authorization: `Bearer ${ALICE_KEY}` };
    const bob = { Authorization: `Bearer ${BOB_KEY}` };
    const own = await seedTenant(server.url, alice, 'ALICE-OWN-bench');
    const other = await seedTenant(server.url, bob, 'BOB-SECRET-bench');
    const document: unknown = await (
      await fetch(`${server.url}/openapi.json`, { headers: alice })
    ).json();
    const targets = [...restTargets(document), ...trpcTargets()];
    ctx.log(`${label}: ${requests} requests over ${targets.length} targets, seed ${SEED}`);
    const started = Date.now();
    const report = await runFuzz({
      baseUrl: server.url,
      document,
      targets,
      seed: SEED,
      requests,
      timeoutMs: 15_000,
      concurrency: 4,
      own: own.ids,
      foreign: { ...other.ids, agent: [], provider: [] },
      headers: alice,
      secrets: [other.marker],
      maxBodyBytes: MAX_BODY_BYTES,
      maxStringLength: 512 * 1024,
      maxDepth: 4000,
    });
    const seconds = (Date.now() - started) / 1000;
    const ready = await fetch(`${server.url}/ready`, { headers: alice });
    const healthy = ready.status === 200 && (await turnWorks(server.url, alice));
    return {
      row: rowOf(label, report, healthy, seconds, targets.length),
      notes: report.findings.map(
        (f) =>
          `${label} finding #${f.index} (${f.kind}): ${describeRequest(f.request).slice(0, 400)} → ${String(f.answer.status)} ${f.answer.text.slice(0, 200)}`,
      ),
    };
  } finally {
    await server.stop();
    await fake.close();
    await db.cleanup();
  }
}

/** A normal turn after the fuzz: the server still creates sessions and runs them to the end. */
async function turnWorks(url: string, headers: Record<string, string>): Promise<boolean> {
  const created = await fetch(`${url}/sessions`, {
    method: 'POST',
    headers: { ...headers, 'Content-Type': 'application/json' },
    body: '{}',
  });
  const { id } = (await created.json()) as { id: string };
  const turn = await fetch(`${url}/sessions/${id}/messages`, {
    method: 'POST',
    headers: { ...headers, 'Content-Type': 'application/json' },
    body: JSON.stringify({ content: 'hi' }),
  });
  const text = await turn.text();
  return turn.status === 200 && text.includes('Fine, thanks.') && text.includes('event: done');
}

function rowOf(
  label: string,
  report: FuzzReport,
  healthy: boolean,
  seconds: number,
  targets: number,
): ResultRow {
  const classes = ['2xx', '3xx', '4xx', '5xx']
    .filter((c) => report.byClass[c])
    .map((c) => `${c} ${report.byClass[c]}`)
    .join(' · ');
  const bad = report.serverErrors + report.hangs + report.dropped + report.fieldless + report.leaks;
  return {
    case: `${label}: ${report.requests} requests over ${targets} routes and procedures`,
    figures:
      `${classes} · ≥500 ${report.serverErrors} · hangs ${report.hangs} · dropped ${report.dropped}` +
      ` · field-less 4xx ${report.fieldless} · leaks ${report.leaks} · healthy after: ${healthy ? 'yes' : 'NO'}` +
      ` · ${(report.requests / seconds).toFixed(0)} req/s`,
    metrics: {
      requests: report.requests,
      ...Object.fromEntries(Object.entries(report.byClass).map(([k, v]) => [`class${k}`, v])),
      serverErrors: report.serverErrors,
      hangs: report.hangs,
      dropped: report.dropped,
      fieldless: report.fieldless,
      leaks: report.leaks,
      healthyAfter: healthy ? 1 : 0,
    },
    ...(bad > 0 || !healthy
      ? { failure: `${bad} findings${healthy ? '' : ', server unhealthy after'} (see notes)` }
      : {}),
  };
}

export const fuzzBenchmark: Benchmark = {
  id: 15,
  name: 'fuzz',
  title: 'Fuzz of every route: hostile requests from the OpenAPI document and the tRPC router',
  measuredAs:
    "requests generated from `/openapi.json` (every REST operation) and the tRPC router (every procedure, zod → JSON Schema → fast-check), each valid input broken in one place (huge strings, NUL, lone surrogates, deep nesting, prototype keys, out-of-range numbers, wrong types, wrong content types, oversized headers and bodies, another tenant's ids), sent as one tenant while another tenant's data sits beside it, 4 at a time, 15 s timeout each; SQLite and PostgreSQL",
  comparedWith: '—',
  goal: '0 answers ≥ 500, 0 hangs, every 4xx names the field, 0 leaks, healthy after (≥ 10,000 requests)',
  async run(ctx) {
    await ensureServerBuilt(ctx.repoRoot);
    const rows: ResultRow[] = [];
    const notes: string[] = [
      `Seed ${SEED}: request i is the same in every run (fast-check seed ${SEED} + i). The two tenants hold pinned API keys (COGNITION_API_KEYS with user=alice / user=bob); alice sends, bob's sessions, messages, runs and artifacts carry a marker that must never come back, and a 2xx on one of bob's ids is a leak.`,
      'A field-less 4xx is a 400/413/415/422/431 whose body has no field list (`errors` / tRPC `data.errors`) and whose message names no part of the request. tRPC subscriptions are judged by their first event (`serialized-error` carries the status).',
    ];
    for (const provider of ['sqlite', 'postgresql'] as const) {
      const { row, notes: findings } = await fuzzOne(ctx, provider);
      rows.push(row);
      notes.push(...findings);
    }
    return { rows, notes };
  },
};
