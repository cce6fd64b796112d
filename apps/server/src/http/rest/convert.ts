import type {
  CallbackAttempt,
  Message,
  Run,
  SessionConfig,
  SessionWithUsage,
  StringMap,
} from '@cognition/contracts';
import type { StorageHealth } from '@cognition/storage';
import type { z } from 'zod';
import { feedbackToBody, usageToBody } from './usage-convert';
import type { HealthBodyT } from './schemas/health';
import type { MessageBodyT, SendMessageBody } from './schemas/messages';
import type { RunBodyT, RunDetailBodyT } from './schemas/runs';
import type {
  CreateSessionBody,
  SessionBodyT,
  SessionConfigBodyT,
  UpdateSessionBody,
} from './schemas/sessions';

/*
 * Field-by-field conversions between the REST wire shapes and the tRPC procedures' shapes.
 * Written out rather than generic key conversion so that user maps (metadata, scopes, tool args)
 * keep their keys exactly and the compiler checks every field of every shape.
 */

export function configFromBody(body: SessionConfigBodyT): SessionConfig {
  const config: SessionConfig = {};
  if (body.provider_id !== undefined) config.providerId = body.provider_id;
  if (body.model !== undefined) config.model = body.model;
  if (body.temperature !== undefined) config.temperature = body.temperature;
  if (body.max_tokens !== undefined) config.maxTokens = body.max_tokens;
  return config;
}

export function configToBody(config: SessionConfig): SessionConfigBodyT {
  const body: SessionConfigBodyT = {};
  if (config.providerId !== undefined) body.provider_id = config.providerId;
  if (config.model !== undefined) body.model = config.model;
  if (config.temperature !== undefined) body.temperature = config.temperature;
  if (config.maxTokens !== undefined) body.max_tokens = config.maxTokens;
  return body;
}

function lifecycleInput(body: {
  system_prompt?: string | null | undefined;
  task?: string | null | undefined;
  expires_at?: Date | null | undefined;
  checkpoint_retention?: string | null | undefined;
}) {
  return {
    ...(body.system_prompt !== undefined ? { systemPrompt: body.system_prompt } : {}),
    ...(body.task !== undefined ? { task: body.task } : {}),
    ...(body.expires_at !== undefined ? { expiresAt: body.expires_at } : {}),
    ...(body.checkpoint_retention !== undefined
      ? { checkpointRetention: body.checkpoint_retention }
      : {}),
  };
}

export function createSessionInput(body: z.output<typeof CreateSessionBody>): {
  title?: string | null;
  agentName?: string;
  metadata?: StringMap;
  config?: SessionConfig;
  systemPrompt?: string | null;
  task?: string | null;
  expiresAt?: Date | null;
  checkpointRetention?: string | null;
} {
  return {
    ...lifecycleInput(body),
    ...(body.title !== undefined ? { title: body.title } : {}),
    ...(body.agent_name !== undefined ? { agentName: body.agent_name } : {}),
    ...(body.metadata !== undefined ? { metadata: body.metadata } : {}),
    ...(body.config !== undefined ? { config: configFromBody(body.config) } : {}),
  };
}

export function updateSessionInput(id: string, body: z.output<typeof UpdateSessionBody>) {
  return {
    id,
    ...(body.title !== undefined ? { title: body.title } : {}),
    ...(body.status !== undefined ? { status: body.status } : {}),
    ...(body.agent_name !== undefined ? { agentName: body.agent_name } : {}),
    ...(body.metadata !== undefined ? { metadata: body.metadata } : {}),
    ...(body.config !== undefined ? { config: configFromBody(body.config) } : {}),
    ...lifecycleInput(body),
    ...(body.expected_version !== undefined ? { expectedVersion: body.expected_version } : {}),
  };
}

export function sessionToBody(session: SessionWithUsage): SessionBodyT {
  return {
    usage: usageToBody(session.usage),
    id: session.id,
    thread_id: session.threadId,
    title: session.title,
    status: session.status,
    agent_name: session.agentName,
    config: configToBody(session.config),
    scopes: session.scopes,
    metadata: session.metadata,
    message_count: session.messageCount,
    version: session.version,
    parent_id: session.parentId,
    workspace_path: session.workspacePath,
    system_prompt: session.systemPrompt,
    task: session.task,
    ended_at: session.endedAt?.toISOString() ?? null,
    last_activity_at: session.lastActivityAt.toISOString(),
    expires_at: session.expiresAt?.toISOString() ?? null,
    checkpoint_retention: session.checkpointRetention,
    created_at: session.createdAt.toISOString(),
    updated_at: session.updatedAt.toISOString(),
  };
}

export function messageToBody(message: Message): MessageBodyT {
  return {
    id: message.id,
    session_id: message.sessionId,
    role: message.role,
    content: message.content,
    tool_calls: message.toolCalls.map((call) => ({
      id: call.id,
      name: call.name,
      args: call.args,
    })),
    tool_call_id: message.toolCallId,
    token_count: message.tokenCount,
    model_used: message.modelUsed,
    parent_id: message.parentId,
    metadata: message.metadata,
    created_at: message.createdAt.toISOString(),
    ...(message.feedback !== undefined
      ? { feedback: message.feedback ? feedbackToBody(message.feedback) : null }
      : {}),
  };
}

