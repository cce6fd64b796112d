import os from 'node:os';
import type { AreaBuilder, SettingsReader } from '../settings';
import { need } from '../settings';
import type { ServerConfig } from '../types';

/** Several nodes on one PostgreSQL + Redis (`COGNITION_REDIS_URL`); none set: one node. */
export function readCluster(settings: SettingsReader): AreaBuilder<Pick<ServerConfig, 'cluster'>> {
  const redisUrl = settings.read('COGNITION_REDIS_URL');
  const leaseSeconds = settings.read('COGNITION_RUN_LEASE_SECONDS');
  const keyPrefix = settings.read('COGNITION_REDIS_KEY_PREFIX');
  const nodeId = settings.read('COGNITION_NODE_ID') ?? `${os.hostname()}-${process.pid}`;
  const backend = settings.read('COGNITION_PERSISTENCE_BACKEND');
  if (redisUrl !== undefined && backend !== undefined && backend !== 'postgres') {
    settings.check(
      `COGNITION_REDIS_URL: the multi-node mode needs COGNITION_PERSISTENCE_BACKEND=postgres (every node shares one database); ${backend} is local to one process`,
    );
  }
  return () => ({
    cluster:
      redisUrl === undefined
        ? null
        : {
            redisUrl,
            keyPrefix: need(keyPrefix),
            nodeId,
            leaseMs: Math.round(need(leaseSeconds) * 1000),
          },
  });
}
