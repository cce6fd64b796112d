import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { FakeOpenAIServer } from '@cognition/runtime/testing';
import { fakeProviderEnv } from './agent-server';
import { createTestDatabase } from './postgres';
import type { ServerProcess } from './server-process';
import { startServerProcess, tempWorkspace } from './server-process';

/** The Redis of the multi-node tests (provisioned by tools/provision/ensure-redis.sh). */
export const TEST_REDIS_URL = process.env['COGNITION_TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const HAPROXY = process.env['COGNITION_TEST_HAPROXY'] ?? '/usr/sbin/haproxy';

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

/**
 * HAProxy, round robin, checking each node's `/ready` every 300 ms; a request refused by a dead
 * node is redispatched to another. Timeouts leave room for long event streams.
 */
function haproxyConfig(port: number, nodes: ClusterNode[]): string {
  return [
    'global',
    '  maxconn 2000',
    'defaults',
    '  mode http',
    '  timeout connect 1s',
    '  timeout client 120s',
    '  timeout server 120s',
    '  timeout tunnel 120s',
    '  retries 3',
    '  option redispatch',
    'frontend cognition',
    `  bind 127.0.0.1:${port}`,
    '  default_backend nodes',
    'backend nodes',
    '  balance roundrobin',
    '  option httpchk GET /ready',
    '  default-server inter 300ms fall 2 rise 1',
    ...nodes.map((node) => `  server ${node.id} 127.0.0.1:${node.port} check`),
    '',
  ].join('\n');
}

export async function startCluster(options: {
  size: number;
  fake: FakeOpenAIServer;
  leaseSeconds: number;
  env?: Record<string, string>;
  /** A database of the test's own (default: a fresh one on the suite's PostgreSQL). */
  databaseUrl?: string;
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
    COGNITION_REDIS_URL: TEST_REDIS_URL,
    COGNITION_REDIS_KEY_PREFIX: keyPrefix,
    COGNITION_NODE_ID: node.id,
    COGNITION_RUN_LEASE_SECONDS: String(options.leaseSeconds),
    COGNITION_SHUTDOWN_GRACE_SECONDS: '1',
    ...fakeProviderEnv(options.fake),
    ...options.env,
  });
  const start = async (index: number) => {
    const node = nodes[index];
    if (!node) throw new Error(`no node ${index}`);
    node.process = await startServerProcess(envOf(node));
  };
  await Promise.all(nodes.map((_node, i) => start(i)));

  const port = await freePort();
  const configFile = path.join(workspace.dir, 'haproxy.cfg');
  writeFileSync(configFile, haproxyConfig(port, nodes));
  const haproxy: ChildProcess = spawn(HAPROXY, ['-f', configFile, '-db'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const haproxyErrors: string[] = [];
  haproxy.stderr?.on('data', (chunk: Buffer) => haproxyErrors.push(chunk.toString('utf8')));
  const url = `http://127.0.0.1:${port}`;
  for (let attempt = 0; ; attempt += 1) {
    try {
      if ((await fetch(`${url}/ready`)).ok) break;
    } catch {
      // not listening yet
    }
    if (attempt > 100) throw new Error(`haproxy did not start: ${haproxyErrors.join('')}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }

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
      haproxy.kill('SIGKILL');
      await Promise.all(
        nodes.map((node) => node.process?.stop('SIGKILL') ?? Promise.resolve(null)),
      );
      await database.drop();
      workspace.remove();
    },
  };
}
