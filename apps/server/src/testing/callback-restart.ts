import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { FakeExecutionBackendFactory } from '@cognition/runtime/testing';
import pino from 'pino';
import { loadConfig } from '../config';
import type { RunningServer } from '../composition/server';
import { startServer } from '../composition/server';

/**
 * A callback receiver on loopback answering the given statuses in turn (200 once they run out);
 * `deliveries` holds each request's `X-Cognition-Delivery` header, in order.
 */
export async function callbackReceiver(statuses: number[]) {
  const deliveries: (string | undefined)[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      deliveries.push(req.headers['x-cognition-delivery'] as string | undefined);
      res.statusCode = statuses.shift() ?? 200;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    deliveries,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * A server on SQLite in a temp workspace (the default) that a spec can stop and start again on
 * the same data: no LLM provider, so every run fails at once and its completion callback is due
 * like any other run's (3 attempts, `backoffSeconds` apart, loopback receivers allowed).
 */
export function restartableCallbackServer(backoffSeconds: string) {
  const workspace = mkdtempSync(path.join(os.tmpdir(), 'cognition-callbacks-'));
  const config = loadConfig(
    {
      COGNITION_PORT: '0',
      COGNITION_CALLBACK_MAX_ATTEMPTS: '3',
      COGNITION_CALLBACK_ALLOW_PRIVATE_NETWORK: 'true',
      COGNITION_CALLBACK_BACKOFF_SECONDS: backoffSeconds,
    },
    workspace,
  );
  let running: RunningServer | undefined;
  return {
    workspace,
    config,
    async start(): Promise<RunningServer> {
      running = await startServer(config, {
        logger: pino({ level: 'silent' }),
        sandbox: new FakeExecutionBackendFactory(),
      });
      return running;
    },
    async cleanup(): Promise<void> {
      await running?.shutdown();
      rmSync(workspace, { recursive: true, force: true });
    },
  };
}
