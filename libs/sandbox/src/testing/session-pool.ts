import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ExecutionBackend, ExecutionBackendFactory, SessionOptions } from '../port';

/**
 * A temporary session: its own root under os.tmpdir() and, beside it, an `outside` directory
 * holding `secret.txt` (the target of escape attempts).
 */
export interface ConformanceSession {
  backend: ExecutionBackend;
  sessionId: string;
  root: string;
  outside: string;
}

/**
 * Creates sessions for a conformance run and removes them (and their directories) afterwards.
 */
export class SessionPool {
  private readonly sessions: ConformanceSession[] = [];
  private readonly dirs: string[] = [];

  constructor(private readonly factory: () => ExecutionBackendFactory) {}

  async create(prefix = 'conf', options: SessionOptions = {}): Promise<ConformanceSession> {
    const base = await fs.mkdtemp(path.join(os.tmpdir(), 'cognition-sandbox-'));
    this.dirs.push(base);
    const root = path.join(base, 'workspace');
    const outside = path.join(base, 'outside');
    await fs.mkdir(root);
    await fs.mkdir(outside);
    await fs.writeFile(path.join(outside, 'secret.txt'), 'top secret\n');
    const sessionId = `${prefix}-${randomUUID().slice(0, 12)}`;
    const backend = await this.factory().forSession(sessionId, root, options);
    const session = { backend, sessionId, root, outside };
    this.sessions.push(session);
    return session;
  }

  async cleanup(): Promise<void> {
    const sessions = this.sessions.splice(0);
    await Promise.all(sessions.map((s) => this.factory().release(s.sessionId)));
    const dirs = this.dirs.splice(0);
    await Promise.all(dirs.map((dir) => fs.rm(dir, { recursive: true, force: true })));
  }
}
