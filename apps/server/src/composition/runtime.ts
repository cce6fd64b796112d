import type { CircuitBreakerRegistry } from '@cognition/circuit-breaker';
import {
  AgentRegistry,
  ContextInspector,
  InMemoryEventLog,
  ProviderRegistry,
  RunManager,
  SkillLibrary,
  StorageEventLog,
  isRuntimeError,
  parseMcpServersFile,
  resolveLlmConfig,
} from '@cognition/runtime';
import type {
  EnvProviderChoice,
  EventLog,
  GlobalMcpServer,
  LlmConfig,
  RunObserver,
  ToolCatalogOptions,
  UserGraphs,
} from '@cognition/runtime';
import type { RedisCluster } from '@cognition/cluster-redis';
import type { ExecutionBackendFactory } from '@cognition/sandbox';
import type { StorageBackend } from '@cognition/storage';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import type { LlmSettings, ServerConfig, ToolsConfig } from '../config';
import { ConfigError } from '../config';

/**
 * The LLM configuration from the environment values and the optional providers file, and how
 * the provider was chosen when an API key alone chose it.
 * @throws ConfigError naming the variable or `<file>: providers.N.field` of each problem.
 */
export async function loadLlmSettings(
  llm: LlmSettings,
): Promise<{ config: LlmConfig; choice: EnvProviderChoice | null }> {
  let providersFile: { path: string; content: string } | undefined;
  if (llm.providersFile !== null) {
    try {
      providersFile = {
        path: llm.providersFile,
        content: await readFile(llm.providersFile, 'utf8'),
      };
    } catch (error) {
      throw new ConfigError([
        `COGNITION_PROVIDERS_FILE: cannot read ${llm.providersFile}: ${(error as Error).message}`,
      ]);
    }
  }
  let pricesFile: { path: string; content: string } | undefined;
  if (llm.pricesFile !== null) {
    try {
      pricesFile = { path: llm.pricesFile, content: await readFile(llm.pricesFile, 'utf8') };
    } catch (error) {
      throw new ConfigError([
        `COGNITION_PRICES_FILE: cannot read ${llm.pricesFile}: ${(error as Error).message}`,
      ]);
    }
  }
  const present = <T>(value: T | null): T | undefined => value ?? undefined;
  try {
    return resolveLlmConfig({
      provider: present(llm.provider),
      model: present(llm.model),
      openaiApiKey: present(llm.openaiApiKey),
      anthropicApiKey: present(llm.anthropicApiKey),
      openaiCompatibleBaseUrl: present(llm.openaiCompatibleBaseUrl),
      openaiCompatibleApiKey: present(llm.openaiCompatibleApiKey),
      ...(providersFile ? { providersFile } : {}),
      ...(pricesFile ? { pricesFile } : {}),
    });
  } catch (error) {
    if (isRuntimeError(error) && error.code === 'PROVIDER_CONFIG_ERROR') {
      throw new ConfigError(
        error.issues.length > 0
          ? error.issues.map((issue) => `${issue.path}: ${issue.message}`)
          : [error.message],
      );
    }
    throw error;
  }
}

/**
 * The servers of `COGNITION_MCP_SERVERS_FILE` (none when unset).
 * @throws ConfigError naming `COGNITION_MCP_SERVERS_FILE: servers.N.field` of each problem, or
 *   the file that cannot be read.
 */
export async function loadMcpServers(file: string | null): Promise<GlobalMcpServer[]> {
  if (file === null) return [];
  let content: string;
  try {
    content = await readFile(file, 'utf8');
  } catch (error) {
    throw new ConfigError([
      `COGNITION_MCP_SERVERS_FILE: cannot read ${file}: ${(error as Error).message}`,
    ]);
  }
  try {
    return parseMcpServersFile(content);
  } catch (error) {
    if (isRuntimeError(error)) {
      throw new ConfigError(
        error.issues.map((issue) => `COGNITION_MCP_SERVERS_FILE: ${issue.path}: ${issue.message}`),
      );
    }
    throw error;
  }
}

/** Where sessions without their own `workspacePath` keep their files: `<root>/sessions/<id>`. */
export function sessionsRoot(workspaceRoot: string): string {
  return path.join(workspaceRoot, 'sessions');
}

/**
 * The durable, storage-backed event log (streams survive a restart), unless the storage is
 * memory (nothing to outlive) or `COGNITION_EVENT_LOG=memory` asks for the in-process one.
 */
function createEventLog(config: ServerConfig, storage: StorageBackend): EventLog {
  if (config.sse.eventLog === 'memory' || storage.kind === 'memory') {
    return new InMemoryEventLog({ bufferSize: config.sse.bufferSize });
  }
  return new StorageEventLog({ store: storage.events, retainPerSession: config.sse.bufferSize });
}

export interface RuntimeDeps {
  storage: StorageBackend;
  sandbox: ExecutionBackendFactory;
  breakers: CircuitBreakerRegistry;
  logger: Logger;
  /** Receives the runs' metrics (default: none). */
  observer?: RunObserver;
  /** Decorates the event log (telemetry counts its subscriptions). */
  wrapEventLog?: (log: EventLog) => EventLog;
  /** The graphs of langgraph.json, which the LangGraph API's graph runs execute. */
  userGraphs?: UserGraphs;
}

/** The runtime services the API is given, and the LLM line of the startup log. */
export interface Runtime {
  runs: RunManager;
  /** The context-window view, on the same agents, providers and tools as the runs. */
  context: ContextInspector;
  /** The configured providers in one line, e.g. `openai (gpt-4o-mini)`. */
  llm: string;
  /** Several nodes: the Redis side (event fan-out, control channel); null on one node. */
  cluster: RedisCluster | null;
  /** The workspace's skills (`<workspace>/.cognition/skills`), for runs and `GET /skills`. */
  skills: SkillLibrary;
}

