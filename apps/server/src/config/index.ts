import { readAuth } from './areas/auth';
import { readCluster } from './areas/cluster';
import { readLlm } from './areas/llm';
import { readNetwork } from './areas/network';
import { readRuns } from './areas/runs';
import { readSchedules } from './areas/schedules';
import { readSandbox } from './areas/sandbox';
import { readSecrets } from './areas/secrets';
import { readServer } from './areas/server';
import { readSessions } from './areas/sessions';
import type { Env } from './settings';
import { ConfigError, SettingsReader } from './settings';
import { readStorage } from './areas/storage';
import { readTelemetry } from './areas/telemetry';
import { readTools } from './areas/tools';
import type { ServerConfig } from './types';

export { apiKeyFingerprint } from './areas/auth';
export { healthUrlFromEnv } from './areas/server';
export { isLoopbackBind, networkWarnings } from './areas/network';
export { ConfigError, SETTINGS } from './settings';
export type { Env } from './settings';
export { describePersistence } from './areas/storage';
export * from './types';

/**
 * Parses the configuration from `env` (default `process.env`), one reader per area. Throws
 * `ConfigError` listing every invalid setting of every area at once; never falls back silently
 * (an unknown backend is an error naming the accepted values).
 */
export function loadConfig(env: Env = process.env, cwd: string = process.cwd()): ServerConfig {
  const settings = new SettingsReader(env, cwd);
  const areas = [
    readServer(settings),
    readStorage(settings),
    readAuth(settings),
    readRuns(settings),
    readSessions(settings),
    readSandbox(settings),
    readLlm(settings),
    readTools(settings),
    readTelemetry(settings),
    readCluster(settings),
    readNetwork(settings),
    readSecrets(settings),
    readSchedules(settings),
  ] as const;
  const problems = settings.problems();
  if (problems.length > 0) throw new ConfigError(problems);
  const [
    server,
    storage,
    auth,
    runs,
    sessions,
    sandbox,
    llm,
    tools,
    telemetry,
    cluster,
    network,
    secrets,
    schedules,
  ] = areas;
  return {
    ...server(),
    ...storage(),
    ...auth(),
    ...runs(),
    ...sessions(),
    ...sandbox(),
    ...llm(),
    ...tools(),
    ...telemetry(),
    ...cluster(),
    ...network(),
    ...secrets(),
    ...schedules(),
  };
}
