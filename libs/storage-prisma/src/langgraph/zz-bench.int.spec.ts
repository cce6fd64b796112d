import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import type { BaseCheckpointSaver, Checkpoint } from '@langchain/langgraph-checkpoint';
import { uuid6 } from '@langchain/langgraph-checkpoint';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { openPostgres, openSqlite } from '../db';
import { createTestDatabase } from '../testing-db';
import { PrismaCheckpointSaver } from './checkpoint-saver';

jest.setTimeout(600_000);
const N = Number(process.env['BENCH_N'] ?? 200);
const W = Number(process.env['BENCH_W'] ?? 10);

async function bench(name: string, saver: BaseCheckpointSaver) {
  const thread = `t-${uuid6(1)}`;
  let config: any = { configurable: { thread_id: thread, checkpoint_ns: '' } };
  const messages: any[] = [];
  const ids: string[] = [];
  let t0 = performance.now();
  for (let i = 0; i < N; i++) {
    messages.push(
      i % 2
        ? new AIMessage({ content: `answer ${i} `.repeat(20), id: `m${i}` })
        : new HumanMessage({ content: `question ${i}`, id: `m${i}` }),
    );
    const cp: Checkpoint = {
      v: 4,
      id: uuid6(1),
      ts: new Date().toISOString(),
      channel_values: { messages: messages.slice(-W), counter: i, config: { a: 1, b: 'x' } },
      channel_versions: { messages: i + 1, counter: i + 1, config: 1 },
      versions_seen: { agent: { messages: i } },
    };
    const newVersions =
      i === 0 ? { messages: 1, counter: 1, config: 1 } : { messages: i + 1, counter: i + 1 };
    config = await saver.put(config, cp, { source: 'loop', step: i, parents: {} }, newVersions);
    await saver.putWrites(
      config,
      [
        ['messages', [messages[i]]],
        ['counter', i],
      ],
      `task-${i}`,
    );
    ids.push(cp.id);
  }
  const put = N / ((performance.now() - t0) / 1000);
  t0 = performance.now();
  for (let i = 0; i < N; i++)
    await saver.getTuple({ configurable: { thread_id: thread, checkpoint_ns: '' } });
  const latest = N / ((performance.now() - t0) / 1000);
  t0 = performance.now();
  for (let i = 0; i < N; i++)
    await saver.getTuple({
      configurable: { thread_id: thread, checkpoint_ns: '', checkpoint_id: ids[i] },
    });
  const byId = N / ((performance.now() - t0) / 1000);
  t0 = performance.now();
  const L = Math.max(10, N / 10);
  for (let i = 0; i < L; i++) {
    for await (const _ of saver.list({ configurable: { thread_id: thread } }, { limit: 10 }))
      void _;
  }
  const list = L / ((performance.now() - t0) / 1000);
  const tuple = await saver.getTuple({ configurable: { thread_id: thread, checkpoint_ns: '' } });
  expect((tuple?.checkpoint.channel_values as any).messages.length).toBe(Math.min(N, W));
  console.log(
    `${name.padEnd(28)} put+writes ${put.toFixed(0).padStart(6)}/s  getTuple(latest) ${latest.toFixed(0).padStart(6)}/s  getTuple(id) ${byId.toFixed(0).padStart(6)}/s  list(10) ${list.toFixed(0).padStart(6)}/s`,
  );
}

test('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-'));
  const official = SqliteSaver.fromConnString(join(dir, 'official.db'));
  await bench('official sqlite', official);
  const t = await createTestDatabase('sqlite');
  if (t.provider !== 'sqlite') throw new Error();
  const o = await openSqlite(t.path);
  await bench('prisma sqlite', new PrismaCheckpointSaver(o.db));
  await bench('official sqlite', official);
  await bench('prisma sqlite', new PrismaCheckpointSaver(o.db));
  await o.close();
  await t.cleanup();
});
test('postgres', async () => {
  const t = await createTestDatabase('postgresql');
  if (t.provider !== 'postgresql') throw new Error();
  const t2 = await createTestDatabase('postgresql');
  if (t2.provider !== 'postgresql') throw new Error();
  const official = PostgresSaver.fromConnString(t2.url);
  await official.setup();
  const o = await openPostgres(t.url);
  await bench('official postgres', official);
  await bench('prisma postgres', new PrismaCheckpointSaver(o.db));
  await bench('official postgres', official);
  await bench('prisma postgres', new PrismaCheckpointSaver(o.db));
  await official.end();
  await o.close();
  await t.cleanup();
  await t2.cleanup();
});
