import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';

/** The HAProxy of the multi-node tests and benchmarks (tools/provision installs it). */
export const HAPROXY = process.env['COGNITION_TEST_HAPROXY'] ?? '/usr/sbin/haproxy';

/** One server behind the balancer. */
export interface Backend {
  id: string;
  port: number;
}

/**
 * Round robin, checking each node's `/ready` every 300 ms; a request refused by a dead node is
 * redispatched to another. Timeouts leave room for long event streams. Every request that did not
 * end normally (an error status, a retry or redispatch, a connection closed early on either side)
 * is logged to stderr with its timers and termination state (`option dontlog-normal`), so a
 * test that sees a dropped connection can tell which side closed it and when. Nodes with API keys
 * answer `/ready` only with one: `checkKey` is sent in the check (docs/deployment.md).
 */
export function haproxyConfig(
  port: number,
  backends: readonly Backend[],
  checkKey?: string,
): string {
  return [
    'global',
    '  maxconn 4000',
    '  log stderr format raw local0',
    'defaults',
    '  mode http',
    '  log global',
    '  option httplog',
    '  option dontlog-normal',
    '  timeout connect 1s',
    '  timeout client 120s',
    '  timeout server 120s',
    '  timeout tunnel 120s',
    // A check answered late is a busy node, not a dead one (a dead node refuses the connection at
    // once): without this the check's timeout is `inter` (300 ms), and on a loaded 2-core machine
    // every node was marked DOWN right after start, so requests through the balancer got 503.
    '  timeout check 2s',
    '  retries 3',
    '  option redispatch',
    'frontend cognition',
    `  bind 127.0.0.1:${port}`,
    '  default_backend nodes',
    'backend nodes',
    '  balance roundrobin',
    ...(checkKey
      ? [
          '  option httpchk',
          `  http-check send meth GET uri /ready hdr Authorization "Bearer ${checkKey}"`,
        ]
      : ['  option httpchk GET /ready']),
    '  default-server inter 300ms fall 2 rise 1',
    ...backends.map((node) => `  server ${node.id} 127.0.0.1:${node.port} check`),
    '',
  ].join('\n');
}

export interface Balancer {
  url: string;
  child: ChildProcess;
  /** What HAProxy wrote to stderr (its warnings and alerts). */
  stderr: string[];
  stop(): void;
}

/**
 * Starts HAProxy (`-db`: in the foreground, as a child) with {@link haproxyConfig} written to
 * `dir`, and waits until `/ready` answers 200 through it (so at least one node is up).
 */
export async function startBalancer(options: {
  port: number;
  backends: readonly Backend[];
  dir: string;
  /** An API key of the nodes, for their `/ready` (see {@link haproxyConfig}). */
  checkKey?: string;
}): Promise<Balancer> {
  const configFile = path.join(options.dir, `haproxy-${options.port}.cfg`);
  writeFileSync(configFile, haproxyConfig(options.port, options.backends, options.checkKey));
  const checkHeaders: Record<string, string> = options.checkKey
    ? { Authorization: `Bearer ${options.checkKey}` }
    : {};
  const child = spawn(HAPROXY, ['-f', configFile, '-db'], { stdio: ['ignore', 'ignore', 'pipe'] });
  const stderr: string[] = [];
  child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk.toString('utf8')));
  // A missing binary is an 'error' event: unhandled, it would end the process.
  let failed: Error | undefined;
  child.once('error', (error) => {
    failed = error;
  });
  const url = `http://127.0.0.1:${options.port}`;
  for (let attempt = 0; ; attempt += 1) {
    if (failed) {
      throw new Error(
        `HAProxy did not start (${HAPROXY}: ${failed.message}); \`npm test\` provisions it (tools/provision), or set COGNITION_TEST_HAPROXY`,
      );
    }
    const up = await fetch(`${url}/ready`, { headers: checkHeaders }).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (attempt > 200) {
      child.kill('SIGKILL');
      throw new Error(`haproxy did not start: ${stderr.join('')}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { url, child, stderr, stop: () => child.kill('SIGKILL') };
}
