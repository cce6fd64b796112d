import os from 'node:os';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, SETTINGS, apiKeyFingerprint, describePersistence, loadConfig } from '.';
import type { Env } from '.';

function problemsOf(env: Env): string[] {
  try {
    loadConfig(env, '/srv/app');
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('applies the original Cognition defaults to an empty environment', () => {
    const config = loadConfig({}, '/srv/app');
    expect(config).toEqual({
      host: '127.0.0.1',
      port: 8000,
      workspaceRoot: '/srv/app',
      persistence: { backend: 'sqlite', path: '/srv/app/.cognition/state.db' },
      scoping: { enabled: false, keys: [] },
      schedules: {
        enabled: true,
        pollMs: 250,
        misfireGraceMs: 10_000,
        claimTimeoutMs: 30_000,
        lookAheadMs: 2000,
        nodeId: `${os.hostname()}-${process.pid}`,
      },
      secrets: {
        key: null,
        oldKeys: [],
        production: false,
        devKeyFile: '/srv/app/.cognition/secrets.key',
      },
      cluster: null,
      rateLimits: { requests: null, runs: null },
      corsOrigins: [],
      apiKeys: [],
      maxBodyBytes: 4 * 1024 * 1024,
      artifactMaxBytes: 10 * 1024 * 1024,
      logLevel: 'info',
      logFormat: 'auto',
      logSlowRequestMs: 1000,
      shutdownGraceMs: 10_000,
      keepAliveTimeoutMs: 65_000,
      maxConcurrentRuns: 32,
      runRecovery: 'resume',
      maxRunRecoveries: 3,
      sandbox: {
        backend: 'local',
        docker: {
          image: 'cognition-sandbox:latest',
          network: 'none',
          memoryLimit: '512m',
          cpuLimit: 1,
          timeoutSeconds: 300,
          dockerHost: null,
          tlsVerify: false,
          certPath: null,
        },
      },
      llm: {
        provider: null,
        model: null,
        openaiApiKey: null,
        anthropicApiKey: null,
        openaiCompatibleBaseUrl: null,
        openaiCompatibleApiKey: null,
        providersFile: null,
        pricesFile: null,
      },
      sse: { bufferSize: 1000, eventLog: 'durable', retryMs: 3000, heartbeatMs: 15_000 },
      sessions: {
        abandonAfterSeconds: 1800,
        ttlSeconds: 0,
        sweepIntervalMs: 60_000,
        checkpointRetention: 'all',
      },
      callbacks: {
        secret: null,
        maxAttempts: 5,
        initialDelayMs: 1000,
        maxDelayMs: 30_000,
        timeoutMs: 10_000,
        allowPrivateNetwork: false,
      },
      tools: {
        webFetchAllowPrivateNetwork: false,
        webSearch: null,
        mcpServersFile: null,
        langgraphConfig: null,
      },
      telemetry: {
        metrics: { enabled: true, token: null },
        tracing: {
          tracesUrl: null,
          protocol: 'http/protobuf',
          headers: {},
          serviceName: 'cognition',
          exportDelayMs: 5000,
        },
      },
      network: {
        allowedHosts: [],
        exposed: false,
        unauthenticatedNetwork: false,
        localSandboxOnNetwork: false,
      },
    });
  });

  it('reads the network tools: web_fetch private addresses, a web_search provider', () => {
    const config = loadConfig(
      {
        COGNITION_WEB_FETCH_ALLOW_PRIVATE_NETWORK: 'true',
        COGNITION_WEB_SEARCH_PROVIDER: 'searxng',
        COGNITION_WEB_SEARCH_URL: 'http://10.0.0.5:8888',
        COGNITION_MCP_SERVERS_FILE: 'mcp.yaml',
        COGNITION_LANGGRAPH_CONFIG: 'graphs/langgraph.json',
      },
      '/srv/app',
    );
    expect(config.tools).toEqual({
      webFetchAllowPrivateNetwork: true,
      webSearch: { provider: 'searxng', url: 'http://10.0.0.5:8888', apiKey: null },
      mcpServersFile: '/srv/app/mcp.yaml',
      langgraphConfig: '/srv/app/graphs/langgraph.json',
    });
    const problems = (env: Record<string, string>) => {
      try {
        loadConfig(env, '/srv/app');
      } catch (error) {
        return String(error);
      }
      return '';
    };
    expect(problems({ COGNITION_WEB_SEARCH_PROVIDER: 'searxng' })).toContain(
      'COGNITION_WEB_SEARCH_URL: required',
    );
    expect(problems({ COGNITION_WEB_SEARCH_PROVIDER: 'brave' })).toContain(
      'COGNITION_WEB_SEARCH_API_KEY: required',
    );
    expect(problems({ COGNITION_WEB_SEARCH_PROVIDER: 'bing' })).toContain(
      'COGNITION_WEB_SEARCH_PROVIDER',
    );
  });

  it('reads every setting', () => {
    const config = loadConfig(
      {
        COGNITION_HOST: '0.0.0.0',
        COGNITION_PORT: '9000',
        COGNITION_WORKSPACE_ROOT: 'work',
        COGNITION_PERSISTENCE_BACKEND: 'POSTGRES',
        COGNITION_PERSISTENCE_URI: 'postgresql+asyncpg://u:secret@db:5432/cognition',
        COGNITION_PERSISTENCE_POOL_SIZE: '25',
        COGNITION_SCOPING_ENABLED: 'true',
        COGNITION_SCOPE_KEYS: 'user, Project',
        COGNITION_CORS_ORIGINS: 'https://app.example.com, http://localhost:5173',
        COGNITION_API_KEYS: 'abcdefghijklmnop0123,tenant-key-0123456789:user=alice;project=p1',
        COGNITION_MAX_BODY_BYTES: '512kb',
        COGNITION_LOG_LEVEL: 'debug',
        COGNITION_LOG_FORMAT: 'JSON',
        COGNITION_SHUTDOWN_GRACE_SECONDS: '2.5',
        COGNITION_KEEP_ALIVE_TIMEOUT_SECONDS: '120',
        COGNITION_MAX_CONCURRENT_RUNS: '4',
        COGNITION_SANDBOX_BACKEND: 'docker',
        COGNITION_DOCKER_IMAGE: 'registry.local/sandbox:1.2',
        COGNITION_DOCKER_NETWORK: 'bridge',
        COGNITION_DOCKER_MEMORY_LIMIT: '2g',
        COGNITION_DOCKER_CPU_LIMIT: '0.5',
        COGNITION_DOCKER_TIMEOUT: '60',
        DOCKER_HOST: 'tcp://docker.internal:2376',
        DOCKER_TLS_VERIFY: '1',
        DOCKER_CERT_PATH: 'certs',
        COGNITION_LLM_PROVIDER: 'OpenAI_Compatible',
        COGNITION_LLM_MODEL: 'llama-3.1-70b',
        OPENAI_API_KEY: 'sk-openai',
        ANTHROPIC_API_KEY: 'sk-ant',
        COGNITION_OPENAI_COMPATIBLE_BASE_URL: 'http://127.0.0.1:11434/v1',
        COGNITION_OPENAI_COMPATIBLE_API_KEY: 'local-key',
        COGNITION_PROVIDERS_FILE: 'providers.yaml',
        COGNITION_PRICES_FILE: 'prices.json',
        COGNITION_SSE_BUFFER_SIZE: '5000',
        COGNITION_EVENT_LOG: 'memory',
        COGNITION_SSE_RETRY_INTERVAL: '1500',
        COGNITION_SSE_HEARTBEAT_INTERVAL: '0.5',
        COGNITION_CALLBACK_SECRET: 'hmac-secret',
        COGNITION_CALLBACK_MAX_ATTEMPTS: '3',
        COGNITION_CALLBACK_BACKOFF_SECONDS: '0.05',
        COGNITION_CALLBACK_MAX_BACKOFF_SECONDS: '2',
        COGNITION_CALLBACK_TIMEOUT_SECONDS: '4',
        COGNITION_CALLBACK_ALLOW_PRIVATE_NETWORK: 'true',
      },
      '/srv/app',
    );
    expect(config.host).toBe('0.0.0.0');
    expect(config.port).toBe(9000);
    expect(config.workspaceRoot).toBe('/srv/app/work');
    expect(config.persistence).toEqual({
      backend: 'postgres',
      url: 'postgresql://u:secret@db:5432/cognition',
      poolSize: 25,
    });
    expect(describePersistence(config.persistence)).not.toContain('secret');
    expect(config.scoping).toEqual({ enabled: true, keys: ['user', 'project'] });
    expect(config.corsOrigins).toEqual(['https://app.example.com', 'http://localhost:5173']);
    expect(config.apiKeys).toEqual([
      { id: apiKeyFingerprint('abcdefghijklmnop0123'), key: 'abcdefghijklmnop0123' },
      {
        id: apiKeyFingerprint('tenant-key-0123456789'),
        key: 'tenant-key-0123456789',
        scopes: { user: 'alice', project: 'p1' },
      },
    ]);
    expect(config.apiKeys[0]?.id).toMatch(/^key_[0-9a-f]{12}$/);
    expect(config.maxBodyBytes).toBe(512 * 1024);
    expect(config.logLevel).toBe('debug');
    expect(config.logFormat).toBe('json');
    expect(config.shutdownGraceMs).toBe(2500);
    expect(config.keepAliveTimeoutMs).toBe(120_000);
    expect(config.maxConcurrentRuns).toBe(4);
    expect(config.sandbox).toEqual({
      backend: 'docker',
      docker: {
        image: 'registry.local/sandbox:1.2',
        network: 'bridge',
        memoryLimit: '2g',
        cpuLimit: 0.5,
        timeoutSeconds: 60,
        dockerHost: 'tcp://docker.internal:2376',
        tlsVerify: true,
        certPath: '/srv/app/certs',
      },
    });
    expect(config.llm).toEqual({
      provider: 'openai_compatible',
      model: 'llama-3.1-70b',
      openaiApiKey: 'sk-openai',
      anthropicApiKey: 'sk-ant',
      openaiCompatibleBaseUrl: 'http://127.0.0.1:11434/v1',
      openaiCompatibleApiKey: 'local-key',
      providersFile: '/srv/app/work/providers.yaml',
      pricesFile: '/srv/app/work/prices.json',
    });
    expect(config.sse).toEqual({
      bufferSize: 5000,
      eventLog: 'memory',
      retryMs: 1500,
      heartbeatMs: 500,
    });
    expect(config.callbacks).toEqual({
      secret: 'hmac-secret',
      maxAttempts: 3,
      initialDelayMs: 50,
      maxDelayMs: 2000,
      timeoutMs: 4000,
      allowPrivateNetwork: true,
    });
  });

  it('checks the LLM, SSE, callback and Docker settings, never echoing a secret', () => {
    const problems = problemsOf({
      COGNITION_LLM_PROVIDER: 'gemini',
      COGNITION_OPENAI_COMPATIBLE_BASE_URL: 'ftp://models.local',
      OPENAI_API_KEY: '   ',
      COGNITION_SSE_BUFFER_SIZE: '5',
      COGNITION_EVENT_LOG: 'redis',
      COGNITION_RUN_RECOVERY: 'retry',
      COGNITION_RUN_MAX_RECOVERIES: '-1',
      COGNITION_SSE_RETRY_INTERVAL: 'soon',
      COGNITION_SSE_HEARTBEAT_INTERVAL: '0',
      COGNITION_CALLBACK_MAX_ATTEMPTS: '50',
      COGNITION_CALLBACK_BACKOFF_SECONDS: '10',
      COGNITION_CALLBACK_MAX_BACKOFF_SECONDS: '5',
      DOCKER_HOST: 'ssh://builder',
    });
    expect(problems).toEqual([
      'COGNITION_RUN_RECOVERY: expected one of resume, interrupt (got "retry")',
      'COGNITION_RUN_MAX_RECOVERIES: expected an integer between 0 and 100 (got "-1")',
      'DOCKER_HOST: expected unix:///path/to/docker.sock or tcp://host:port (got "ssh://builder")',
      'COGNITION_LLM_PROVIDER: expected one of openai, anthropic, openai_compatible (got "gemini")',
      'OPENAI_API_KEY: must not be blank (the value is not shown)',
      'COGNITION_OPENAI_COMPATIBLE_BASE_URL: expected an http:// or https:// URL (got "ftp://models.local")',
      'COGNITION_SSE_BUFFER_SIZE: expected an integer between 10 and 1000000 (got "5")',
      'COGNITION_EVENT_LOG: expected one of durable, memory (got "redis")',
      'COGNITION_SSE_RETRY_INTERVAL: expected an integer between 100 and 3600000 (got "soon")',
      'COGNITION_SSE_HEARTBEAT_INTERVAL: expected a number above 0 (got "0")',
      'COGNITION_CALLBACK_MAX_ATTEMPTS: expected an integer between 1 and 20 (got "50")',
      'COGNITION_CALLBACK_MAX_BACKOFF_SECONDS: must not be below COGNITION_CALLBACK_BACKOFF_SECONDS',
    ]);
  });

  it('resolves a relative sqlite URI against the workspace and keeps an absolute one', () => {
    expect(
      loadConfig({ COGNITION_WORKSPACE_ROOT: '/data', COGNITION_PERSISTENCE_URI: 'db/x.db' })
        .persistence,
    ).toEqual({ backend: 'sqlite', path: '/data/db/x.db' });
    expect(
      loadConfig({ COGNITION_PERSISTENCE_URI: 'sqlite:////var/lib/c.db' }).persistence,
    ).toEqual({
      backend: 'sqlite',
      path: '/var/lib/c.db',
    });
    expect(loadConfig({ COGNITION_PERSISTENCE_BACKEND: 'memory' }).persistence).toEqual({
      backend: 'memory',
    });
  });

  it('lists every invalid setting at once', () => {
    const problems = problemsOf({
      COGNITION_PORT: 'eighty',
      COGNITION_PERSISTENCE_POOL_SIZE: '0',
      COGNITION_SCOPING_ENABLED: 'maybe',
      COGNITION_CORS_ORIGINS: 'not a url',
      COGNITION_API_KEYS: 'short',
      COGNITION_MAX_BODY_BYTES: 'lots',
      COGNITION_LOG_LEVEL: 'verbose',
      COGNITION_SHUTDOWN_GRACE_SECONDS: '-1',
      COGNITION_MAX_CONCURRENT_RUNS: '0',
      COGNITION_SANDBOX_BACKEND: 'vm',
      COGNITION_DOCKER_MEMORY_LIMIT: 'big',
      COGNITION_DOCKER_CPU_LIMIT: '0',
      COGNITION_DOCKER_TIMEOUT: 'forever',
    });
    const names = problems.map((p) => p.split(/[: ]/)[0]);
    expect(names).toEqual([
      'COGNITION_PORT',
      'COGNITION_PERSISTENCE_POOL_SIZE',
      'COGNITION_SCOPING_ENABLED',
      'COGNITION_API_KEYS',
      'COGNITION_MAX_BODY_BYTES',
      'COGNITION_LOG_LEVEL',
      'COGNITION_SHUTDOWN_GRACE_SECONDS',
      'COGNITION_MAX_CONCURRENT_RUNS',
      'COGNITION_SANDBOX_BACKEND',
      'COGNITION_DOCKER_MEMORY_LIMIT',
      'COGNITION_DOCKER_CPU_LIMIT',
      'COGNITION_DOCKER_TIMEOUT',
      'COGNITION_CORS_ORIGINS',
    ]);
    const error = new ConfigError(problems);
    expect(error.message).toContain('13 problems');
  });

  it('rejects an unknown persistence backend naming the accepted values (no silent fallback)', () => {
    expect(problemsOf({ COGNITION_PERSISTENCE_BACKEND: 'mongodb' })).toEqual([
      'COGNITION_PERSISTENCE_BACKEND: expected one of sqlite, postgres, memory (got "mongodb")',
    ]);
  });

  it('requires a postgresql URL for the postgres backend', () => {
    expect(problemsOf({ COGNITION_PERSISTENCE_BACKEND: 'postgres' })[0]).toMatch(
      /^COGNITION_PERSISTENCE_URI: required when COGNITION_PERSISTENCE_BACKEND is postgres/,
    );
    expect(
      problemsOf({
        COGNITION_PERSISTENCE_BACKEND: 'postgres',
        COGNITION_PERSISTENCE_URI: 'mysql://x/y',
      })[0],
    ).toMatch(/expected a postgresql:\/\/ URL/);
  });

  it('marks the keys of COGNITION_ADMIN_API_KEYS admin, and a key of both lists too', () => {
    const config = loadConfig(
      {
        COGNITION_API_KEYS: 'ordinary-key-0123456789,both-lists-key-0123456',
        COGNITION_ADMIN_API_KEYS: 'admin-key-0123456789abc,both-lists-key-0123456',
      },
      '/srv',
    );
    expect(config.apiKeys.map((k) => [k.key, k.admin === true])).toEqual([
      ['ordinary-key-0123456789', false],
      ['admin-key-0123456789abc', true],
      ['both-lists-key-0123456', true],
    ]);
    expect(problemsOf({ COGNITION_ADMIN_API_KEYS: 'short' })).toEqual([
      'COGNITION_ADMIN_API_KEYS entry 1: a key must be 16-512 characters of A-Z a-z 0-9 . _ ~ + / = - (the key is not shown)',
    ]);
  });

  it('validates scope keys and the scopes pinned to API keys', () => {
    expect(problemsOf({ COGNITION_SCOPING_ENABLED: 'true', COGNITION_SCOPE_KEYS: ' , ' })).toEqual([
      'COGNITION_SCOPE_KEYS: scoping is enabled but no scope keys are configured',
    ]);
    expect(
      problemsOf({ COGNITION_SCOPING_ENABLED: 'yes', COGNITION_SCOPE_KEYS: 'user,user,Bad Key' }),
    ).toEqual([
      'COGNITION_SCOPE_KEYS: "bad key" is not a valid scope key (lowercase letters, digits, - and _)',
      'COGNITION_SCOPE_KEYS: duplicate scope keys',
    ]);
    expect(problemsOf({ COGNITION_API_KEYS: 'abcdefghijklmnop0123:user=alice' })).toEqual([
      'COGNITION_API_KEYS entry 1: carries scopes but COGNITION_SCOPING_ENABLED is false',
    ]);
    expect(
      problemsOf({
        COGNITION_SCOPING_ENABLED: 'true',
        COGNITION_API_KEYS:
          'abcdefghijklmnop0123:team=a,abcdefghijklmnop0123,zyxwvutsrqponmlk9876:user',
      }),
    ).toEqual([
      'COGNITION_API_KEYS entry 2: duplicate key',
      'COGNITION_API_KEYS entry 3: expected scopes as scopeKey=value;scopeKey=value, got "user"',
      'COGNITION_API_KEYS entry 1: scope key "team" is not one of COGNITION_SCOPE_KEYS (user)',
    ]);
  });

  it('never echoes an API key in a problem', () => {
    const secret = 'sh0rt!';
    const problems = problemsOf({ COGNITION_API_KEYS: `${secret},another-bad key value here` });
    expect(problems).toHaveLength(2);
    for (const problem of problems) expect(problem).not.toContain(secret);
  });

  it('reads the multi-node settings and refuses Redis without PostgreSQL', () => {
    const postgres = {
      COGNITION_PERSISTENCE_BACKEND: 'postgres',
      COGNITION_PERSISTENCE_URI: 'postgresql://u@127.0.0.1:5432/db',
    };
    expect(
      loadConfig({
        ...postgres,
        COGNITION_REDIS_URL: 'redis://127.0.0.1:6379',
        COGNITION_NODE_ID: 'node-1',
        COGNITION_RUN_LEASE_SECONDS: '2.5',
      }).cluster,
    ).toEqual({
      redisUrl: 'redis://127.0.0.1:6379',
      keyPrefix: 'cognition:',
      nodeId: 'node-1',
      leaseMs: 2500,
    });
    expect(() => loadConfig({ COGNITION_REDIS_URL: 'redis://127.0.0.1:6379' })).toThrow(
      /COGNITION_REDIS_URL: the multi-node mode needs COGNITION_PERSISTENCE_BACKEND=postgres/,
    );
    expect(() =>
      loadConfig({ ...postgres, COGNITION_REDIS_URL: 'http://x', COGNITION_NODE_ID: 'a b' }),
    ).toThrow(/COGNITION_REDIS_URL: expected a redis:\/\/[\s\S]*COGNITION_NODE_ID: expected 1-64/);
  });

  it('is documented: docs/configuration.md lists every setting and no other', () => {
    const doc = readFileSync(path.join(__dirname, '../../../../docs/configuration.md'), 'utf8');
    const documented = [...doc.matchAll(/^\| `([A-Z][A-Z0-9_]+)`/gm)].map((m) => m[1]);
    expect([...documented].sort()).toEqual(Object.keys(SETTINGS).sort());
  });
});
