import type { SecretKey } from '@cognition/runtime';
// The server's configuration as `loadConfig` (config/index.ts) returns it: one typed object per area,
// and the value lists the settings accept. Types only, beside the parsing that fills them.

/** `COGNITION_SESSION_*` and `COGNITION_CHECKPOINT_RETENTION`: see docs/sessions.md. */
export interface SessionLifecycleConfig {
  /** An active session idle this long reads as `abandoned` (0: never). */
  abandonAfterSeconds: number;
  /** Sessions idle this long are deleted (0: never); a session's `expiresAt` wins. */
  ttlSeconds: number;
  /** How often this process sweeps expired sessions and prunes checkpoints. */
  sweepIntervalMs: number;
  /** Default checkpoint retention (a session's own wins): all | keep_latest | keep_last:<n> | max_age:<d>. */
  checkpointRetention: string;
}

/**
 * The server's configuration, parsed once from the environment at startup (`loadConfig`).
 * Nothing else in the process reads `process.env`: libraries receive the typed pieces they need.
 */
export interface ServerConfig {
  host: string;
  port: number;
  /** Absolute path; relative settings (sqlite path) are resolved against it. */
  workspaceRoot: string;
  persistence: PersistenceConfig;
  scoping: { enabled: boolean; keys: string[] };
  /** Empty means no cross-origin access; `['*']` allows every origin. */
  corsOrigins: string[];
  apiKeys: ApiKeyConfig[];
  maxBodyBytes: number;
  /** Largest decoded artifact content (`COGNITION_ARTIFACT_MAX_BYTES`). */
  artifactMaxBytes: number;
  logLevel: LogLevel;
  /** `auto`: human-readable on a terminal, JSON lines otherwise. */
  logFormat: LogFormat;
  /** Requests taking at least this long are logged at info (others at debug); 0: never. */
  logSlowRequestMs: number;
  shutdownGraceMs: number;
  /**
   * How long an idle keep-alive connection is kept open. Longer than a balancer keeps its idle
   * connections to us, so the balancer closes them first: a connection we closed while the
   * balancer was reusing it loses that request (HAProxy then drops its client's connection).
   */
  keepAliveTimeoutMs: number;
  /** Runs executing at once in this process; more wait `queued`. */
  maxConcurrentRuns: number;
  /** Session lifecycle rules: read-time `abandoned`, idle TTL and its sweep. */
  sessions: SessionLifecycleConfig;
  /** Runs a dead or stopped process left active: `resume` them, or end them `interrupted`. */
  runRecovery: (typeof RUN_RECOVERY_MODES)[number];
  /** A run resumed more often than this fails instead. */
  maxRunRecoveries: number;
  sandbox: SandboxConfig;
  llm: LlmSettings;
  sse: SseConfig;
  callbacks: CallbackConfig;
  tools: ToolsConfig;
  /** Several nodes on one PostgreSQL + Redis (`COGNITION_REDIS_URL`); null: one node. */
  cluster: ClusterConfig | null;
  /** Per-tenant budgets per minute; null: not limited. */
  rateLimits: { requests: number | null; runs: number | null };
  telemetry: TelemetryConfig;
  /** Protected mode and the Host / Origin check (docs/security.md). */
  network: NetworkConfig;
  /** Encryption of the registry's secrets at rest. */
  secrets: SecretsConfig;
  /** This node's scheduler loop (docs/schedules.md). */
  schedules: SchedulesConfig;
}

/** The scheduler loop: off leaves schedules to other nodes (the API still serves them). */
export interface SchedulesConfig {
  enabled: boolean;
  pollMs: number;
  misfireGraceMs: number;
  /** A fire claimed this long ago without a run is taken over (its claimer died). */
  claimTimeoutMs: number;
  /** How long before its due time an occurrence may be claimed (it still starts when due). */
  lookAheadMs: number;
  nodeId: string;
}

/** Who may reach the server and under which names (config/areas/network.ts). */
export interface NetworkConfig {
  /**
   * `COGNITION_ALLOWED_HOSTS`, canonical: host names and IP addresses, `.example.com` (the
   * domain and its subdomains), `*` (any). Loopback names are always allowed.
   */
  allowedHosts: string[];
  /** `COGNITION_HOST` is not a loopback address. */
  exposed: boolean;
  /** Exposed with no API keys, by `COGNITION_ALLOW_UNAUTHENTICATED_NETWORK=true`. */
  unauthenticatedNetwork: boolean;
  /** Exposed with the local sandbox, by `COGNITION_ALLOW_LOCAL_SANDBOX_ON_NETWORK=true`. */
  localSandboxOnNetwork: boolean;
}

export interface SecretsConfig {
  /** `COGNITION_SECRETS_KEY`: the key new secrets are encrypted with; null when unset. */
  key: SecretKey | null;
  /** `COGNITION_SECRETS_OLD_KEYS`: keys still accepted for reading (until rotation). */
  oldKeys: SecretKey[];
  /** `NODE_ENV=production`: with no key, secrets are refused instead of a development key made. */
  production: boolean;
  /** Where the development key lives when no key is set (`<workspace>/.cognition/secrets.key`). */
  devKeyFile: string;
}

export interface ClusterConfig {
  redisUrl: string;
  /** Prefix of the Redis keys and channels (several deployments may share one Redis). */
  keyPrefix: string;
  nodeId: string;
  leaseMs: number;
}

