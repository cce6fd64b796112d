import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { CheckpointRetentionSchema } from '@cognition/contracts';
import {
  boolText,
  byteSizeText,
  enumText,
  httpUrlText,
  intText,
  list,
  parseOtlpHeaders,
  nodeIdText,
  positiveNumberText,
  redisUrlText,
  secretText,
} from './env-values';
import { mergeAdminKeys, parseApiKeys } from './api-keys';
export { apiKeyFingerprint } from './api-keys';

import type {
  LlmSettings,
  PersistenceConfig,
  ServerConfig,
  TelemetryConfig,
} from './server-config';
import {
  EVENT_LOG_KINDS,
  LLM_PROVIDER_KINDS,
  LOG_FORMATS,
  LOG_LEVELS,
  OTLP_PROTOCOLS,
  PERSISTENCE_BACKENDS,
  RUN_RECOVERY_MODES,
  SANDBOX_BACKENDS,
  WEB_SEARCH_PROVIDER_NAMES,
} from './server-config';

export * from './server-config';
/** Thrown by `loadConfig` with every invalid setting, so one restart fixes them all. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: string[]) {
    super(
      `Invalid configuration (${problems.length} problem${problems.length === 1 ? '' : 's'}):\n` +
        problems.map((p) => `  - ${p}`).join('\n'),
    );
  }
}

export type Env = Record<string, string | undefined>;

const SCOPE_KEY_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const MEMORY_LIMIT_PATTERN = /^\d+(\.\d+)?[bkmg]?$/i;

/**
 * Every setting: its environment variable, default and parser. The docs table
 * (docs/configuration.md) lists exactly these; a spec keeps the two in step.
 */
