import type { AreaBuilder, SettingsReader } from '../settings';
import { need } from '../settings';
import type { ServerConfig } from '../types';

type RunsArea = Pick<
  ServerConfig,
  'maxConcurrentRuns' | 'runRecovery' | 'maxRunRecoveries' | 'rateLimits' | 'sse' | 'callbacks'
>;

/** Agent runs: how many at once, recovery, per-tenant budgets, their event streams, their callbacks. */
export function readRuns(settings: SettingsReader): AreaBuilder<RunsArea> {
  const maxConcurrentRuns = settings.read('COGNITION_MAX_CONCURRENT_RUNS');
  const runRecovery = settings.read('COGNITION_RUN_RECOVERY');
  const maxRunRecoveries = settings.read('COGNITION_RUN_MAX_RECOVERIES');
  const requestsPerMinute = settings.read('COGNITION_RATE_LIMIT_REQUESTS_PER_MINUTE');
  const runsPerMinute = settings.read('COGNITION_RATE_LIMIT_RUNS_PER_MINUTE');
  const sseBufferSize = settings.read('COGNITION_SSE_BUFFER_SIZE');
  const eventLog = settings.read('COGNITION_EVENT_LOG');
  const sseRetry = settings.read('COGNITION_SSE_RETRY_INTERVAL');
  const sseHeartbeat = settings.read('COGNITION_SSE_HEARTBEAT_INTERVAL');
  const callbackSecret = settings.read('COGNITION_CALLBACK_SECRET');
  const callbackAttempts = settings.read('COGNITION_CALLBACK_MAX_ATTEMPTS');
  const callbackBackoff = settings.read('COGNITION_CALLBACK_BACKOFF_SECONDS');
  const callbackMaxBackoff = settings.read('COGNITION_CALLBACK_MAX_BACKOFF_SECONDS');
  const callbackTimeout = settings.read('COGNITION_CALLBACK_TIMEOUT_SECONDS');
  const callbackAllowPrivate = settings.read('COGNITION_CALLBACK_ALLOW_PRIVATE_NETWORK');
  if (
    callbackBackoff !== undefined &&
    callbackMaxBackoff !== undefined &&
    callbackMaxBackoff < callbackBackoff
  ) {
    settings.check(
      'COGNITION_CALLBACK_MAX_BACKOFF_SECONDS: must not be below COGNITION_CALLBACK_BACKOFF_SECONDS',
    );
  }
  return () => ({
    maxConcurrentRuns: need(maxConcurrentRuns),
    runRecovery: need(runRecovery),
    maxRunRecoveries: need(maxRunRecoveries),
    rateLimits: { requests: requestsPerMinute ?? null, runs: runsPerMinute ?? null },
    sse: {
      bufferSize: need(sseBufferSize),
      eventLog: need(eventLog),
      retryMs: need(sseRetry),
      heartbeatMs: Math.round(need(sseHeartbeat) * 1000),
    },
    callbacks: {
      secret: callbackSecret ?? null,
      maxAttempts: need(callbackAttempts),
      initialDelayMs: Math.round(need(callbackBackoff) * 1000),
      maxDelayMs: Math.round(need(callbackMaxBackoff) * 1000),
      timeoutMs: Math.round(need(callbackTimeout) * 1000),
      allowPrivateNetwork: need(callbackAllowPrivate),
    },
  });
}