/** `/metrics` and OpenTelemetry tracing (docs/observability.md). */
export interface TelemetryConfig {
  metrics: {
    /** `COGNITION_METRICS_ENABLED`: false removes `/metrics` (and stops collecting). */
    enabled: boolean;
    /** `COGNITION_METRICS_TOKEN`: a bearer token scrapes must send instead of an API key. */
    token: string | null;
  };
  tracing: TracingConfig;
}

export interface TracingConfig {
  /** Where spans are POSTed (OTLP/HTTP); null: tracing is off. */
  tracesUrl: string | null;
  /** `OTEL_EXPORTER_OTLP_PROTOCOL`: protobuf (OpenTelemetry's default) or JSON bodies. */
  protocol: OtlpProtocol;
  /** `OTEL_EXPORTER_OTLP_HEADERS`: sent with every export (may hold credentials). */
  headers: Record<string, string>;
  serviceName: string;
  /** `OTEL_BSP_SCHEDULE_DELAY`: the batch processor's export interval (ms). */
  exportDelayMs: number;
}

export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json'] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

/** The built-in tools that reach the network. */
export interface ToolsConfig {
  /** `web_fetch` may reach loopback/private/link-local addresses (default false: refused). */
  webFetchAllowPrivateNetwork: boolean;
  /** null: no provider, so `web_search` is not offered. */
  webSearch: { provider: WebSearchProviderName; url: string | null; apiKey: string | null } | null;
  /**
   * `COGNITION_MCP_SERVERS_FILE`, resolved against the workspace root: MCP servers offered to
   * every agent (or those an entry lists); read and validated by `createRuntime`. null: none.
   */
  mcpServersFile: string | null;
  /**
   * `COGNITION_LANGGRAPH_CONFIG` (resolved against the working directory), else a
   * `langgraph.json` in the working directory when there is one: the user graphs the LangGraph
   * API serves (docs/langgraph-api.md). null: our agents only.
   */
  langgraphConfig: string | null;
}

export const WEB_SEARCH_PROVIDER_NAMES = ['searxng', 'brave', 'tavily'] as const;
export type WebSearchProviderName = (typeof WEB_SEARCH_PROVIDER_NAMES)[number];

export type PersistenceConfig =
  | { backend: 'memory' }
  | { backend: 'sqlite'; path: string }
  | { backend: 'postgres'; url: string; poolSize: number };

/**
 * One accepted API key. `id` is a fingerprint of the key (safe to log); the key itself never
 * leaves this object. `scopes`, when set, are fixed for every request made with the key.
 */
export interface ApiKeyConfig {
  id: string;
  key: string;
  scopes?: Record<string, string>;
  /** From `COGNITION_ADMIN_API_KEYS`: may change the registry's agents and providers. */
  admin?: boolean;
}

export interface SandboxConfig {
  backend: 'local' | 'docker';
  docker: {
    image: string;
    network: string;
    memoryLimit: string;
    cpuLimit: number;
    timeoutSeconds: number;
    /** `DOCKER_HOST` as given (`unix:///path` or `tcp://host:port`); null: the default socket. */
    dockerHost: string | null;
    /** `DOCKER_TLS_VERIFY=1`. */
    tlsVerify: boolean;
    /** `DOCKER_CERT_PATH`: directory holding `ca.pem`, `cert.pem`, `key.pem` (TLS). */
    certPath: string | null;
  };
}

export const LLM_PROVIDER_KINDS = ['openai', 'anthropic', 'openai_compatible'] as const;

/**
 * The LLM settings as plain values. The runtime's `loadLlmConfig` validates their combination
 * (and the providers file's content) at startup; here only each value's own shape is checked.
 * Secrets stay in this object and are never logged.
 */
export interface LlmSettings {
  provider: (typeof LLM_PROVIDER_KINDS)[number] | null;
  model: string | null;
  openaiApiKey: string | null;
  anthropicApiKey: string | null;
  openaiCompatibleBaseUrl: string | null;
  openaiCompatibleApiKey: string | null;
  /** Absolute path of the providers file (JSON or YAML), resolved against the workspace. */
  providersFile: string | null;
  /** Absolute path of the prices file (JSON or YAML), resolved against the workspace. */
  pricesFile: string | null;
}

/** The REST SSE stream's knobs. */
export interface SseConfig {
  /**
   * Events kept per session for replay after a reconnect (the durable log applies it when a
   * run ends, so a running run's events are all kept).
   */
  bufferSize: number;
  /**
   * Where run events are kept: `durable` in the storage backend (streams survive a restart;
   * memory storage has nothing to outlive, so it always uses the in-process log), or `memory`.
   */
  eventLog: EventLogKind;
  /** The `retry:` hint sent first on every stream (ms). */
  retryMs: number;
  /** Interval of `: ping` comments on an open stream (ms). */
  heartbeatMs: number;
}

/** Completion callback delivery. */
export interface CallbackConfig {
  /** HMAC-SHA256 key; when set every callback carries `X-Cognition-Signature: sha256=<hex>`. */
  secret: string | null;
  maxAttempts: number;
  initialDelayMs: number;
  maxDelayMs: number;
  timeoutMs: number;
  /** Deliver to loopback/private/link-local addresses too (default false: refused). */
  allowPrivateNetwork: boolean;
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export const PERSISTENCE_BACKENDS = ['sqlite', 'postgres', 'memory'] as const;
export const SANDBOX_BACKENDS = ['local', 'docker'] as const;
export const EVENT_LOG_KINDS = ['durable', 'memory'] as const;
export const RUN_RECOVERY_MODES = ['resume', 'interrupt'] as const;
export type EventLogKind = (typeof EVENT_LOG_KINDS)[number];