export const SETTINGS = {
  COGNITION_HOST: { default: '127.0.0.1', schema: z.string().trim().min(1, 'must not be empty') },
  COGNITION_PORT: { default: '8000', schema: intText(0, 65535) },
  COGNITION_WORKSPACE_ROOT: { default: '.', schema: z.string().trim().min(1, 'must not be empty') },
  COGNITION_PERSISTENCE_BACKEND: { default: 'sqlite', schema: enumText(PERSISTENCE_BACKENDS) },
  COGNITION_PERSISTENCE_URI: { default: undefined, schema: z.string().trim().min(1) },
  COGNITION_PERSISTENCE_POOL_SIZE: { default: '10', schema: intText(1, 1000) },
  COGNITION_SCOPING_ENABLED: { default: 'false', schema: boolText },
  COGNITION_SCOPE_KEYS: { default: 'user', schema: z.string() },
  COGNITION_CORS_ORIGINS: { default: '', schema: z.string() },
  COGNITION_API_KEYS: { default: '', schema: z.string() },
  COGNITION_ADMIN_API_KEYS: { default: '', schema: z.string() },
  COGNITION_MAX_BODY_BYTES: { default: '4mb', schema: byteSizeText },
  COGNITION_ARTIFACT_MAX_BYTES: { default: '10mb', schema: byteSizeText },
  COGNITION_LOG_LEVEL: { default: 'info', schema: enumText(LOG_LEVELS) },
  COGNITION_LOG_FORMAT: { default: 'auto', schema: enumText(LOG_FORMATS) },
  COGNITION_SHUTDOWN_GRACE_SECONDS: { default: '10', schema: positiveNumberText(3600) },
  COGNITION_MAX_CONCURRENT_RUNS: { default: '32', schema: intText(1, 10000) },
  COGNITION_SESSION_ABANDON_AFTER_SECONDS: { default: '1800', schema: intText(0, 315_360_000) },
  COGNITION_SESSION_TTL_SECONDS: { default: '0', schema: intText(0, 315_360_000) },
  COGNITION_SESSION_SWEEP_INTERVAL_SECONDS: { default: '60', schema: intText(1, 86_400) },
  COGNITION_CHECKPOINT_RETENTION: { default: 'all', schema: CheckpointRetentionSchema },
  COGNITION_SANDBOX_BACKEND: { default: 'local', schema: enumText(SANDBOX_BACKENDS) },
  COGNITION_DOCKER_IMAGE: {
    default: 'cognition-sandbox:latest',
    schema: z
      .string()
      .trim()
      .regex(/^[\w./:@-]+$/, 'expected a docker image reference'),
  },
  COGNITION_DOCKER_NETWORK: {
    default: 'none',
    schema: z
      .string()
      .trim()
      .regex(/^[\w.-]+$/, 'expected a docker network name'),
  },
  COGNITION_DOCKER_MEMORY_LIMIT: {
    default: '512m',
    schema: z.string().trim().regex(MEMORY_LIMIT_PATTERN, 'expected a size such as 512m or 2g'),
  },
  COGNITION_DOCKER_CPU_LIMIT: { default: '1.0', schema: positiveNumberText(1024) },
  COGNITION_DOCKER_TIMEOUT: { default: '300', schema: positiveNumberText(86400) },
  DOCKER_HOST: {
    default: undefined,
    schema: z
      .string()
      .trim()
      .regex(
        /^(unix:\/\/|tcp:\/\/|https?:\/\/)\S*$/,
        'expected unix:///path/to/docker.sock or tcp://host:port',
      ),
  },
  DOCKER_TLS_VERIFY: { default: 'false', schema: boolText },
  DOCKER_CERT_PATH: { default: undefined, schema: z.string().trim().min(1) },
  COGNITION_LLM_PROVIDER: { default: undefined, schema: enumText(LLM_PROVIDER_KINDS) },
  COGNITION_LLM_MODEL: { default: undefined, schema: z.string().trim().min(1).max(256) },
  OPENAI_API_KEY: { default: undefined, schema: secretText },
  ANTHROPIC_API_KEY: { default: undefined, schema: secretText },
  COGNITION_OPENAI_COMPATIBLE_BASE_URL: { default: undefined, schema: httpUrlText },
  COGNITION_OPENAI_COMPATIBLE_API_KEY: { default: undefined, schema: secretText },
  COGNITION_PROVIDERS_FILE: { default: undefined, schema: z.string().trim().min(1) },
  COGNITION_PRICES_FILE: { default: undefined, schema: z.string().trim().min(1) },
  COGNITION_SSE_BUFFER_SIZE: { default: '1000', schema: intText(10, 1_000_000) },
  COGNITION_EVENT_LOG: { default: 'durable', schema: enumText(EVENT_LOG_KINDS) },
  COGNITION_RUN_RECOVERY: { default: 'resume', schema: enumText(RUN_RECOVERY_MODES) },
  COGNITION_RUN_MAX_RECOVERIES: { default: '3', schema: intText(0, 100) },
  COGNITION_SSE_RETRY_INTERVAL: { default: '3000', schema: intText(100, 3_600_000) },
  COGNITION_SSE_HEARTBEAT_INTERVAL: { default: '15', schema: positiveNumberText(3600) },
  COGNITION_CALLBACK_SECRET: { default: undefined, schema: secretText },
  COGNITION_CALLBACK_MAX_ATTEMPTS: { default: '5', schema: intText(1, 20) },
  COGNITION_CALLBACK_BACKOFF_SECONDS: { default: '1', schema: positiveNumberText(3600) },
  COGNITION_CALLBACK_MAX_BACKOFF_SECONDS: { default: '30', schema: positiveNumberText(86400) },
  COGNITION_CALLBACK_TIMEOUT_SECONDS: { default: '10', schema: positiveNumberText(600) },
  COGNITION_CALLBACK_ALLOW_PRIVATE_NETWORK: { default: 'false', schema: boolText },
  COGNITION_WEB_FETCH_ALLOW_PRIVATE_NETWORK: { default: 'false', schema: boolText },
  COGNITION_WEB_SEARCH_PROVIDER: {
    default: undefined,
    schema: enumText(WEB_SEARCH_PROVIDER_NAMES),
  },
  COGNITION_WEB_SEARCH_URL: { default: undefined, schema: httpUrlText },
  COGNITION_MCP_SERVERS_FILE: { default: undefined, schema: z.string().trim().min(1) },
  COGNITION_WEB_SEARCH_API_KEY: { default: undefined, schema: secretText },
  COGNITION_REDIS_URL: { default: undefined, schema: redisUrlText },
  COGNITION_REDIS_KEY_PREFIX: { default: 'cognition:', schema: z.string().trim().min(1).max(64) },
  COGNITION_NODE_ID: { default: undefined, schema: nodeIdText },
  COGNITION_RUN_LEASE_SECONDS: { default: '15', schema: positiveNumberText(3600) },
  COGNITION_RATE_LIMIT_REQUESTS_PER_MINUTE: { default: undefined, schema: intText(1, 10_000_000) },
  COGNITION_RATE_LIMIT_RUNS_PER_MINUTE: { default: undefined, schema: intText(1, 10_000_000) },
  COGNITION_METRICS_ENABLED: { default: 'true', schema: boolText },
  COGNITION_METRICS_TOKEN: {
    default: undefined,
    schema: z.string().trim().min(16, 'must be at least 16 characters'),
  },
  OTEL_SDK_DISABLED: { default: 'false', schema: boolText },
  OTEL_EXPORTER_OTLP_ENDPOINT: { default: undefined, schema: httpUrlText },
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: { default: undefined, schema: httpUrlText },
  OTEL_EXPORTER_OTLP_PROTOCOL: { default: 'http/protobuf', schema: enumText(OTLP_PROTOCOLS) },
  OTEL_EXPORTER_OTLP_HEADERS: { default: '', schema: z.string() },
  OTEL_SERVICE_NAME: { default: 'cognition', schema: z.string().trim().min(1).max(256) },
  OTEL_BSP_SCHEDULE_DELAY: { default: '5000', schema: intText(1, 600_000) },
} as const;

