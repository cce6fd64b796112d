import path from 'node:path';
import { z } from 'zod';
import { CheckpointRetentionSchema } from '@cognition/contracts';
import {
  boolText,
  byteSizeText,
  enumText,
  httpUrlText,
  intText,
  nodeIdText,
  positiveNumberText,
  nonNegativeNumberText,
  redisUrlText,
  secretText,
} from './values';
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
} from './types';

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

const MEMORY_LIMIT_PATTERN = /^\d+(\.\d+)?[bkmg]?$/i;

/**
 * Every setting: its environment variable, default and parser, grouped by area in the order
 * their problems are listed. The docs table (docs/configuration.md) lists exactly these; a spec
 * keeps the two in step.
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
  COGNITION_ALLOWED_HOSTS: { default: '', schema: z.string() },
  COGNITION_API_KEYS: { default: '', schema: z.string() },
  COGNITION_ADMIN_API_KEYS: { default: '', schema: z.string() },
  COGNITION_ALLOW_UNAUTHENTICATED_NETWORK: { default: 'false', schema: boolText },
  COGNITION_MAX_BODY_BYTES: { default: '4mb', schema: byteSizeText },
  COGNITION_ARTIFACT_MAX_BYTES: { default: '10mb', schema: byteSizeText },
  COGNITION_LOG_LEVEL: { default: 'info', schema: enumText(LOG_LEVELS) },
  COGNITION_LOG_FORMAT: { default: 'auto', schema: enumText(LOG_FORMATS) },
  COGNITION_LOG_SLOW_REQUEST_MS: { default: '1000', schema: intText(0, 86_400_000) },
  COGNITION_SHUTDOWN_GRACE_SECONDS: { default: '10', schema: positiveNumberText(3600) },
  COGNITION_KEEP_ALIVE_TIMEOUT_SECONDS: { default: '65', schema: positiveNumberText(3600) },
  COGNITION_MAX_CONCURRENT_RUNS: { default: '32', schema: intText(1, 10000) },
  COGNITION_SESSION_ABANDON_AFTER_SECONDS: { default: '1800', schema: intText(0, 315_360_000) },
  COGNITION_SESSION_TTL_SECONDS: { default: '0', schema: intText(0, 315_360_000) },
  COGNITION_SESSION_SWEEP_INTERVAL_SECONDS: { default: '60', schema: intText(1, 86_400) },
  COGNITION_CHECKPOINT_RETENTION: { default: 'all', schema: CheckpointRetentionSchema },
  COGNITION_RUN_RECOVERY: { default: 'resume', schema: enumText(RUN_RECOVERY_MODES) },
  COGNITION_RUN_MAX_RECOVERIES: { default: '3', schema: intText(0, 100) },
  COGNITION_SANDBOX_BACKEND: { default: 'local', schema: enumText(SANDBOX_BACKENDS) },
  COGNITION_ALLOW_LOCAL_SANDBOX_ON_NETWORK: { default: 'false', schema: boolText },
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
  COGNITION_LANGGRAPH_CONFIG: { default: undefined, schema: z.string().trim().min(1) },
  COGNITION_WEB_SEARCH_API_KEY: { default: undefined, schema: secretText },
  COGNITION_REDIS_URL: { default: undefined, schema: redisUrlText },
  COGNITION_REDIS_KEY_PREFIX: { default: 'cognition:', schema: z.string().trim().min(1).max(64) },
  COGNITION_NODE_ID: { default: undefined, schema: nodeIdText },
  COGNITION_RUN_LEASE_SECONDS: { default: '15', schema: positiveNumberText(3600) },
  COGNITION_SCHEDULES_ENABLED: { default: 'true', schema: boolText },
  COGNITION_SCHEDULES_POLL_SECONDS: { default: '0.25', schema: positiveNumberText(60) },
  COGNITION_SCHEDULES_MISFIRE_GRACE_SECONDS: { default: '10', schema: positiveNumberText(86400) },
  COGNITION_SCHEDULES_CLAIM_TIMEOUT_SECONDS: { default: '30', schema: positiveNumberText(86400) },
  COGNITION_SCHEDULES_LOOKAHEAD_SECONDS: { default: '2', schema: nonNegativeNumberText(60) },
  COGNITION_RATE_LIMIT_REQUESTS_PER_MINUTE: { default: undefined, schema: intText(1, 10_000_000) },
  COGNITION_RATE_LIMIT_RUNS_PER_MINUTE: { default: undefined, schema: intText(1, 10_000_000) },
  COGNITION_METRICS_ENABLED: { default: 'true', schema: boolText },
  COGNITION_METRICS_TOKEN: {
    default: undefined,
    schema: z.string().trim().min(16, 'must be at least 16 characters'),
  },
  COGNITION_SECRETS_KEY: { default: undefined, schema: secretText },
  COGNITION_SECRETS_OLD_KEYS: { default: '', schema: z.string() },
  NODE_ENV: { default: 'development', schema: z.string().trim() },
  OTEL_SDK_DISABLED: { default: 'false', schema: boolText },
  OTEL_EXPORTER_OTLP_ENDPOINT: { default: undefined, schema: httpUrlText },
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: { default: undefined, schema: httpUrlText },
  OTEL_EXPORTER_OTLP_PROTOCOL: { default: 'http/protobuf', schema: enumText(OTLP_PROTOCOLS) },
  OTEL_EXPORTER_OTLP_HEADERS: { default: '', schema: z.string() },
  OTEL_SERVICE_NAME: { default: 'cognition', schema: z.string().trim().min(1).max(256) },
  OTEL_BSP_SCHEDULE_DELAY: { default: '5000', schema: intText(1, 600_000) },
} as const;

export type SettingName = keyof typeof SETTINGS;
export type SettingValue<N extends SettingName> = z.output<(typeof SETTINGS)[N]['schema']>;

/** Settings whose values are never echoed in a problem or a log line. */
const SECRET_SETTINGS: ReadonlySet<SettingName> = new Set<SettingName>([
  'OPENAI_API_KEY',
  'ANTHROPIC_API_KEY',
  'COGNITION_OPENAI_COMPATIBLE_API_KEY',
  'COGNITION_CALLBACK_SECRET',
  'COGNITION_METRICS_TOKEN',
  'OTEL_EXPORTER_OTLP_HEADERS',
  'COGNITION_SECRETS_KEY',
  'COGNITION_SECRETS_OLD_KEYS',
]);

