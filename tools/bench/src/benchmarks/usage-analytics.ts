import {
  costByModelStatement,
  createPrismaStorage,
  searchStatement,
  openPostgres,
  openSqlite,
  statsStatement,
} from '@cognition/storage-prisma';
import { createTestDatabase } from '@cognition/storage-prisma/testing';
import type { OpenedDatabase } from '@cognition/storage-prisma';
import type { TestDatabase } from '@cognition/storage-prisma/testing';
import type { StorageBackend } from '@cognition/storage';
import { MessageSearchQuerySchema, StatsQuerySchema, UsageQuerySchema } from '@cognition/contracts';
import { sampleLatencies, timed } from '../harness/measure';
import { compare, formatLatency, summarizeLatencies } from '../harness/stats';
import type { Benchmark, BenchContext, ResultRow } from '../harness/types';

/** The issue's budget for stats and cost-by-model on PostgreSQL (p50). */
const BUDGET_MS = 100;
const TENANTS = 4;
const RUNS_PER_SESSION = 10;
const MESSAGES_PER_SESSION = 10;
const WORDS = 200;
/** The caller of the scoped cases: one tenant of four (a quarter of the sessions). */
const TENANT = { tenant: 't1' };

/** A deterministic vocabulary: `alpha0 … `; word k of message i is `WORD[(i * a + b) % WORDS]`. */
const SYLLABLES = ['ka', 'lo', 'mi', 'nu', 'pe', 'ra', 'si', 'to', 'vu', 'ze'];
function word(k: number): string {
  return `${SYLLABLES[k % 10] ?? ''}${SYLLABLES[Math.floor(k / 10) % 10] ?? ''}${SYLLABLES[Math.floor(k / 100) % 10] ?? ''}n`;
}
const VOCABULARY = Array.from({ length: WORDS }, (_, k) => word(k));
/** Word k of message i (8 words per message). */
const MULTIPLIERS = [7, 13, 17, 19, 23, 29, 31, 37];

function contentSql(provider: 'sqlite' | 'postgresql', i: string): string {
  const parts = MULTIPLIERS.map((m, k) =>
    provider === 'sqlite'
      ? `(SELECT w FROM bench_words WHERE k = (${i} * ${m} + ${k}) % ${WORDS})`
      : `(bench_words())[((${i} * ${m} + ${k}) % ${WORDS}) + 1]`,
  );
  return parts.join(` || ' ' || `);
}

/**
 * Seeds `sessions` sessions (4 tenants, 10 teams, spread over 30 days), 10 runs each with
 * their usage records (totals summed from the runs' statuses, two model rows per session),
 * and 10 messages each, in SQL on the database's own connection (millions of rows through the
 * port would take hours). The search index is filled by the migrations' triggers (SQLite) or
 * built after the load (PostgreSQL: the migration's GIN index, dropped and re-created).
 */
