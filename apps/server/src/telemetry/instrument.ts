import type { EventLog } from '@cognition/runtime';
import type { ExecutionBackend, ExecutionBackendFactory, ExecuteResult } from '@cognition/sandbox';
import type { StorageBackend } from '@cognition/storage';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Attributes } from '@opentelemetry/api';
import { performance } from 'node:perf_hooks';
import type { ServerMetrics } from './metrics';

/**
 * Decorators that measure the ports the server composes, without touching their
 * implementations: storage operations, sandbox executions, event-log subscriptions. Each one
 * times the call, records it on the metrics, and — when tracing is on — a span as a child of
 * whatever is active (the run, the tool call, the HTTP request).
 */

const TRACER_NAME = '@cognition/server';

/** What a decorator records: the series (none when metrics are off) and whether spans are wanted. */
export interface Measures {
  metrics: ServerMetrics | null;
  /** false when no trace pipeline runs: no span is even created. */
  tracing: boolean;
}

function errorText(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  try {
    return JSON.stringify(error) ?? 'unknown error';
  } catch {
    return 'unknown error';
  }
}

function isPromise(value: unknown): value is Promise<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/**
 * A span for a call that already started at `startTime` (`performance.timeOrigin` based) and
 * just settled: created afterwards, so calls that turn out synchronous make no span at all.
 */
function recordSpan(
  name: string,
  startTime: number,
  attributes: Attributes,
  error: unknown,
  kind: SpanKind = SpanKind.INTERNAL,
): void {
  const tracer = trace.getTracer(TRACER_NAME);
  const span = tracer.startSpan(name, {
    kind,
    attributes,
    startTime: performance.timeOrigin + startTime,
  });
  if (error !== undefined) {
    const message = errorText(error);
    span.recordException(error instanceof Error ? error : message);
    span.setStatus({ code: SpanStatusCode.ERROR, message });
  }
  span.end(performance.timeOrigin + performance.now());
}

/**
 * Wraps every method of `target` so each call that returns a promise is timed as
 * `<area>.<method>`; properties and synchronous results pass through unchanged. Methods run
 * on the original object (private fields keep working), and one wrapper per method is kept.
 */
function timedMethods<T extends object>(
  target: T,
  area: string,
  observe: (operation: string, startedAt: number, error: unknown) => void,
): T {
  const wrappers = new Map<PropertyKey, { original: unknown; wrapper: unknown }>();
  return new Proxy(target, {
    get(object, property) {
      const value: unknown = Reflect.get(object, property, object);
      if (
        typeof value !== 'function' ||
        typeof property !== 'string' ||
        property === 'constructor'
      ) {
        return value;
      }
      const cached = wrappers.get(property);
      if (cached?.original === value) return cached.wrapper;
      const method = value as (...args: unknown[]) => unknown;
      const operation = area === '' ? property : `${area}.${property}`;
      const wrapper = (...args: unknown[]): unknown => {
        const startedAt = performance.now();
        const result = method.apply(object, args);
        if (!isPromise(result)) return result;
        return result.then(
          (resolved) => {
            observe(operation, startedAt, undefined);
            return resolved;
          },
          (error: unknown) => {
            observe(operation, startedAt, error ?? new Error('rejected'));
            throw error;
          },
        );
      };
      wrappers.set(property, { original: value, wrapper });
      return wrapper;
    },
  });
}

/** OpenTelemetry's `db.system.name` of each backend kind. */
const DB_SYSTEM: Record<StorageBackend['kind'], string> = {
  memory: 'memory',
  sqlite: 'sqlite',
  postgres: 'postgresql',
};

/**
 * The storage backend with every store operation (`sessions.get`, `runs.update`,
 * `checkpointer.put`, …) timed into `cognition_storage_operation_duration_seconds` and traced as
 * a `storage <operation>` span. Stores added to the port later are covered without change:
 * every object-valued property is treated as a store.
 */
