import type { Context, DiagLogger } from '@opentelemetry/api';
import { DiagLogLevel, context, diag, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as OTLPJsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OTLPProtoTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import type { Span, SpanProcessor } from '@opentelemetry/sdk-trace';
import type { Logger } from 'pino';
import type { TracingConfig } from '../config';
import { VERSION } from '../version';

/**
 * Copies the `cognition.*` baggage entries (request id from the HTTP layer, session and run id
 * from the runtime) onto every span as it starts, so storage and sandbox spans — which know
 * neither — carry them too. Baggage is never read from incoming requests (only the W3C trace
 * context propagator is installed), so a client cannot forge these attributes.
 */
class CognitionBaggageSpanProcessor implements SpanProcessor {
  onStart(span: Span, parentContext: Context): void {
    for (const [key, entry] of propagation.getBaggage(parentContext)?.getAllEntries() ?? []) {
      if (key.startsWith('cognition.')) span.setAttribute(key, entry.value);
    }
  }
  onEnd(): void {
    // Nothing to do when a span ends: the attributes were set at its start.
  }
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** The running trace pipeline; `shutdown` exports what is buffered and unregisters it. */
export interface Tracing {
  /** Exports every ended span now (tests, and before shutdown). */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

function diagLogger(logger: Logger): DiagLogger {
  const log = logger.child({ component: 'otel' });
  return {
    error: (message, ...args) => log.error({ args }, message),
    warn: (message, ...args) => log.warn({ args }, message),
    info: (message, ...args) => log.debug({ args }, message),
    debug: () => undefined,
    verbose: () => undefined,
  };
}

/**
 * Starts OpenTelemetry tracing when configured (`OTEL_EXPORTER_OTLP_ENDPOINT`): the trace SDK
 * with an AsyncLocalStorage context manager, the W3C trace-context propagator, and the
 * OTLP/HTTP exporter of the configured protocol (protobuf or JSON) behind a batch processor, registered globally so the runtime's and
 * the server's `@opentelemetry/api` calls record spans. Returns null when tracing is off (every
 * span call stays a no-op). One process, one pipeline: `shutdown` unregisters it.
 */
export function startTracing(config: TracingConfig, logger: Logger): Tracing | null {
  if (config.tracesUrl === null) return null;
  diag.setLogger(diagLogger(logger), DiagLogLevel.WARN);
  const options = { url: config.tracesUrl, headers: config.headers };
  const exporter =
    config.protocol === 'http/json'
      ? new OTLPJsonTraceExporter(options)
      : new OTLPProtoTraceExporter(options);
  const batch = new BatchSpanProcessor({ exporter, scheduledDelayMillis: config.exportDelayMs });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      'service.name': config.serviceName,
      'service.version': VERSION,
    }),
    spanProcessors: [new CognitionBaggageSpanProcessor(), batch],
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  logger.info(
    { tracesUrl: config.tracesUrl, protocol: config.protocol, serviceName: config.serviceName },
    `Tracing on: spans exported to ${config.tracesUrl} (OTLP ${config.protocol}) as ${config.serviceName}`,
  );
  let stopped: Promise<void> | undefined;
  return {
    flush: () => provider.forceFlush(),
    shutdown() {
      stopped ??= provider.shutdown().finally(() => {
        trace.disable();
        propagation.disable();
        context.disable();
        diag.disable();
      });
      return stopped;
    },
  };
}