type SettingName = keyof typeof SETTINGS;

/** Settings whose values are never echoed in a problem or a log line. */
const SECRET_SETTINGS: ReadonlySet<SettingName> = new Set<SettingName>([
  'OPENAI_API_KEY',
  'ANTHROPIC_API_KEY',
  'COGNITION_OPENAI_COMPATIBLE_API_KEY',
  'COGNITION_CALLBACK_SECRET',
  'COGNITION_METRICS_TOKEN',
  'OTEL_EXPORTER_OTLP_HEADERS',
]);
type SettingValue<N extends SettingName> = z.output<(typeof SETTINGS)[N]['schema']>;

/**
 * Parses the configuration from `env` (default `process.env`). Throws `ConfigError` listing
 * every invalid setting at once; never falls back silently (an unknown backend is an error
 * naming the accepted values).
 */
export function loadConfig(env: Env = process.env, cwd: string = process.cwd()): ServerConfig {
  const problems: string[] = [];

  function read<N extends SettingName>(name: N): SettingValue<N> | undefined {
    const setting = SETTINGS[name];
    const raw = env[name] === undefined || env[name] === '' ? setting.default : env[name];
    if (raw === undefined) return undefined;
    const result = (setting.schema as unknown as z.ZodType<SettingValue<N>>).safeParse(raw);
    if (result.success) return result.data;
    const message = result.error.issues[0]?.message ?? 'invalid value';
    problems.push(
      SECRET_SETTINGS.has(name)
        ? `${name}: ${message} (the value is not shown)`
        : `${name}: ${message} (got ${JSON.stringify(raw.slice(0, 80))})`,
    );
    return undefined;
  }

  const host = read('COGNITION_HOST');
  const port = read('COGNITION_PORT');
  const workspaceRoot = path.resolve(cwd, read('COGNITION_WORKSPACE_ROOT') ?? '.');
  const backend = read('COGNITION_PERSISTENCE_BACKEND');
  const uri = read('COGNITION_PERSISTENCE_URI');
  const poolSize = read('COGNITION_PERSISTENCE_POOL_SIZE');
  const scopingEnabled = read('COGNITION_SCOPING_ENABLED');
  const scopeKeys = list(read('COGNITION_SCOPE_KEYS') ?? '').map((k) => k.toLowerCase());
  const corsOrigins = list(read('COGNITION_CORS_ORIGINS') ?? '');
  const apiKeys = mergeAdminKeys(
    parseApiKeys(read('COGNITION_API_KEYS') ?? '', problems),
    parseApiKeys(read('COGNITION_ADMIN_API_KEYS') ?? '', problems, 'COGNITION_ADMIN_API_KEYS'),
    problems,
  );
  const maxBodyBytes = read('COGNITION_MAX_BODY_BYTES');
  const artifactMaxBytes = read('COGNITION_ARTIFACT_MAX_BYTES');
  const logLevel = read('COGNITION_LOG_LEVEL');
  const logFormat = read('COGNITION_LOG_FORMAT');
  const graceSeconds = read('COGNITION_SHUTDOWN_GRACE_SECONDS');
  const maxConcurrentRuns = read('COGNITION_MAX_CONCURRENT_RUNS');
  const abandonAfter = read('COGNITION_SESSION_ABANDON_AFTER_SECONDS');
  const sessionTtl = read('COGNITION_SESSION_TTL_SECONDS');
  const sweepInterval = read('COGNITION_SESSION_SWEEP_INTERVAL_SECONDS');
  const retention = read('COGNITION_CHECKPOINT_RETENTION');
  const runRecovery = read('COGNITION_RUN_RECOVERY');
  const maxRunRecoveries = read('COGNITION_RUN_MAX_RECOVERIES');
  const sandboxBackend = read('COGNITION_SANDBOX_BACKEND');
  const dockerImage = read('COGNITION_DOCKER_IMAGE');
  const dockerNetwork = read('COGNITION_DOCKER_NETWORK');
  const dockerMemory = read('COGNITION_DOCKER_MEMORY_LIMIT');
  const dockerCpu = read('COGNITION_DOCKER_CPU_LIMIT');
  const dockerTimeout = read('COGNITION_DOCKER_TIMEOUT');
  const dockerHost = read('DOCKER_HOST');
  const dockerTlsVerify = read('DOCKER_TLS_VERIFY');
  const dockerCertPath = read('DOCKER_CERT_PATH');
  const providersFile = read('COGNITION_PROVIDERS_FILE');
  const pricesFile = read('COGNITION_PRICES_FILE');
  const llm: LlmSettings = {
    provider: read('COGNITION_LLM_PROVIDER') ?? null,
    model: read('COGNITION_LLM_MODEL') ?? null,
    openaiApiKey: read('OPENAI_API_KEY') ?? null,
    anthropicApiKey: read('ANTHROPIC_API_KEY') ?? null,
    openaiCompatibleBaseUrl: read('COGNITION_OPENAI_COMPATIBLE_BASE_URL') ?? null,
    openaiCompatibleApiKey: read('COGNITION_OPENAI_COMPATIBLE_API_KEY') ?? null,
    providersFile: providersFile === undefined ? null : path.resolve(workspaceRoot, providersFile),
    pricesFile: pricesFile === undefined ? null : path.resolve(workspaceRoot, pricesFile),
  };
  const sseBufferSize = read('COGNITION_SSE_BUFFER_SIZE');
  const eventLog = read('COGNITION_EVENT_LOG');
  const sseRetry = read('COGNITION_SSE_RETRY_INTERVAL');
  const sseHeartbeat = read('COGNITION_SSE_HEARTBEAT_INTERVAL');
  const callbackSecret = read('COGNITION_CALLBACK_SECRET');
  const callbackAttempts = read('COGNITION_CALLBACK_MAX_ATTEMPTS');
  const callbackBackoff = read('COGNITION_CALLBACK_BACKOFF_SECONDS');
  const callbackMaxBackoff = read('COGNITION_CALLBACK_MAX_BACKOFF_SECONDS');
  const callbackTimeout = read('COGNITION_CALLBACK_TIMEOUT_SECONDS');
  const callbackAllowPrivate = read('COGNITION_CALLBACK_ALLOW_PRIVATE_NETWORK');
  const webFetchAllowPrivate = read('COGNITION_WEB_FETCH_ALLOW_PRIVATE_NETWORK');
  const mcpServersFile = read('COGNITION_MCP_SERVERS_FILE');
  const searchProvider = read('COGNITION_WEB_SEARCH_PROVIDER');
  const searchUrl = read('COGNITION_WEB_SEARCH_URL');
  const searchKey = read('COGNITION_WEB_SEARCH_API_KEY');
  const telemetry = readTelemetry(read, problems);
  if (searchProvider === 'searxng' && searchUrl === undefined) {
    problems.push('COGNITION_WEB_SEARCH_URL: required when COGNITION_WEB_SEARCH_PROVIDER=searxng');
  }
  if ((searchProvider === 'brave' || searchProvider === 'tavily') && searchKey === undefined) {
    problems.push(
      `COGNITION_WEB_SEARCH_API_KEY: required when COGNITION_WEB_SEARCH_PROVIDER=${searchProvider}`,
    );
  }

  const persistence = resolvePersistence(backend, uri, poolSize, workspaceRoot, problems);
  const redisUrl = read('COGNITION_REDIS_URL');
  const leaseSeconds = read('COGNITION_RUN_LEASE_SECONDS');
  const keyPrefix = read('COGNITION_REDIS_KEY_PREFIX');
  const nodeId = read('COGNITION_NODE_ID') ?? `${os.hostname()}-${process.pid}`;
  if (redisUrl !== undefined && persistence !== undefined && persistence.backend !== 'postgres') {
    problems.push(
      `COGNITION_REDIS_URL: the multi-node mode needs COGNITION_PERSISTENCE_BACKEND=postgres (every node shares one database); ${persistence.backend} is local to one process`,
    );
  }

  if (scopingEnabled) {
    if (scopeKeys.length === 0) {
      problems.push('COGNITION_SCOPE_KEYS: scoping is enabled but no scope keys are configured');
    }
    for (const key of scopeKeys) {
      if (!SCOPE_KEY_PATTERN.test(key)) {
        problems.push(
          `COGNITION_SCOPE_KEYS: "${key}" is not a valid scope key (lowercase letters, digits, - and _)`,
        );
      }
    }
    if (new Set(scopeKeys).size !== scopeKeys.length) {
      problems.push('COGNITION_SCOPE_KEYS: duplicate scope keys');
    }
  }
  apiKeys.forEach((apiKey, index) => {
    if (!apiKey.scopes) return;
    // Admin keys are named by id: their entry number is of the other list.
    const where = apiKey.admin
      ? `COGNITION_ADMIN_API_KEYS key ${apiKey.id}`
      : `COGNITION_API_KEYS entry ${index + 1}`;
    if (!scopingEnabled) {
      problems.push(`${where}: carries scopes but COGNITION_SCOPING_ENABLED is false`);
      return;
    }
    for (const key of Object.keys(apiKey.scopes)) {
      if (!scopeKeys.includes(key)) {
        problems.push(
          `${where}: scope key "${key}" is not one of COGNITION_SCOPE_KEYS (${scopeKeys.join(', ')})`,
        );
      }
    }
  });
  for (const origin of corsOrigins) {
    if (origin !== '*' && !isOrigin(origin)) {
      problems.push(
        `COGNITION_CORS_ORIGINS: "${origin}" is not an origin (scheme://host[:port], or *)`,
      );
    }
  }

  if (
    callbackBackoff !== undefined &&
    callbackMaxBackoff !== undefined &&
    callbackMaxBackoff < callbackBackoff
  ) {
    problems.push(
      'COGNITION_CALLBACK_MAX_BACKOFF_SECONDS: must not be below COGNITION_CALLBACK_BACKOFF_SECONDS',
    );
  }

  if (problems.length > 0) throw new ConfigError(problems);

  // Every value below was parsed successfully (a failure would have added a problem).
  return {
    host: need(host),
    port: need(port),
    workspaceRoot,
    persistence: need(persistence),
    scoping: { enabled: need(scopingEnabled), keys: scopingEnabled ? scopeKeys : [] },
    corsOrigins,
    apiKeys,
    maxBodyBytes: need(maxBodyBytes),
    artifactMaxBytes: need(artifactMaxBytes),
    logLevel: need(logLevel),
    logFormat: need(logFormat),
    shutdownGraceMs: Math.round(need(graceSeconds) * 1000),
    maxConcurrentRuns: need(maxConcurrentRuns),
    sessions: {
      abandonAfterSeconds: need(abandonAfter),
      ttlSeconds: need(sessionTtl),
      sweepIntervalMs: need(sweepInterval) * 1000,
      checkpointRetention: need(retention),
    },
    runRecovery: need(runRecovery),
    maxRunRecoveries: need(maxRunRecoveries),
    rateLimits: {
      requests: read('COGNITION_RATE_LIMIT_REQUESTS_PER_MINUTE') ?? null,
      runs: read('COGNITION_RATE_LIMIT_RUNS_PER_MINUTE') ?? null,
    },
    cluster:
      redisUrl === undefined
        ? null
        : {
            redisUrl,
            keyPrefix: need(keyPrefix),
            nodeId,
            leaseMs: Math.round(need(leaseSeconds) * 1000),
          },
    sandbox: {
      backend: need(sandboxBackend),
      docker: {
        image: need(dockerImage),
        network: need(dockerNetwork),
        memoryLimit: need(dockerMemory),
        cpuLimit: need(dockerCpu),
        timeoutSeconds: need(dockerTimeout),
        dockerHost: dockerHost ?? null,
        tlsVerify: need(dockerTlsVerify),
        certPath: dockerCertPath === undefined ? null : path.resolve(cwd, dockerCertPath),
      },
    },
    llm,
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
    tools: {
      webFetchAllowPrivateNetwork: need(webFetchAllowPrivate),
      webSearch:
        searchProvider === undefined
          ? null
          : { provider: searchProvider, url: searchUrl ?? null, apiKey: searchKey ?? null },
      mcpServersFile:
        mcpServersFile === undefined ? null : path.resolve(workspaceRoot, mcpServersFile),
    },
    telemetry: need(telemetry),
  };
}

