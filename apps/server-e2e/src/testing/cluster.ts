import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { TEST_REDIS_URL, startBalancer } from '@cognition/cluster-redis/testing';
import type { FakeOpenAIServer } from '@cognition/runtime/testing/http';
import { fakeProviderEnv } from './agent-server';
import { createTestDatabase } from './postgres';
import { trackOutput } from './process-logs';
import type { ServerProcess } from './server-process';
import { startServerProcess, tempWorkspace } from './server-process';

export interface ClusterNode {
  id: string;
  port: number;
  process: ServerProcess | null;
}

/** N server processes on one PostgreSQL database and one Redis, behind HAProxy. */
export interface TestCluster {
  /** The balancer's URL: what a client uses. */
  url: string;
  nodes: ClusterNode[];
  /** The URL of one node, bypassing the balancer. */
  nodeUrl(index: number): string;
  /** Kills (SIGKILL) or stops (SIGTERM) a node; it stays down until `start`. */
  stop(index: number, signal: NodeJS.Signals): Promise<void>;
  /** (Re)starts a node on its port, with its id. */
  start(index: number): Promise<void>;
  close(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export async function startCluster(options: {
  size: number;
  fake: FakeOpenAIServer;
  leaseSeconds: number;
  env?: Record<string, string>;
  /** A database of the test's own (default: a fresh one on the suite's PostgreSQL). */
  databaseUrl?: string;
  /** A Redis of the test's own (default: the suite's, with a key prefix of this cluster). */
  redisUrl?: string;
  /** Settings of one node, asked at each (re)start of node `index` (after `env`). */
  nodeEnv?: (index: number) => Record<string, string>;
  /** An API key of the nodes (when `env` configures keys): the balancer's check sends it. */
  checkKey?: string;
}): Promise<TestCluster> {
  const database = options.databaseUrl
    ? { url: options.databaseUrl, drop: () => Promise.resolve() }
    : await createTestDatabase();
  const workspace = tempWorkspace('cognition-cluster-');
  const keyPrefix = `cognition-e2e:${randomUUID()}:`;
  const nodes: ClusterNode[] = [];
  for (let i = 0; i < options.size; i += 1) {
    nodes.push({ id: `node-${i + 1}`, port: await freePort(), process: null });
  }
  const envOf = (node: ClusterNode) => ({
    COGNITION_WORKSPACE_ROOT: workspace.dir,
    COGNITION_PORT: String(node.port),
    COGNITION_PERSISTENCE_BACKEND: 'postgres',
    COGNITION_PERSISTENCE_URI: database.url,
    COGNITION_REDIS_URL: options.redisUrl ?? TEST_REDIS_URL,
    COGNITION_REDIS_KEY_PREFIX: keyPrefix,
    COGNITION_NODE_ID: node.id,
    COGNITION_RUN_LEASE_SECONDS: String(options.leaseSeconds),
    COGNITION_SHUTDOWN_GRACE_SECONDS: '1',
    ...fakeProviderEnv(options.fake),
    ...options.env,
    ...options.nodeEnv?.(nodes.indexOf(node)),
  });
  const start = async (index: number) => {
    const node = nodes[index];
    if (!node) throw new Error(`no node ${index}`);
    node.process = await startServerProcess(envOf(node));
  };
  // A node or the balancer that does not start leaves nothing behind: the nodes that did are
  // stopped, the database and the workspace removed (a failed beforeAll gets no cluster to close).
  const abandon = async (error: unknown): Promise<never> => {
    await Promise.all(nodes.map((node) => node.process?.stop('SIGKILL') ?? Promise.resolve(null)));
    await database.drop();
    workspace.remove();
    throw error;
  };
  // Settled, not all: a node still starting when another failed would be left running.
  const started = await Promise.allSettled(nodes.map((_node, i) => start(i)));
  const failed = started.find((result) => result.status === 'rejected');
  if (failed) await abandon(failed.reason);

  const balancer = await startBalancer({
    port: await freePort(),
    backends: nodes,
    dir: workspace.dir,
    ...(options.checkKey ? { checkKey: options.checkKey } : {}),
  }).catch(abandon);
  trackOutput('haproxy', { stdout: [], stderr: balancer.stderr }, balancer.child);
  const url = balancer.url;

  return {
    url,
    nodes,
    nodeUrl: (index) => `http://127.0.0.1:${nodes[index]?.port ?? 0}`,
    async stop(index, signal) {
      const node = nodes[index];
      await node?.process?.stop(signal);
      if (node) node.process = null;
    },
    start,
    async close() {
      balancer.stop();
      await Promise.all(
        nodes.map((node) => node.process?.stop('SIGKILL') ?? Promise.resolve(null)),
      );
      await database.drop();
      workspace.remove();
    },
  };
}
