import path from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  createPrismaStorage,
  openPostgres,
  openSqlite,
  PrismaCheckpointSaver,
} from '@cognition/storage-prisma';
import { createTestDatabase } from '@cognition/storage-prisma/testing';
import type { OpenedDatabase } from '@cognition/storage-prisma';
import type { TestDatabase } from '@cognition/storage-prisma/testing';
import type { StorageBackend } from '@cognition/storage';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import type { BaseMessage } from '@langchain/core/messages';
import type { RunnableConfig } from '@langchain/core/runnables';
import { uuid6 } from '@langchain/langgraph-checkpoint';
import type {
  BaseCheckpointSaver,
  Checkpoint,
  CheckpointMetadata,
} from '@langchain/langgraph-checkpoint';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import Database from 'better-sqlite3';
import pg from 'pg';
import { sampleThroughput } from '../harness/measure';
import { compare, formatRate, median } from '../harness/stats';
import type { Benchmark, BenchContext, ResultRow } from '../harness/types';

/** Sizes of one provider's run. */
interface Sizes {
  /** Threads built per saver; the put measurement alternates savers thread by thread. */
  threads: number;
  /** Checkpoints per thread (one agent step each; the message list grows by 2 per step). */
  steps: number;
  readRounds: number;
  getOpsPerRound: number;
  listOpsPerRound: number;
}

/** The official savers' pool size, the same as our backend's default. */
const POOL_SIZE = 10;
const OFFICIAL_PG_SCHEMA = 'langgraph_official';

const TEXT = 'Checkpoint benchmark text that stands in for a model answer of ordinary length. ';

/**
 * The `messages` channel after `step` steps: a user/assistant exchange per step. Ids are unique
 * per thread, as LangGraph's are (they become message row ids in the projection).
 */
function messagesAt(threadId: string, step: number): BaseMessage[] {
  const messages: BaseMessage[] = [];
  for (let i = 0; i <= step; i += 1) {
    messages.push(new HumanMessage({ id: `${threadId}-h${i}`, content: `Question ${i}: ${TEXT}` }));
    messages.push(
      new AIMessage({ id: `${threadId}-a${i}`, content: `Answer ${i}: ${TEXT.repeat(2)}` }),
    );
  }
  return messages;
}

interface Step {
  checkpoint: Checkpoint;
  metadata: CheckpointMetadata;
  newVersions: Record<string, number>;
}

/**
 * Step `step` of an agent loop as LangGraph would checkpoint it: `messages` and the branch
 * channel change every step; `summary` (written at step 0) is carried unchanged, which the
 * savers store differently (re-serialized, copied, or left at its old version).
 */
function stepOf(threadId: string, step: number): Step {
  const version = step + 1;
  return {
    checkpoint: {
      v: 4,
      id: uuid6(step),
      ts: new Date().toISOString(),
      channel_values: {
        messages: messagesAt(threadId, step),
        'branch:to:agent': null,
        summary: `Summary of the session so far. ${TEXT.repeat(4)}`,
      },
      channel_versions: { messages: version, 'branch:to:agent': version, summary: 1 },
      versions_seen: { agent: { messages: step, 'branch:to:agent': step } },
    },
    metadata: { source: 'loop', step, parents: {} },
    newVersions:
      step === 0
        ? { messages: version, 'branch:to:agent': version, summary: 1 }
        : { messages: version, 'branch:to:agent': version },
  };
}

/**
 * Builds a thread of `steps` checkpoints (each followed by the two pending writes LangGraph
 * records for the next task) and returns the ms spent in `put` alone.
 */
async function buildThread(
  saver: BaseCheckpointSaver,
  threadId: string,
  steps: number,
): Promise<number> {
  let config: RunnableConfig = { configurable: { thread_id: threadId, checkpoint_ns: '' } };
  let putMs = 0;
  for (let step = 0; step < steps; step += 1) {
    const { checkpoint, metadata, newVersions } = stepOf(threadId, step);
    const started = performance.now();
    config = await saver.put(config, checkpoint, metadata, newVersions);
    putMs += performance.now() - started;
    await saver.putWrites(
      config,
      [
        ['messages', [new AIMessage({ id: `${threadId}-w${step}`, content: TEXT })]],
        ['branch:to:tools', null],
      ],
      `task-${step}`,
    );
  }
  return putMs;
}

type Contender = 'ours' | 'official';

interface Savers {
  label: string;
  officialName: string;
  ours: BaseCheckpointSaver;
  official: BaseCheckpointSaver;
  /** The server's wiring (message projection hook) on a session's thread. */
  storage: StorageBackend;
  close(): Promise<void>;
}