/**
 * The telemetry settings. Tracing is on when an OTLP endpoint is set (the traces endpoint as
 * given, else `<OTEL_EXPORTER_OTLP_ENDPOINT>/v1/traces`, as the OpenTelemetry specification
 * says) and `OTEL_SDK_DISABLED` is not true.
 */
function readTelemetry(
  read: <N extends SettingName>(name: N) => SettingValue<N> | undefined,
  problems: string[],
): TelemetryConfig | undefined {
  const metricsEnabled = read('COGNITION_METRICS_ENABLED');
  const metricsToken = read('COGNITION_METRICS_TOKEN');
  const disabled = read('OTEL_SDK_DISABLED');
  const endpoint = read('OTEL_EXPORTER_OTLP_ENDPOINT');
  const tracesEndpoint = read('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const protocol = read('OTEL_EXPORTER_OTLP_PROTOCOL');
  const headers = parseOtlpHeaders(read('OTEL_EXPORTER_OTLP_HEADERS') ?? '', problems);
  const serviceName = read('OTEL_SERVICE_NAME');
  const exportDelayMs = read('OTEL_BSP_SCHEDULE_DELAY');
  if (
    metricsEnabled === undefined ||
    disabled === undefined ||
    serviceName === undefined ||
    exportDelayMs === undefined ||
    protocol === undefined
  ) {
    return undefined;
  }
  const tracesUrl =
    tracesEndpoint ?? (endpoint === undefined ? null : `${endpoint.replace(/\/+$/, '')}/v1/traces`);
  return {
    metrics: { enabled: metricsEnabled, token: metricsToken ?? null },
    tracing: {
      tracesUrl: disabled ? null : tracesUrl,
      protocol,
      headers,
      serviceName,
      exportDelayMs,
    },
  };
}

/** A setting that parsed (problems would have been thrown otherwise). */
function need<T>(value: T | undefined): T {
  if (value === undefined) throw new Error('a required setting was not parsed');
  return value;
}

function isOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === value;
  } catch {
    return false;
  }
}

