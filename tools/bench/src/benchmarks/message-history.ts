import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { createPrismaStorage, openPostgres, openSqlite } from '@cognition/storage-prisma';
import { createTestDatabase } from '@cognition/storage-prisma/testing';
import type { TestDatabase } from '@cognition/storage-prisma/testing';
import { sampleLatencies } from '../harness/measure';
import { compare, formatLatency, summarizeLatencies } from '../harness/stats';
import type { Benchmark, BenchContext, ResultRow } from '../harness/types';
import { ensureServerBuilt, serverEnvFor, startServer } from '../support/server-process';

const PAGE = 50;
const SEED_CHUNK = 1_000;

/** ~200 characters, like a short chat turn. */
function contentOf(i: number): string {
  return `Message ${i}: ${'the quick brown fox jumps over the lazy dog '.repeat(4)}`.slice(0, 200);
}

/**
 * A session with `count` messages, created through the storage backend: the session by
 * `sessions.create`, the rows in bulk through the backend's Prisma client, exactly as
 * `messages.create` writes them (contiguous `seq`, `source = 'direct'`, `message_count` kept),
 * because 100,000 single-row transactions would take minutes per provider.
 */
async function seedSession(db: TestDatabase, count: number): Promise<string> {
  const storage =
    db.provider === 'sqlite'
      ? createPrismaStorage({ provider: 'sqlite', path: db.path })
      : createPrismaStorage({ provider: 'postgresql', url: db.url });
  let sessionId: string;
  try {
    await storage.initialize();
    sessionId = (await storage.sessions.create({ title: 'history benchmark' }, {})).id;
  } finally {
    await storage.close();
  }
  const opened = db.provider === 'sqlite' ? await openSqlite(db.path) : await openPostgres(db.url);
  try {
    const base = Date.now() - count;
    for (let start = 0; start < count; start += SEED_CHUNK) {
      const end = Math.min(count, start + SEED_CHUNK);
      const rows = [];
      for (let seq = start; seq < end; seq += 1) {
        rows.push({
          id: randomUUID(),
          sessionId,
          seq,
          role: seq % 2 === 0 ? 'user' : 'assistant',
          content: contentOf(seq),
          toolCalls: '[]',
          toolCallId: null,
          tokenCount: seq % 2 === 0 ? null : 48,
          modelUsed: seq % 2 === 0 ? null : 'bench-model',
          parentId: null,
          metadata: '{}',
          source: 'direct',
          createdAt: new Date(base + seq),
        });
      }
      await opened.db.message.createMany({ data: rows });
    }
    await opened.db.session.update({ where: { id: sessionId }, data: { messageCount: count } });
  } finally {
    await opened.close();
  }
  return sessionId;
}

interface PageBody {
  messages: { content: string }[];
  total: number;
  has_more: boolean;
}

async function getPage(url: string): Promise<PageBody> {
  const response = await fetch(url);
  const text = await response.text();
  if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}: ${text}`);
  return JSON.parse(text) as PageBody;
}

async function measureProvider(
  ctx: BenchContext,
  provider: 'sqlite' | 'postgresql',
  count: number,
): Promise<ResultRow> {
  const label = provider === 'sqlite' ? 'SQLite' : 'PostgreSQL';
  const db = await createTestDatabase(provider);
  try {
    ctx.log(`${label}: seeding ${count.toLocaleString('en-US')} messages`);
    const sessionId = await seedSession(db, count);
    const workspace = path.join(ctx.tmpDir, provider);
    mkdirSync(workspace, { recursive: true });
    const server = await startServer({
      repoRoot: ctx.repoRoot,
      env: serverEnvFor(db, workspace),
      profileDir: ctx.profileDir,
    });
    try {
      const pageUrl = (offset: number): string =>
        `${server.url}/sessions/${sessionId}/messages?limit=${PAGE}&offset=${offset}&order=asc`;
      const lastOffset = count - PAGE;
      const firstPage = await getPage(pageUrl(0));
      const lastPage = await getPage(pageUrl(lastOffset));
      if (
        firstPage.total !== count ||
        firstPage.messages[0]?.content !== contentOf(0) ||
        lastPage.messages.length !== PAGE ||
        lastPage.has_more ||
        lastPage.messages[PAGE - 1]?.content !== contentOf(count - 1)
      ) {
        throw new Error(`${label}: the pages do not hold the seeded messages in thread order`);
      }
      ctx.log(`${label}: measuring`);
      const samples = await sampleLatencies(
        { first: () => getPage(pageUrl(0)), last: () => getPage(pageUrl(lastOffset)) },
        { warmup: ctx.size(5, 20), samples: ctx.size(20, 200) },
      );
      const first = summarizeLatencies(samples.first);
      const last = summarizeLatencies(samples.last);
      return {
        case: `${label}, last page (offset ${lastOffset.toLocaleString('en-US')})`,
        figures: formatLatency(last),
        metrics: {
          lastP50Ms: last.p50,
          lastP99Ms: last.p99,
          firstP50Ms: first.p50,
          firstP99Ms: first.p99,
          messages: count,
        },
        comparison: compare(last.p50, first.p50, 'first page', formatLatency(first), {
          kind: 'at-most',
          ratio: 1.5,
        }),
      };
    } finally {
      await server.stop();
    }
  } finally {
    await db.cleanup();
  }
}

export const messageHistoryBenchmark: Benchmark = {
  id: 6,
  title: 'Message history of a 100,000-message session',
  measuredAs:
    'latency of `GET /sessions/{id}/messages?limit=50&offset=…&order=asc` on the built server (REST, one client, keep-alive), first and last page',
  comparedWith: 'the first page',
  goal: 'last page p50 ≤ 1.5× the first page',
  async run(ctx) {
    await ensureServerBuilt(ctx.repoRoot);
    const count = ctx.size(2_000, 100_000);
    const rows = [
      await measureProvider(ctx, 'sqlite', count),
      await measureProvider(ctx, 'postgresql', count),
    ];
    return {
      rows,
      notes: [
        `One session of ${count.toLocaleString('en-US')} messages of 200 characters, alternating user/assistant, seeded through the storage backend (session via \`sessions.create\`, rows in bulk through its Prisma client in the shape \`messages.create\` writes) before the server starts.`,
        'First and last page requests alternate, so both see the same machine load; the ratio is last p50 / first p50.',
      ],
    };
  },
};