/**
 * The agent runtime as configured: providers, agents (built-ins plus
 * `<workspace>/.cognition/agents`), the event log (`createEventLog`), the `RunManager` and the
 * context-window view.
 * Without any provider the server still runs: each message then fails at once with an `error`
 * event `PROVIDER_CONFIG_ERROR`, and a warning says so here.
 * @throws ConfigError for invalid LLM settings; RuntimeError VALIDATION_ERROR naming an invalid
 *   agent file.
 */
export async function createRuntime(config: ServerConfig, deps: RuntimeDeps): Promise<Runtime> {
  const llm = await loadLlmSettings(config.llm);
  const providers = new ProviderRegistry(llm.config);
  const agents = await AgentRegistry.load(config.workspaceRoot);
  // Read again at every turn; listed once here so a broken SKILL.md is logged at startup.
  const skills = new SkillLibrary({
    workspace: config.workspaceRoot,
    logger: deps.logger.child({ component: 'skills' }),
  });
  const listed = await skills.list();
  if (listed.skills.length > 0) {
    deps.logger.info(
      { skills: listed.skills.map((s) => s.name) },
      `Skills: ${listed.skills.length} in ${skills.dir}`,
    );
  }
  const mcpServers = await loadMcpServers(config.tools.mcpServersFile);
  const summaries = providers.summaries();
  if (providers.enabled().length === 0) {
    deps.logger.warn(
      'No LLM provider configured: the server runs, but every message fails with PROVIDER_CONFIG_ERROR until OPENAI_API_KEY or ANTHROPIC_API_KEY is set (or COGNITION_LLM_PROVIDER with COGNITION_LLM_MODEL, or COGNITION_PROVIDERS_FILE)',
    );
  } else {
    if (llm.choice) deps.logger.info({ provider: llm.choice.kind }, llm.choice.explanation);
    deps.logger.info(
      {
        providers: summaries.map((p) => ({ id: p.id, kind: p.kind, model: p.model })),
        agents: agents.list().map((a) => a.name),
      },
      `LLM providers: ${summaries.map((p) => `${p.id} (${p.model})`).join(', ')}`,
    );
  }
  const { callbacks } = config;
  const llmLine =
    summaries.length === 0
      ? 'none (set OPENAI_API_KEY or ANTHROPIC_API_KEY)'
      : summaries.map((p) => `${p.kind} (${p.model})`).join(', ');
  const eventLog = createEventLog(config, deps.storage);
  // The Redis client is loaded only for a cluster node: a single node never needs it.
  const cluster = config.cluster
    ? await (
        await import('@cognition/cluster-redis')
      ).connectRedisCluster({
        url: config.cluster.redisUrl,
        keyPrefix: config.cluster.keyPrefix,
        nodeId: config.cluster.nodeId,
        store: eventLog,
        breakers: deps.breakers,
        logger: deps.logger.child({ component: 'cluster' }),
      })
    : null;
  const runs = new RunManager({
    storage: deps.storage,
    sandbox: deps.sandbox,
    agents,
    providers,
    // Subscriptions are counted on the log the runs and streams use (the cluster's, if any).
    eventLog: (deps.wrapEventLog ?? ((log: EventLog) => log))(cluster?.eventLog ?? eventLog),
    ...(cluster && config.cluster
      ? {
          control: cluster.control,
          cluster: { nodeId: config.cluster.nodeId, leaseMs: config.cluster.leaseMs },
        }
      : {}),
    workspaceRoot: sessionsRoot(config.workspaceRoot),
    ...(deps.userGraphs ? { userGraphs: deps.userGraphs } : {}),
    breakers: deps.breakers,
    maxConcurrentRuns: config.maxConcurrentRuns,
    recovery: config.runRecovery,
    maxRecoveries: config.maxRunRecoveries,
    callbacks: {
      ...(callbacks.secret !== null ? { secret: callbacks.secret } : {}),
      maxAttempts: callbacks.maxAttempts,
      initialDelayMs: callbacks.initialDelayMs,
      maxDelayMs: callbacks.maxDelayMs,
      timeoutMs: callbacks.timeoutMs,
      allowPrivateNetwork: callbacks.allowPrivateNetwork,
      // A2A push notification configs: the body an A2A task, with the config's token and auth.
      // The A2A SDK is loaded with the first such callback, not at every start.
      format: async (payload, callbackConfig) =>
        (await import('../http/protocols/a2a/push-notification')).a2aPushNotification(
          payload,
          callbackConfig,
        ),
    },
    tools: toolOptions(config.tools, config.workspaceRoot),
    mcp: { servers: mcpServers },
    logger: deps.logger.child({ component: 'runtime' }),
    ...(deps.observer ? { observer: deps.observer } : {}),
    skills,
  });
  return {
    runs,
    context: new ContextInspector({ storage: deps.storage, agents, providers, skills }),
    llm: llmLine,
    cluster,
    skills,
  };
}

/**
 * The tools' settings as the runtime's catalog options: the network tools', and the workspace
 * root whose node_modules `inspect_package` looks in after the session's own.
 */
function toolOptions(tools: ToolsConfig, workspaceRoot: string): ToolCatalogOptions {
  const search = tools.webSearch;
  return {
    webFetch: { allowPrivateNetwork: tools.webFetchAllowPrivateNetwork },
    inspectPackage: { workspaceRoot },
    ...(search
      ? {
          webSearch: {
            provider: search.provider,
            ...(search.url !== null ? { url: search.url } : {}),
            ...(search.apiKey !== null ? { apiKey: search.apiKey } : {}),
          },
        }
      : {}),
  };
}
