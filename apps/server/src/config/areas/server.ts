import type { AreaBuilder, Env, SettingsReader } from '../settings';
import { need } from '../settings';
import type { ServerConfig } from '../types';
import { list } from '../values';

type ServerArea = Pick<
  ServerConfig,
  | 'host'
  | 'port'
  | 'workspaceRoot'
  | 'corsOrigins'
  | 'maxBodyBytes'
  | 'logLevel'
  | 'logFormat'
  | 'shutdownGraceMs'
  | 'keepAliveTimeoutMs'
>;

/** The process: where it listens, its workspace, what browsers and bodies it accepts, its logs, its connections' lifetime, its shutdown. */
export function readServer(settings: SettingsReader): AreaBuilder<ServerArea> {
  const host = settings.read('COGNITION_HOST');
  const port = settings.read('COGNITION_PORT');
  const workspaceRoot = settings.workspaceRoot();
  const corsOrigins = list(settings.read('COGNITION_CORS_ORIGINS') ?? '');
  const maxBodyBytes = settings.read('COGNITION_MAX_BODY_BYTES');
  const logLevel = settings.read('COGNITION_LOG_LEVEL');
  const logFormat = settings.read('COGNITION_LOG_FORMAT');
  const graceSeconds = settings.read('COGNITION_SHUTDOWN_GRACE_SECONDS');
  const keepAliveSeconds = settings.read('COGNITION_KEEP_ALIVE_TIMEOUT_SECONDS');
  for (const origin of corsOrigins) {
    if (origin !== '*' && !isOrigin(origin)) {
      settings.check(
        `COGNITION_CORS_ORIGINS: "${origin}" is not an origin (scheme://host[:port], or *)`,
      );
    }
  }
  return () => ({
    host: need(host),
    port: need(port),
    workspaceRoot,
    corsOrigins,
    maxBodyBytes: need(maxBodyBytes),
    logLevel: need(logLevel),
    logFormat: need(logFormat),
    shutdownGraceMs: Math.round(need(graceSeconds) * 1000),
    keepAliveTimeoutMs: Math.round(need(keepAliveSeconds) * 1000),
  });
}

function isOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === value;
  } catch {
    return false;
  }
}

/** Base URL of the local server for `cognition health`, from `COGNITION_PORT` only. */
export function healthUrlFromEnv(env: Env): string {
  const port = /^\d{1,5}$/.test(env['COGNITION_PORT'] ?? '') ? env['COGNITION_PORT'] : '8000';
  return `http://127.0.0.1:${port}`;
}
