import { ConfigError, loadConfig } from '..';
import type { Env } from '..';

function problemsOf(env: Env): string[] {
  try {
    loadConfig(env, '/srv');
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe('telemetry settings', () => {
  it('defaults: /metrics on without a token, tracing off', () => {
    expect(loadConfig({}, '/srv').telemetry).toEqual({
      metrics: { enabled: true, token: null },
      tracing: {
        tracesUrl: null,
        protocol: 'http/protobuf',
        headers: {},
        serviceName: 'cognition',
        exportDelayMs: 5000,
      },
    });
  });

  it('turns tracing on with OTEL_EXPORTER_OTLP_ENDPOINT, exporting to <endpoint>/v1/traces', () => {
    const { tracing } = loadConfig(
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/',
        OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=s3cr%3Dt, x-tenant = eu1',
        OTEL_SERVICE_NAME: 'cognition-eu1',
        OTEL_BSP_SCHEDULE_DELAY: '250',
      },
      '/srv',
    ).telemetry;
    expect(tracing).toEqual({
      tracesUrl: 'http://collector:4318/v1/traces',
      protocol: 'http/protobuf',
      headers: { 'x-api-key': 's3cr=t', 'x-tenant': 'eu1' },
      serviceName: 'cognition-eu1',
      exportDelayMs: 250,
    });
  });

  it('uses OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given, and OTEL_SDK_DISABLED turns tracing off', () => {
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example.com/otlp/spans',
    };
    expect(loadConfig(env, '/srv').telemetry.tracing.tracesUrl).toBe(
      'https://traces.example.com/otlp/spans',
    );
    const off = loadConfig({ ...env, OTEL_SDK_DISABLED: 'true' }, '/srv');
    expect(off.telemetry.tracing.tracesUrl).toBeNull();
  });

  it('takes a metrics token and can switch /metrics off', () => {
    const config = loadConfig(
      { COGNITION_METRICS_TOKEN: 'scrape-token-0123456789', COGNITION_METRICS_ENABLED: 'false' },
      '/srv',
    );
    expect(config.telemetry.metrics).toEqual({ enabled: false, token: 'scrape-token-0123456789' });
  });

  it('lists every bad telemetry value, never echoing a token or a header value', () => {
    const problems = problemsOf({
      COGNITION_METRICS_TOKEN: 'short-secret',
      COGNITION_METRICS_ENABLED: 'perhaps',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      OTEL_EXPORTER_OTLP_HEADERS:
        'authorization=Bearer%20hidden-value,no-equals-sign,bad name=x,y=%E0%A4%A',
      OTEL_BSP_SCHEDULE_DELAY: '0',
    });
    expect(problems).toEqual([
      'COGNITION_METRICS_ENABLED: expected true or false (got "perhaps")',
      'COGNITION_METRICS_TOKEN: must be at least 16 characters (the value is not shown)',
      'OTEL_EXPORTER_OTLP_ENDPOINT: expected an http:// or https:// URL (got "collector:4318")',
      'OTEL_EXPORTER_OTLP_PROTOCOL: expected one of http/protobuf, http/json (got "grpc")',
      expect.stringMatching(/^OTEL_EXPORTER_OTLP_HEADERS entry 2: expected name=value/) as unknown,
      expect.stringMatching(/^OTEL_EXPORTER_OTLP_HEADERS entry 3: /) as unknown,
      expect.stringMatching(/^OTEL_EXPORTER_OTLP_HEADERS entry 4: /) as unknown,
      'OTEL_BSP_SCHEDULE_DELAY: expected an integer between 1 and 600000 (got "0")',
    ]);
    for (const problem of problems) {
      expect(problem).not.toMatch(/short-secret|hidden-value/);
    }
  });
});
