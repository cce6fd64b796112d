// The Mastra peer in its own process: an `Agent` (@mastra/core) with an `ls` tool, its model the
// AI SDK OpenAI-compatible provider on the fake OpenAI-compatible server, `@mastra/memory` on
// LibSQL (a SQLite file) or PostgreSQL, served by Mastra's standalone Node server
// (`createNodeServer` of @mastra/deployer, what `mastra build` output runs). Settings come from
// the environment the bench sets. Prints `listening <url>` once it accepts requests.
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { Agent } from '@mastra/core/agent';
import { Mastra } from '@mastra/core/mastra';
import { createTool } from '@mastra/core/tools';
import { createNodeServer } from '@mastra/deployer/server';
import { LibSQLStore } from '@mastra/libsql';
import { Memory } from '@mastra/memory';
import { PostgresStore } from '@mastra/pg';
import { z } from 'zod';

const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} must be set`);
  return value;
};
const workspace = env('BENCH_PEER_WORKSPACE');
const storageUrl = env('BENCH_PEER_STORAGE_URL');

const storage = storageUrl.startsWith('postgres')
  ? new PostgresStore({ id: 'bench-pg', connectionString: storageUrl })
  : new LibSQLStore({ id: 'bench-libsql', url: storageUrl });

const ls = createTool({
  id: 'ls',
  description: 'List the entries of a directory of the workspace.',
  inputSchema: z.object({ path: z.string().optional() }),
  execute: async ({ path: dir }) => (await readdir(path.resolve(workspace, dir ?? '.'))).join('\n'),
});

const provider = createOpenAICompatible({
  name: 'bench',
  baseURL: env('BENCH_PEER_MODEL_URL'),
  apiKey: 'bench',
});

const agent = new Agent({
  id: 'bench',
  name: 'bench',
  instructions: 'You are a helpful assistant with access to a workspace.',
  model: provider.chatModel(process.env.BENCH_PEER_MODEL ?? 'bench-model'),
  tools: { ls },
  memory: new Memory({ storage }),
});

const mastra = new Mastra({
  agents: { bench: agent },
  storage,
  server: { host: '127.0.0.1', port: Number(env('BENCH_PEER_PORT')) },
});

await createNodeServer(mastra, { tools: {} });
process.stdout.write(`listening http://127.0.0.1:${env('BENCH_PEER_PORT')}\n`);
