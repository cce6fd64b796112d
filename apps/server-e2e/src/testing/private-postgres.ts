import type { PrivatePostgres } from '@cognition/storage-prisma/testing';
import { startPrivatePostgres as startServer } from '@cognition/storage-prisma/testing';
import { REPO_ROOT } from './paths';
import { trackLogFile } from './process-logs';

export type { PrivatePostgres };

/**
 * A PostgreSQL server of one test alone (`@cognition/storage-prisma/testing`), whose log is
 * printed when a test fails.
 */
export function startPrivatePostgres(port: number): PrivatePostgres {
  const server = startServer({ port, repoRoot: REPO_ROOT });
  trackLogFile(`postgres :${port}`, server.logFile);
  return server;
}