/**
 * Our saver and the official one on `db`; the storage backend on `wired`, a second fresh
 * database of the same provider (one SQLite file is never opened twice by this process).
 */
async function openSavers(db: TestDatabase, wired: TestDatabase, dir: string): Promise<Savers> {
  switch (db.provider) {
    case 'sqlite': {
      // The official saver's `checkpoints` table would clash with ours, so it gets a file of its
      // own next to ours (same directory, same disk, WAL like ours).
      if (wired.provider !== 'sqlite') throw new Error('provider mismatch');
      const storage = createPrismaStorage({ provider: 'sqlite', path: wired.path });
      await storage.initialize();
      const opened: OpenedDatabase = await openSqlite(db.path);
      const officialDb = new Database(path.join(dir, 'official-sqlite-saver.db'));
      return {
        label: 'SQLite',
        officialName: 'official SqliteSaver',
        ours: new PrismaCheckpointSaver(opened.db, { provider: 'sqlite' }),
        official: new SqliteSaver(officialDb),
        storage,
        async close() {
          await storage.close();
          await opened.close();
          officialDb.close();
        },
      };
    }
    case 'postgresql': {
      // Same database; the official saver's tables live in a schema of their own.
      if (wired.provider !== 'postgresql') throw new Error('provider mismatch');
      const storage = createPrismaStorage({
        provider: 'postgresql',
        url: wired.url,
        poolSize: POOL_SIZE,
      });
      await storage.initialize();
      const opened = await openPostgres(db.url, { poolSize: POOL_SIZE });
      const pool = new pg.Pool({ connectionString: db.url, max: POOL_SIZE });
      // An idle client whose connection the server ends (e.g. the test database being dropped
      // with FORCE) emits 'error' on the pool; unhandled, it would crash the whole bench run.
      pool.on('error', () => undefined);
      const official = new PostgresSaver(pool, undefined, { schema: OFFICIAL_PG_SCHEMA });
      await official.setup();
      return {
        label: 'PostgreSQL',
        officialName: 'official PostgresSaver',
        ours: new PrismaCheckpointSaver(opened.db, { provider: 'postgresql' }),
        official,
        storage,
        async close() {
          await storage.close();
          await opened.close();
          await pool.end();
        },
      };
    }
  }
}

function rateRow(
  label: string,
  operation: string,
  officialName: string,
  rates: Record<Contender, number[]>,
  withGoal = true,
): ResultRow {
  const ours = median(rates.ours);
  const official = median(rates.official);
  return {
    case: `${label} ${operation}`,
    figures: formatRate(ours, 'ops/s'),
    metrics: { oursOpsPerSec: ours, officialOpsPerSec: official, rounds: rates.ours.length },
    comparison: compare(
      ours,
      official,
      officialName,
      formatRate(official, 'ops/s'),
      withGoal ? { kind: 'at-least', ratio: 1.0 } : undefined,
    ),
  };
}

