import type { EventLog, RunObserver, ScheduleObserver } from '@cognition/runtime';
import { NOOP_RUN_OBSERVER, NOOP_SCHEDULE_OBSERVER } from '@cognition/runtime';
import type { ExecutionBackendFactory } from '@cognition/sandbox';
import type { StorageBackend } from '@cognition/storage';
import type { Logger } from 'pino';
import type { TelemetryConfig } from '../config';
import { instrumentEventLog, instrumentSandbox, instrumentStorage } from './instrument';
import { ServerMetrics } from './metrics';
import { MetricsRunObserver } from './run-observer';
import { MetricsScheduleObserver } from './schedule-observer';
import type { Tracing } from './tracing';

export { ServerMetrics } from './metrics';
export type { MetricsSources } from './metrics';
export { MetricsRunObserver } from './run-observer';
export { httpTelemetry, metricsRoute, routePattern, METRICS_PATH } from './http';
export type { Tracing } from './tracing';

/**
 * The server's telemetry, composed once per server: the Prometheus registry and series (null
 * when `COGNITION_METRICS_ENABLED=false`), the trace pipeline (null unless an OTLP endpoint is
 * configured), the run observer the runtime reports to, and the decorators that measure the
 * ports the server composes.
 */
export interface ServerTelemetry {
  metrics: ServerMetrics | null;
  tracing: Tracing | null;
  /** Whether spans are recorded (the HTTP layer skips its span otherwise). */
  tracingOn: boolean;
  /** `COGNITION_METRICS_TOKEN`, for the `/metrics` route. */
  metricsToken: string | null;
  observer: RunObserver;
  /** What the scheduler loop reports (fires, misfires, lag). */
  scheduleObserver: ScheduleObserver;
  storage: (storage: StorageBackend) => StorageBackend;
  sandbox: (sandbox: ExecutionBackendFactory) => ExecutionBackendFactory;
  eventLog: (log: EventLog) => EventLog;
  /** Exports the spans still buffered and unregisters the trace pipeline. */
  shutdown: () => Promise<void>;
}

export async function createServerTelemetry(
  config: TelemetryConfig,
  logger: Logger,
): Promise<ServerTelemetry> {
  const metrics = config.metrics.enabled ? new ServerMetrics() : null;
  // The trace SDK and its exporters are loaded only when tracing is on (a large module graph
  // every start would otherwise pay for).
  const tracing =
    config.tracing.tracesUrl === null
      ? null
      : (await import('./tracing')).startTracing(config.tracing, logger);
  const measures = { metrics, tracing: tracing !== null };
  const measured = metrics !== null || tracing !== null;
  return {
    metrics,
    tracing,
    tracingOn: tracing !== null,
    metricsToken: config.metrics.token,
    observer: metrics ? new MetricsRunObserver(metrics) : NOOP_RUN_OBSERVER,
    scheduleObserver: metrics ? new MetricsScheduleObserver(metrics) : NOOP_SCHEDULE_OBSERVER,
    storage: (storage) => (measured ? instrumentStorage(storage, measures) : storage),
    sandbox: (sandbox) => (measured ? instrumentSandbox(sandbox, measures) : sandbox),
    eventLog: (log) => (metrics ? instrumentEventLog(log, metrics) : log),
    shutdown: () => tracing?.shutdown() ?? Promise.resolve(),
  };
}