/** The breaker figures `/health` reports; fields a snapshot does not carry are left out. */
export interface BreakerFigures {
  name: string;
  state: 'CLOSED' | 'OPEN' | 'HALF_OPEN';
  totalCalls?: number;
  failedCalls?: number;
  rejectedCalls?: number;
  consecutiveFailures?: number;
  openedAt?: Date | null;
}

export function healthToBody(health: {
  status: 'healthy' | 'degraded';
  version: string;
  activeSessions: number | null;
  runs: { executing: number; queued: number; limit: number } | null;
  storage: StorageHealth;
  circuitBreakers: readonly BreakerFigures[];
  node: {
    id: string | null;
    ownedRuns: string[];
    redis: { status: string; ok: boolean; latencyMs: number | null; error?: string } | null;
  } | null;
}): HealthBodyT {
  const storage = health.storage;
  return {
    status: health.status,
    version: health.version,
    active_sessions: health.activeSessions,
    runs: health.runs,
    storage: {
      backend: storage.backend,
      ok: storage.ok,
      latency_ms: storage.latencyMs,
      ...(storage.pool ? { pool: { ...storage.pool } } : {}),
      ...(storage.error !== undefined ? { error: storage.error } : {}),
    },
    circuit_breakers: Object.fromEntries(
      health.circuitBreakers.map((b) => [b.name, breakerToBody(b)]),
    ),
    node: health.node && {
      id: health.node.id,
      owned_runs: health.node.ownedRuns,
      redis: health.node.redis && {
        status: health.node.redis.status,
        ok: health.node.redis.ok,
        latency_ms: health.node.redis.latencyMs,
        ...(health.node.redis.error !== undefined ? { error: health.node.redis.error } : {}),
      },
    },
  };
}

/** One breaker as the original reports it: keyed by name, states in lower case. */
function breakerToBody(b: BreakerFigures): HealthBodyT['circuit_breakers'][string] {
  return {
    state: b.state.toLowerCase() as 'closed' | 'open' | 'half_open',
    ...(b.totalCalls !== undefined ? { total_calls: b.totalCalls } : {}),
    ...(b.failedCalls !== undefined ? { failed_calls: b.failedCalls } : {}),
    ...(b.rejectedCalls !== undefined ? { rejected_calls: b.rejectedCalls } : {}),
    ...(b.consecutiveFailures !== undefined ? { consecutive_failures: b.consecutiveFailures } : {}),
    ...(b.openedAt !== undefined ? { opened_at: b.openedAt?.toISOString() ?? null } : {}),
  };
}

export function sendMessageInput(sessionId: string, body: z.output<typeof SendMessageBody>) {
  return {
    sessionId,
    content: body.content,
    ...(body.parent_id !== undefined ? { parentId: body.parent_id } : {}),
    ...(body.callback_url !== undefined ? { callbackUrl: body.callback_url } : {}),
    ...(body.idempotency_key !== undefined ? { idempotencyKey: body.idempotency_key } : {}),
    ...(body.metadata !== undefined ? { metadata: body.metadata } : {}),
    ...(body.multitask_strategy !== undefined
      ? { multitaskStrategy: body.multitask_strategy }
      : {}),
  };
}

const iso = (date: Date | null): string | null => (date === null ? null : date.toISOString());

export function runToBody(run: Run): RunBodyT {
  return {
    id: run.id,
    session_id: run.sessionId,
    status: run.status,
    input_message_id: run.inputMessageId,
    idempotency_key: run.idempotencyKey,
    multitask_strategy: run.multitaskStrategy,
    supersedes_run_id: run.supersedesRunId,
    pending_action: run.pendingAction,
    usage: run.usage
      ? {
          input_tokens: run.usage.inputTokens,
          output_tokens: run.usage.outputTokens,
          cost_usd: run.usage.costUsd,
          model: run.usage.model,
          provider: run.usage.provider,
          estimated: run.usage.estimated,
        }
      : null,
    error: run.error ? { code: run.error.code, message: run.error.message } : null,
    created_at: run.createdAt.toISOString(),
    started_at: iso(run.startedAt),
    finished_at: iso(run.finishedAt),
    updated_at: run.updatedAt.toISOString(),
  };
}

/** `runs.get`'s output as REST answers it; the attempts' `runId` is the run's own id, left out. */
export function runDetailToBody(
  run: Run & { callbackAttempts: readonly CallbackAttempt[] },
): RunDetailBodyT {
  return {
    ...runToBody(run),
    callback_attempts: run.callbackAttempts.map((a) => ({
      delivery_id: a.deliveryId,
      url: a.url,
      attempt: a.attempt,
      started_at: a.startedAt.toISOString(),
      duration_ms: a.durationMs,
      status: a.status,
      ok: a.ok,
      error: a.error,
    })),
  };
}

/** A REST page query (`limit`, `offset`) as the API's input: only the parts the request sent. */
export function pageOf(query: { limit?: number | undefined; offset?: number | undefined }): {
  limit?: number;
  offset?: number;
} {
  return {
    ...(query.limit !== undefined ? { limit: query.limit } : {}),
    ...(query.offset !== undefined ? { offset: query.offset } : {}),
  };
}