async function measureProvider(
  ctx: BenchContext,
  provider: 'sqlite' | 'postgresql',
  sizes: Sizes,
): Promise<ResultRow[]> {
  const db = await createTestDatabase(provider);
  const wired = await createTestDatabase(provider);
  const cleanup = async (): Promise<void> => {
    await db.cleanup();
    await wired.cleanup();
  };
  const savers = await openSavers(db, wired, ctx.tmpDir).catch(async (error: unknown) => {
    await cleanup();
    throw error;
  });
  const { label, officialName } = savers;
  try {
    // put: thread by thread, alternating who builds first.
    ctx.log(`${label}: put (${sizes.threads} threads × ${sizes.steps} steps per saver)`);
    const putRates: Record<Contender, number[]> = { ours: [], official: [] };
    const threads: Record<Contender, string[]> = { ours: [], official: [] };
    // One untimed thread each first: connections, prepared statements, JIT.
    await buildThread(savers.ours, 'warmup-ours', 3);
    await buildThread(savers.official, 'warmup-official', 3);
    for (let t = 0; t < sizes.threads; t += 1) {
      const order: Contender[] = t % 2 === 0 ? ['ours', 'official'] : ['official', 'ours'];
      for (const who of order) {
        const threadId = `thread-${who}-${t}`;
        const ms = await buildThread(savers[who], threadId, sizes.steps);
        putRates[who].push((sizes.steps * 1000) / ms);
        threads[who].push(threadId);
      }
    }

    ctx.log(`${label}: getTuple, list`);
    const pick = (who: Contender, i: number): RunnableConfig => ({
      configurable: { thread_id: threads[who][i % sizes.threads], checkpoint_ns: '' },
    });
    const get = (who: Contender) => async (i: number) => {
      const tuple = await savers[who].getTuple(pick(who, i));
      if (!tuple || tuple.pendingWrites?.length !== 2) {
        throw new Error(
          `${label} ${who}: getTuple did not return the latest checkpoint with its writes`,
        );
      }
    };
    const list = (who: Contender) => async (i: number) => {
      let n = 0;
      for await (const _tuple of savers[who].list(pick(who, i), { limit: 10 })) n += 1;
      if (n !== Math.min(10, sizes.steps))
        throw new Error(`${label} ${who}: list returned ${n} checkpoints`);
    };
    const getRates = await sampleThroughput(
      { ours: get('ours'), official: get('official') },
      { warmupOps: 20, rounds: sizes.readRounds, opsPerRound: sizes.getOpsPerRound },
    );
    const listRates = await sampleThroughput(
      { ours: list('ours'), official: list('official') },
      { warmupOps: 5, rounds: sizes.readRounds, opsPerRound: sizes.listOpsPerRound },
    );

    // The server's wiring: the backend's checkpointer on a session's thread, whose root puts
    // also rewrite the session's message rows in the same transaction.
    ctx.log(`${label}: put through the storage backend (with message projection)`);
    const wiredRates: Record<Contender, number[]> = { ours: [], official: [] };
    for (let t = 0; t < sizes.threads; t += 1) {
      const session = await savers.storage.sessions.create({ title: `projection ${t}` }, {});
      const build = {
        ours: () => buildThread(savers.storage.checkpointer, session.threadId, sizes.steps),
        official: () => buildThread(savers.official, `thread-wired-official-${t}`, sizes.steps),
      };
      const order: Contender[] = t % 2 === 0 ? ['ours', 'official'] : ['official', 'ours'];
      for (const who of order) wiredRates[who].push((sizes.steps * 1000) / (await build[who]()));
    }
    const projected = await savers.storage.messages.page(
      (await savers.storage.sessions.list({ limit: 1 }, {})).sessions[0]?.id ?? '',
      { limit: 1 },
      {},
    );
    if (projected.total !== 2 * sizes.steps) {
      throw new Error(
        `${label}: the projection holds ${projected.total} messages, expected ${2 * sizes.steps}`,
      );
    }

    return [
      rateRow(label, 'put', officialName, putRates),
      rateRow(label, 'getTuple (latest, with pending writes)', officialName, getRates),
      rateRow(label, 'list (limit 10)', officialName, listRates),
      rateRow(
        label,
        'put via the storage backend (+ message projection)',
        officialName,
        wiredRates,
        false,
      ),
    ];
  } finally {
    await savers.close();
    await cleanup();
  }
}

export const checkpointerBenchmark: Benchmark = {
  id: 5,
  title: 'LangGraph checkpointer put / getTuple / list',
  measuredAs:
    'ops/s of one sequential caller, SQLite and PostgreSQL, median over alternating rounds',
  comparedWith:
    'the official `@langchain/langgraph-checkpoint-sqlite` / `-postgres` savers on the same database server',
  goal: '≥ 1.0× the official saver',
  async run(ctx) {
    const sizes: Sizes = ctx.smoke
      ? { threads: 2, steps: 5, readRounds: 3, getOpsPerRound: 20, listOpsPerRound: 5 }
      : { threads: 10, steps: 30, readRounds: 10, getOpsPerRound: 200, listOpsPerRound: 40 };
    const rows = [
      ...(await measureProvider(ctx, 'sqlite', sizes)),
      ...(await measureProvider(ctx, 'postgresql', sizes)),
    ];
    return {
      rows,
      notes: [
        `Each saver builds ${sizes.threads} threads of ${sizes.steps} checkpoints (one agent step each: the message list grows by a user/assistant pair per step, up to ${2 * sizes.steps} LangChain messages; a 400-character summary channel is carried unchanged; two pending writes per step). put is timed alone; getTuple reads a thread's latest checkpoint with its writes; list reads the newest 10.`,
        "Ours is `PrismaCheckpointSaver` on the backend's own Prisma client (the storage backend's saver without its projection hook). The official SQLite saver uses its own file in the same directory (its `checkpoints` table would clash with ours); the official PostgreSQL saver uses the same database, schema `langgraph_official`, with a pg pool of the same size (10).",
        'The "via the storage backend" row is what the server runs: root puts on a session\'s thread also rewrite the session\'s message rows in the same transaction. It does more than the official saver, so its ratio is reported without a goal.',
      ],
    };
  },
};