async function seed(opened: OpenedDatabase, sessions: number): Promise<void> {
  const db = opened.db;
  const sqlite = opened.provider === 'sqlite';
  const spacing = Math.floor((30 * 86_400) / sessions) || 1;
  const base = Math.floor(Date.now() / 1000) - 30 * 86_400;
  const ts = (seconds: string) =>
    sqlite
      ? `strftime('%Y-%m-%dT%H:%M:%S', ${seconds}, 'unixepoch') || '.000+00:00'`
      : `to_timestamp(${seconds}) AT TIME ZONE 'UTC'`;
  const series = (n: number, body: string) =>
    sqlite
      ? `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${n - 1}) ${body.replace('$FROM', 'FROM n')}`
      : body.replace('$FROM', `FROM generate_series(0, ${n - 1}) AS n(i)`);
  const exec = (text: string) => db.$executeRawUnsafe(text);
  if (sqlite) {
    await exec('CREATE TEMP TABLE bench_words (k INTEGER PRIMARY KEY, w TEXT NOT NULL)');
    await exec(
      `INSERT INTO bench_words (k, w) VALUES ${VOCABULARY.map((w, k) => `(${k}, '${w}')`).join(', ')}`,
    );
  } else {
    await exec(
      `CREATE FUNCTION bench_words() RETURNS text[] IMMUTABLE LANGUAGE sql AS $$ SELECT ARRAY[${VOCABULARY.map((w) => `'${w}'`).join(', ')}] $$`,
    );
    await exec('DROP INDEX messages_content_search_idx');
  }
  const status = `CASE WHEN i % 10 = 0 THEN 'completed' WHEN i % 17 = 0 THEN 'error' ELSE 'active' END`;
  await exec(
    series(
      sessions,
      `INSERT INTO sessions (id, thread_id, title, status, agent_name, config, message_count, version, created_at, updated_at)
       SELECT 's' || i, 't' || i, 'Session ' || i, ${status},
         CASE WHEN i % 3 = 0 THEN 'readonly' ELSE 'default' END, '{}', ${MESSAGES_PER_SESSION}, 1,
         ${ts(`${base} + i * ${spacing}`)}, ${ts(`${base} + i * ${spacing} + 600`)} $FROM`,
    ),
  );
  await exec(
    series(
      sessions,
      `INSERT INTO session_scopes (session_id, key, value) SELECT 's' || i, 'tenant', 't' || (i % ${TENANTS}) $FROM`,
    ),
  );
  await exec(
    series(
      sessions,
      `INSERT INTO session_metadata (session_id, key, value) SELECT 's' || i, 'team', 'team' || (i % 10) $FROM`,
    ),
  );
  const runs = sessions * RUNS_PER_SESSION;
  const div = (a: string, b: number) => (sqlite ? `(${a} / ${b})` : `(${a} / ${b})`);
  await exec(
    series(
      runs,
      `INSERT INTO runs (id, session_id, status, created_at, started_at, finished_at, updated_at)
       SELECT 'r' || i, 's' || ${div('i', RUNS_PER_SESSION)},
         CASE i % 50 WHEN 0 THEN 'failed' WHEN 1 THEN 'aborted' ELSE 'completed' END,
         ${ts(`${base} + ${div('i', RUNS_PER_SESSION)} * ${spacing} + (i % ${RUNS_PER_SESSION}) * 60`)},
         ${ts(`${base} + ${div('i', RUNS_PER_SESSION)} * ${spacing} + (i % ${RUNS_PER_SESSION}) * 60`)},
         ${ts(`${base} + ${div('i', RUNS_PER_SESSION)} * ${spacing} + (i % ${RUNS_PER_SESSION}) * 60 + 30`)},
         ${ts(`${base} + ${div('i', RUNS_PER_SESSION)} * ${spacing} + (i % ${RUNS_PER_SESSION}) * 60 + 30`)} $FROM`,
    ),
  );
  // Usage totals as the run store keeps them: counts from the runs, tokens per run.
  await exec(
    `INSERT INTO session_usage (session_id, tokens_in, tokens_out, cost_usd, unpriced_calls, runs, error_count, aborted_count,
       feedback_count, feedback_score_sum, last_model, last_provider, started_at, last_activity_at, ended_at)
     SELECT session_id, COUNT(*) * 1200, COUNT(*) * 150, COUNT(*) * 0.0045,
       CASE WHEN MIN(id) LIKE '%7' THEN 1 ELSE 0 END, COUNT(*),
       SUM(CASE WHEN status = 'failed' THEN 1 ELSE 0 END), SUM(CASE WHEN status = 'aborted' THEN 1 ELSE 0 END),
       1, 4, 'gpt-4o', 'openai', MIN(started_at), MAX(updated_at), MAX(finished_at)
     FROM runs GROUP BY session_id`,
  );
  await exec(
    series(
      sessions,
      `INSERT INTO session_model_usage (session_id, provider, model, calls, tokens_in, tokens_out, cost_usd, unpriced_calls)
       SELECT 's' || i, 'openai', CASE WHEN i % 2 = 0 THEN 'gpt-4o' ELSE 'gpt-4o-mini' END, 8, 9000, 1100, 0.036, 0 $FROM`,
    ),
  );
  await exec(
    series(
      sessions,
      `INSERT INTO session_model_usage (session_id, provider, model, calls, tokens_in, tokens_out, cost_usd, unpriced_calls)
       SELECT 's' || i, CASE WHEN i % 7 = 0 THEN 'local' ELSE 'anthropic' END,
         CASE WHEN i % 7 = 0 THEN 'llama3.1' ELSE 'claude-sonnet-4' END, 2, 3000, 400,
         CASE WHEN i % 7 = 0 THEN 0 ELSE 0.015 END, CASE WHEN i % 7 = 0 THEN 2 ELSE 0 END $FROM`,
    ),
  );
  const messages = sessions * MESSAGES_PER_SESSION;
  await exec(
    series(
      messages,
      `INSERT INTO messages (id, session_id, seq, role, content, created_at)
       SELECT 'm' || i, 's' || ${div('i', MESSAGES_PER_SESSION)}, i % ${MESSAGES_PER_SESSION},
         CASE WHEN i % 2 = 0 THEN 'user' ELSE 'assistant' END, ${contentSql(opened.provider, 'i')},
         ${ts(`${base} + ${div('i', MESSAGES_PER_SESSION)} * ${spacing} + (i % ${MESSAGES_PER_SESSION}) * 30`)} $FROM`,
    ),
  );
  if (sqlite) {
    await exec('DROP TABLE bench_words');
    await exec('ANALYZE');
  } else {
    await exec(
      `CREATE INDEX "messages_content_search_idx" ON "messages" USING GIN (to_tsvector('simple'::regconfig, left("content", 100000)))`,
    );
    await exec('DROP FUNCTION bench_words()');
    await exec('VACUUM ANALYZE');
  }
}

