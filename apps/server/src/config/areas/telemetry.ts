import type { AreaBuilder, SettingsReader } from '../settings';
import { need } from '../settings';
import type { ServerConfig } from '../types';
import { parseOtlpHeaders } from '../values';

/**
 * `/metrics`, tracing and the slow-request threshold of the request log. Tracing is on when an OTLP endpoint is set (the traces endpoint as
 * given, else `<OTEL_EXPORTER_OTLP_ENDPOINT>/v1/traces`, as the OpenTelemetry specification
 * says) and `OTEL_SDK_DISABLED` is not true.
 */
export function readTelemetry(
  settings: SettingsReader,
): AreaBuilder<Pick<ServerConfig, 'telemetry' | 'logSlowRequestMs'>> {
  const slowRequestMs = settings.read('COGNITION_LOG_SLOW_REQUEST_MS');
  const metricsEnabled = settings.read('COGNITION_METRICS_ENABLED');
  const metricsToken = settings.read('COGNITION_METRICS_TOKEN');
  const disabled = settings.read('OTEL_SDK_DISABLED');
  const endpoint = settings.read('OTEL_EXPORTER_OTLP_ENDPOINT');
  const tracesEndpoint = settings.read('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const protocol = settings.read('OTEL_EXPORTER_OTLP_PROTOCOL');
  const headerProblems: string[] = [];
  const headers = parseOtlpHeaders(
    settings.read('OTEL_EXPORTER_OTLP_HEADERS') ?? '',
    headerProblems,
  );
  for (const problem of headerProblems) settings.invalid('OTEL_EXPORTER_OTLP_HEADERS', problem);
  const serviceName = settings.read('OTEL_SERVICE_NAME');
  const exportDelayMs = settings.read('OTEL_BSP_SCHEDULE_DELAY');
  const tracesUrl =
    tracesEndpoint ?? (endpoint === undefined ? null : `${endpoint.replace(/\/+$/, '')}/v1/traces`);
  return () => ({
    logSlowRequestMs: need(slowRequestMs),
    telemetry: {
      metrics: { enabled: need(metricsEnabled), token: metricsToken ?? null },
      tracing: {
        tracesUrl: need(disabled) ? null : tracesUrl,
        protocol: need(protocol),
        headers,
        serviceName: need(serviceName),
        exportDelayMs: need(exportDelayMs),
      },
    },
  });
}
