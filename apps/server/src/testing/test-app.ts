import { createMemoryStorage } from '@cognition/storage-memory';
import type { StorageBackend } from '@cognition/storage';
import type { Express } from 'express';
import { Writable } from 'node:stream';
import type { HttpConfig, ServerState } from '../app';
import { createApp } from '../app';
import { createLogger } from '../logger';

export interface TestApp {
  app: Express;
  storage: StorageBackend;
  state: ServerState;
  /** Every JSON log line written so far. */
  logs(): Record<string, unknown>[];
}

/** `createApp` on memory storage with logs captured in memory (for supertest specs). */
export async function createTestApp(config: Partial<HttpConfig> = {}): Promise<TestApp> {
  const storage = createMemoryStorage();
  await storage.initialize();
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      callback();
    },
  });
  const state: ServerState = { shuttingDown: false };
  const app = createApp({
    config: {
      scoping: { enabled: false, keys: [] },
      apiKeys: [],
      corsOrigins: [],
      maxBodyBytes: 64 * 1024,
      ...config,
    },
    services: { storage, breakers: { snapshots: () => [] }, version: '0.0.0-test' },
    logger: createLogger('info', sink),
    state,
  });
  return {
    app,
    storage,
    state,
    logs: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}