interface Case {
  name: string;
  run: (storage: StorageBackend) => Promise<unknown>;
  /** Compared with the issue's 100 ms budget (PostgreSQL stats and cost-by-model). */
  budget: boolean;
}

const CASES: Case[] = [
  { name: 'stats, all sessions', run: (s) => s.usage.stats({}, {}), budget: true },
  { name: 'stats, one tenant', run: (s) => s.usage.stats({}, TENANT), budget: true },
  {
    name: 'stats, one tenant, team + last 7 days, by day',
    run: (s) =>
      s.usage.stats(
        {
          metadata: { team: 'team3' },
          from: new Date(Date.now() - 7 * 86_400_000),
          bucket: 'day',
        },
        TENANT,
      ),
    budget: true,
  },
  { name: 'cost-by-model, all sessions', run: (s) => s.usage.costByModel({}, {}), budget: true },
  { name: 'cost-by-model, one tenant', run: (s) => s.usage.costByModel({}, TENANT), budget: true },
  {
    name: 'search, one frequent word, one tenant',
    run: (s) => s.search.search({ q: VOCABULARY[7] ?? '', limit: 20 }, TENANT),
    budget: false,
  },
  {
    name: 'search, two words, one tenant',
    run: (s) =>
      s.search.search({ q: `${VOCABULARY[7] ?? ''} ${VOCABULARY[42] ?? ''}`, limit: 20 }, TENANT),
    budget: false,
  },
];

async function explain(opened: OpenedDatabase): Promise<string[]> {
  const now = new Date();
  const plans: string[] = [];
  const search = searchStatement(
    'postgresql',
    MessageSearchQuerySchema.parse({ q: VOCABULARY[7], limit: 20 }),
    TENANT,
  );
  const statements = [
    ['stats, all sessions', statsStatement('postgresql', StatsQuerySchema.parse({}), {}, now)],
    ['stats, one tenant', statsStatement('postgresql', StatsQuerySchema.parse({}), TENANT, now)],
    ['search, one frequent word, one tenant', search],
    [
      'cost-by-model, one tenant',
      costByModelStatement('postgresql', UsageQuerySchema.parse({}), TENANT, now),
    ],
  ] as const;
  for (const [name, statement] of statements) {
    const rows = await opened.db.$queryRawUnsafe<{ 'QUERY PLAN': string }[]>(
      `EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) ${statement.text}`,
      ...statement.params,
    );
    plans.push(
      `PostgreSQL plan of "${name}": ${rows.map((r) => r['QUERY PLAN'].trim()).join(' | ')}`,
    );
  }
  return plans;
}

