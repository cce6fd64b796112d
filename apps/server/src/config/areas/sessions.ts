import type { AreaBuilder, SettingsReader } from '../settings';
import { need } from '../settings';
import type { ServerConfig } from '../types';

/** The session lifecycle: abandoned threshold, idle TTL and its sweep, checkpoint retention. */
export function readSessions(
  settings: SettingsReader,
): AreaBuilder<Pick<ServerConfig, 'sessions'>> {
  const abandonAfter = settings.read('COGNITION_SESSION_ABANDON_AFTER_SECONDS');
  const ttl = settings.read('COGNITION_SESSION_TTL_SECONDS');
  const sweepInterval = settings.read('COGNITION_SESSION_SWEEP_INTERVAL_SECONDS');
  const retention = settings.read('COGNITION_CHECKPOINT_RETENTION');
  return () => ({
    sessions: {
      abandonAfterSeconds: need(abandonAfter),
      ttlSeconds: need(ttl),
      sweepIntervalMs: need(sweepInterval) * 1000,
      checkpointRetention: need(retention),
    },
  });
}
