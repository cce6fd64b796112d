import os from 'node:os';
import type { AreaBuilder, SettingsReader } from '../settings';
import { need } from '../settings';
import type { ServerConfig } from '../types';

/** The scheduler loop of this node (docs/schedules.md). */
export function readSchedules(
  settings: SettingsReader,
): AreaBuilder<Pick<ServerConfig, 'schedules'>> {
  const enabled = settings.read('COGNITION_SCHEDULES_ENABLED');
  const poll = settings.read('COGNITION_SCHEDULES_POLL_SECONDS');
  const grace = settings.read('COGNITION_SCHEDULES_MISFIRE_GRACE_SECONDS');
  const claimTimeout = settings.read('COGNITION_SCHEDULES_CLAIM_TIMEOUT_SECONDS');
  const lookAhead = settings.read('COGNITION_SCHEDULES_LOOKAHEAD_SECONDS');
  // The same default as the cluster's node id: the fires record which node claimed them.
  const nodeId = settings.read('COGNITION_NODE_ID') ?? `${os.hostname()}-${process.pid}`;
  return () => ({
    schedules: {
      enabled: need(enabled),
      pollMs: Math.round(need(poll) * 1000),
      misfireGraceMs: Math.round(need(grace) * 1000),
      claimTimeoutMs: Math.round(need(claimTimeout) * 1000),
      lookAheadMs: Math.round(need(lookAhead) * 1000),
      nodeId,
    },
  });
}