async function measureProvider(
  ctx: BenchContext,
  provider: 'sqlite' | 'postgresql',
  sessions: number,
): Promise<{ rows: ResultRow[]; notes: string[] }> {
  const label = provider === 'sqlite' ? 'SQLite' : 'PostgreSQL';
  const db: TestDatabase = await createTestDatabase(provider);
  const open = () =>
    db.provider === 'sqlite'
      ? createPrismaStorage({ provider: 'sqlite', path: db.path })
      : createPrismaStorage({ provider: 'postgresql', url: db.url });
  try {
    const migrate = open();
    await migrate.initialize();
    await migrate.close();
    const opened =
      db.provider === 'sqlite' ? await openSqlite(db.path) : await openPostgres(db.url);
    const notes: string[] = [];
    try {
      ctx.log(`${label}: seeding ${sessions.toLocaleString('en-US')} sessions`);
      const { ms } = await timed(() => seed(opened, sessions));
      notes.push(`${label}: seeded in ${(ms / 1000).toFixed(0)} s`);
      if (provider === 'postgresql') notes.push(...(await explain(opened)));
    } finally {
      await opened.close();
    }
    const storage = open();
    await storage.initialize();
    try {
      const all = await storage.usage.stats({}, {});
      if (all.sessions.total !== sessions || all.runs.total !== sessions * RUNS_PER_SESSION) {
        throw new Error(`${label}: stats do not count the seeded sessions and runs`);
      }
      const hits = await storage.search.search({ q: VOCABULARY[7] ?? '' }, TENANT);
      if (hits.total === 0 || !hits.hits[0]?.snippet.includes('[')) {
        throw new Error(`${label}: search finds nothing in the seeded messages`);
      }
      ctx.log(`${label}: measuring`);
      const samples = await sampleLatencies(
        Object.fromEntries(CASES.map((c) => [c.name, () => c.run(storage)])) as Record<
          string,
          () => Promise<unknown>
        >,
        { warmup: ctx.size(1, 3), samples: ctx.size(3, 15) },
      );
      const rows = CASES.map((c): ResultRow => {
        const summary = summarizeLatencies(samples[c.name] ?? []);
        return {
          case: `${label}, ${c.name}`,
          figures: formatLatency(summary),
          metrics: { p50Ms: summary.p50, p99Ms: summary.p99, sessions },
          ...(c.budget && provider === 'postgresql'
            ? {
                comparison: compare(summary.p50, BUDGET_MS, 'the 100 ms budget', '100 ms', {
                  kind: 'at-most',
                  ratio: 1,
                }),
              }
            : {}),
        };
      });
      notes.push(
        `${label}: the frequent word matches ${hits.total.toLocaleString('en-US')} of the tenant's ${((sessions * MESSAGES_PER_SESSION) / TENANTS).toLocaleString('en-US')} messages (all ranked, one page of 20 returned)`,
      );
      return { rows, notes };
    } finally {
      await storage.close();
    }
  } finally {
    await db.cleanup();
  }
}

export const usageAnalyticsBenchmark: Benchmark = {
  id: 11,
  title: 'Usage aggregates and recall search',
  measuredAs:
    'p50 of `usage.stats` (all, one tenant, filtered + bucketed), `usage.costByModel` and `search.search` through the storage backend over 100,000 sessions / 1,000,000 runs / 1,000,000 messages',
  comparedWith: 'the issue’s 100 ms budget (PostgreSQL stats and cost-by-model)',
  goal: 'p50 ≤ 100 ms on PostgreSQL',
  async run(ctx) {
    const sessions = ctx.size(500, 100_000);
    const rows: ResultRow[] = [];
    const notes = [
      `${sessions.toLocaleString('en-US')} sessions over 4 tenants and 10 teams, spread over 30 days; ${RUNS_PER_SESSION} runs and ${MESSAGES_PER_SESSION} messages (8 words of a 200-word vocabulary) per session; the scoped cases are one tenant (a quarter).`,
    ];
    for (const provider of ['sqlite', 'postgresql'] as const) {
      const result = await measureProvider(ctx, provider, sessions);
      rows.push(...result.rows);
      notes.push(...result.notes);
    }
    return { rows, notes };
  },
};