const TABLE_ORDER = new Map(Object.keys(SETTINGS).map((name, index) => [name, index]));

/**
 * One environment as the area readers see it. Nothing throws here: each problem is recorded and
 * `problems()` lists them all — first the invalid values in the order of the settings table
 * (whichever area read them first), then the checks that span values, in the order the areas
 * made them. So the list reads the same however the areas are composed.
 */
export class SettingsReader {
  private readonly values = new Map<SettingName, unknown>();
  private readonly invalidValues: { order: number; problem: string }[] = [];
  private readonly checks: string[] = [];

  constructor(
    private readonly env: Env,
    /** What `COGNITION_WORKSPACE_ROOT` and `DOCKER_CERT_PATH` are resolved against. */
    readonly cwd: string,
  ) {}

  /**
   * The parsed value of `name` (its default when unset or empty); undefined when it has no
   * default or is invalid, which is recorded once however often it is read.
   */
  read<N extends SettingName>(name: N): SettingValue<N> | undefined {
    if (this.values.has(name)) return this.values.get(name) as SettingValue<N> | undefined;
    const value = this.parse(name);
    this.values.set(name, value);
    return value;
  }

  /** A problem with the value of `name` found past its schema (e.g. one entry of a list). */
  invalid(name: SettingName, problem: string): void {
    this.invalidValues.push({ order: TABLE_ORDER.get(name) ?? TABLE_ORDER.size, problem });
  }

  /** A problem of values that are each valid (a combination, or an entry of a list). */
  check(problem: string): void {
    this.checks.push(problem);
  }

  /** Absolute; relative settings (sqlite path, providers file...) are resolved against it. */
  workspaceRoot(): string {
    return path.resolve(this.cwd, this.read('COGNITION_WORKSPACE_ROOT') ?? '.');
  }

  problems(): string[] {
    // Array.prototype.sort is stable: problems of one setting keep the order they were found in.
    const invalid = [...this.invalidValues].sort((a, b) => a.order - b.order);
    return [...invalid.map((entry) => entry.problem), ...this.checks];
  }

  private parse<N extends SettingName>(name: N): SettingValue<N> | undefined {
    const setting = SETTINGS[name];
    const raw =
      this.env[name] === undefined || this.env[name] === '' ? setting.default : this.env[name];
    if (raw === undefined) return undefined;
    const result = (setting.schema as unknown as z.ZodType<SettingValue<N>>).safeParse(raw);
    if (result.success) return result.data;
    const message = result.error.issues[0]?.message ?? 'invalid value';
    this.invalid(
      name,
      SECRET_SETTINGS.has(name)
        ? `${name}: ${message} (the value is not shown)`
        : `${name}: ${message} (got ${JSON.stringify(raw.slice(0, 80))})`,
    );
    return undefined;
  }
}

/**
 * What an area reader returns: its part of the configuration, built only once no problem was
 * found (so every value it needs parsed).
 */
export type AreaBuilder<T> = () => T;

/** A setting that parsed (problems would have been thrown otherwise). */
export function need<T>(value: T | undefined): T {
  if (value === undefined) throw new Error('a required setting was not parsed');
  return value;
}