export function instrumentStorage(
  storage: StorageBackend,
  { metrics, tracing }: Measures,
): StorageBackend {
  const backend = storage.kind;
  const observe = (operation: string, startedAt: number, error: unknown) => {
    const seconds = (performance.now() - startedAt) / 1000;
    metrics?.storageDuration.observe(
      { backend, operation, outcome: error === undefined ? 'ok' : 'error' },
      seconds,
    );
    if (!tracing) return;
    recordSpan(
      `storage ${operation}`,
      startedAt,
      { 'db.system.name': DB_SYSTEM[backend] ?? backend, 'db.operation.name': operation },
      error,
      SpanKind.CLIENT,
    );
  };
  const stores = new Map<PropertyKey, { original: object; proxy: object }>();
  const top = timedMethods(storage, '', observe);
  return new Proxy(top, {
    get(object, property, receiver) {
      const value: unknown = Reflect.get(storage, property, storage);
      if (typeof value !== 'object' || value === null || typeof property !== 'string') {
        const own: unknown = Reflect.get(object, property, receiver);
        return own;
      }
      const cached = stores.get(property);
      if (cached?.original === value) return cached.proxy;
      const proxy = timedMethods(value, property, observe);
      stores.set(property, { original: value, proxy });
      return proxy;
    },
  });
}

function exitLabel(result: ExecuteResult): string {
  return result.timedOut ? 'timeout' : String(result.exitCode);
}

/**
 * The sandbox factory whose backends count and time every `execute` into
 * `cognition_sandbox_executions_total{backend,exit}` and trace it as a `sandbox.exec` span.
 */
export function instrumentSandbox(
  factory: ExecutionBackendFactory,
  { metrics, tracing }: Measures,
): ExecutionBackendFactory {
  const instrumentBackend = (backend: ExecutionBackend): ExecutionBackend =>
    new Proxy(backend, {
      get(object, property) {
        const value: unknown = Reflect.get(object, property, object);
        if (property !== 'execute' || typeof value !== 'function') {
          return typeof value === 'function' ? (value as () => unknown).bind(object) : value;
        }
        const execute = value as ExecutionBackend['execute'];
        return async (...args: Parameters<ExecutionBackend['execute']>) => {
          const startedAt = performance.now();
          const kind = object.kind;
          let result: ExecuteResult | undefined;
          let failure: unknown;
          try {
            result = await execute.apply(object, args);
            return result;
          } catch (error) {
            failure = error ?? new Error('rejected');
            throw error;
          } finally {
            const exit = result ? exitLabel(result) : 'error';
            metrics?.sandboxExecutions.inc({ backend: kind, exit });
            metrics?.sandboxDuration.observe(
              { backend: kind },
              (performance.now() - startedAt) / 1000,
            );
            if (tracing) {
              recordSpan(
                'sandbox.exec',
                startedAt,
                {
                  'cognition.sandbox.backend': kind,
                  ...(result
                    ? {
                        'process.exit.code': result.exitCode,
                        'cognition.sandbox.timed_out': result.timedOut,
                      }
                    : {}),
                },
                failure ??
                  (result && result.exitCode !== 0 ? new Error(`exit ${exit}`) : undefined),
              );
            }
          }
        };
      },
    });
  return new Proxy(factory, {
    get(object, property) {
      const value: unknown = Reflect.get(object, property, object);
      if (typeof value !== 'function') return value;
      if (property !== 'forSession') return (value as () => unknown).bind(object);
      const forSession = value as ExecutionBackendFactory['forSession'];
      return async (...args: Parameters<ExecutionBackendFactory['forSession']>) =>
        instrumentBackend(await forSession.apply(object, args));
    },
  });
}

/** The event log with its live subscriptions counted in `cognition_event_subscriptions`. */
export function instrumentEventLog(log: EventLog, metrics: ServerMetrics): EventLog {
  return new Proxy(log, {
    get(object, property) {
      const value: unknown = Reflect.get(object, property, object);
      if (typeof value !== 'function') return value;
      if (property !== 'subscribe') return (value as () => unknown).bind(object);
      const subscribe = value as EventLog['subscribe'];
      return (...args: Parameters<EventLog['subscribe']>) => {
        const off = subscribe.apply(object, args);
        metrics.eventSubscriptions.inc();
        let open = true;
        return () => {
          if (open) metrics.eventSubscriptions.dec();
          open = false;
          off();
        };
      };
    },
  });
}