function resolvePersistence(
  backend: (typeof PERSISTENCE_BACKENDS)[number] | undefined,
  uri: string | undefined,
  poolSize: number | undefined,
  workspaceRoot: string,
  problems: string[],
): PersistenceConfig | undefined {
  switch (backend) {
    case undefined:
      return undefined;
    case 'memory':
      return { backend: 'memory' };
    case 'sqlite': {
      const file = uri === undefined ? '.cognition/state.db' : stripSqliteScheme(uri);
      return { backend: 'sqlite', path: path.resolve(workspaceRoot, file) };
    }
    case 'postgres': {
      if (uri === undefined) {
        problems.push(
          'COGNITION_PERSISTENCE_URI: required when COGNITION_PERSISTENCE_BACKEND is postgres (postgresql://user:pass@host:5432/db)',
        );
        return undefined;
      }
      // The original Cognition accepted SQLAlchemy-style DSNs; the driver suffix means nothing here.
      const url = uri.replace(/^postgres(ql)?\+\w+:\/\//, 'postgresql://');
      if (!/^postgres(ql)?:\/\/[^/]/.test(url)) {
        problems.push(
          'COGNITION_PERSISTENCE_URI: expected a postgresql:// URL when the backend is postgres',
        );
        return undefined;
      }
      return { backend: 'postgres', url, poolSize: poolSize ?? 10 };
    }
  }
}

function stripSqliteScheme(uri: string): string {
  return uri.replace(/^sqlite(\+\w+)?:\/\/\//, '').replace(/^file:/, '');
}

/** A one-line, secret-free description of the storage choice for the startup log. */
export function describePersistence(persistence: PersistenceConfig): string {
  switch (persistence.backend) {
    case 'memory':
      return 'memory (not persisted)';
    case 'sqlite':
      return `sqlite at ${persistence.path}`;
    case 'postgres': {
      const url = new URL(persistence.url);
      if (url.password) url.password = '***';
      return `postgres at ${url.toString()} (pool ${persistence.poolSize})`;
    }
  }
}

/** Base URL of the local server for `cognition health`, from `COGNITION_PORT` only. */
export function healthUrlFromEnv(env: Env): string {
  const port = /^\d{1,5}$/.test(env['COGNITION_PORT'] ?? '') ? env['COGNITION_PORT'] : '8000';
  return `http://127.0.0.1:${port}`;
}
