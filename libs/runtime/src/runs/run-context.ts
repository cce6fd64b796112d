import type { CircuitBreakerRegistry, CircuitBreakerOptions } from '@cognition/circuit-breaker';
import type { Session } from '@cognition/contracts';
import type { RunFence, Scope, StorageBackend } from '@cognition/storage';
import { COGNITION_KWARGS_KEY } from '@cognition/storage';
import type { CognitionMessageKwargs } from '@cognition/storage';
import type { ExecutionBackendFactory } from '@cognition/sandbox';
import { RuntimeError, errorMessage } from '../errors';
import type { EventLog } from '../events/event-log';
import type { Logger } from '../logger';
import type { ChatModelFactory } from '../providers/chat-model';
import type { SkillLibrary } from '../skills/skill-library';
import type { ConfigRegistry } from '../registry/config-registry';
import type { RunObserver } from '../telemetry/observer';
import type { McpManager } from '../mcp/mcp-manager';
import type { ToolCatalog } from '../tools/catalog';
import type { UserGraphs } from '../user-graphs/user-graphs';
import type { Outcome } from '../run-outcome';
import type { RunEmitter } from './run-emitter';

/**
 * Why a run is being cancelled: by a caller (`aborted`), by a caller who removes it as if it
 * had never been sent (`removed`: LangGraph's cancel with `action=rollback`), by shutdown
 * (`interrupted`), or by a newer message sent with `multitask_strategy` `interrupt`
 * (`superseded`) or `rollback` (`rolled_back`), or because another node took the run over
 * (`lost`).
 */
export type CancelReason =
  'aborted' | 'removed' | 'interrupted' | 'superseded' | 'rolled_back' | 'lost';

export const SUPERSEDED_MESSAGE = 'Interrupted by a newer message (multitask_strategy "interrupt")';
export const ROLLED_BACK_MESSAGE =
  'Rolled back: a newer message replaced this run (multitask_strategy "rollback")';
export const REMOVED_MESSAGE = 'Rolled back: the run was cancelled and removed';
export const CANCELLED_PENDING_MESSAGE = 'Cancelled before it started';

/** The outcome of a run cancelled for `reason` (no reason recorded: an abort). */
export function cancelledOutcome(reason: CancelReason | null): Outcome {
  switch (reason) {
    case 'superseded':
      return { kind: 'interrupted', message: SUPERSEDED_MESSAGE };
    case 'rolled_back':
      return { kind: 'rolled_back' };
    case 'removed':
      return { kind: 'rolled_back', message: REMOVED_MESSAGE };
    case 'lost':
      return { kind: 'lost' };
    case 'interrupted':
      return { kind: 'interrupted' };
    case 'aborted':
    case null:
      return { kind: 'aborted' };
  }
}

/** A run this process executes (from acceptance until its terminal event was handed to the log). */
export interface ActiveRun {
  runId: string;
  sessionId: string;
  scope: Scope;
  controller: AbortController;
  emitter: RunEmitter;
  /**
   * The claim this process executes the run under (null on a single node): every write of the
   * run's execution carries it, and storage refuses them once another claim took the run.
   */
  fence: RunFence | null;
  /**
   * Checked before each model call and tool round: true while this process surely still holds
   * the run's claim; otherwise it stops the execution (as a refused write does) and answers
   * false, so a node whose renewals are late does not call the model or run tools for a run
   * another node may be executing already. Always true on a single node.
   */
  claimHeld: () => boolean;
  cancelReason: CancelReason | null;
  /** Settles once the run finished (never rejects). */
  done: Promise<void>;
}

/**
 * Storage refused a write of the run under its claim (`RunFencedError`): another claim took it
 * over. Its execution here stops at once (outcome `lost`, whatever else cancelled it: nothing
 * more recorded, nothing more emitted) and what the event log still holds of it is dropped.
 */
export function stopFenced(run: ActiveRun, log: EventLog): void {
  run.emitter.abandon();
  run.cancelReason = 'lost';
  run.controller.abort();
  void log.abandon([run.runId], 0);
}

/** The collaborators every part of the run machinery shares (built once by `RunManager`). */
export interface RunContext {
  storage: StorageBackend;
  sandbox: ExecutionBackendFactory;
  /** The agents and providers in force: read once at every run start (they change at run time). */
  registry: ConfigRegistry;
  log: EventLog;
  breakers: CircuitBreakerRegistry;
  breakerOptions: Omit<CircuitBreakerOptions, 'isFailure'> | undefined;
  chatModelFactory: ChatModelFactory;
  catalog: ToolCatalog;
  /** The MCP connections (per session and server) whose tools runs add to the catalog's. */
  mcp: McpManager;
  logger: Logger;
  workspaceRoot: string;
  maxSteps: number;
  /** Receives the runs' telemetry (metrics); a no-op unless the server configures one. */
  observer: RunObserver;
  /** The server workspace's skills (`read_skill`); null: no agent is shown any. */
  skills: SkillLibrary | null;
  /** The graphs of `langgraph.json` graph runs execute (none without one). */
  userGraphs: UserGraphs;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/** The `additional_kwargs` the projection reads the parent and metadata of a message from. */
export function kwargs(
  parentId: string | null,
  metadata: Record<string, string>,
): Record<string, unknown> {
  const value: CognitionMessageKwargs = { parentId, metadata };
  return { [COGNITION_KWARGS_KEY]: value };
}

export function toRuntimeError(error: unknown, maxSteps: number): RuntimeError {
  if (error instanceof RuntimeError) return error;
  if (error instanceof Error && error.name === 'GraphRecursionError') {
    return new RuntimeError('TIMEOUT', `The agent did not finish within ${maxSteps} steps`, {
      cause: error,
    });
  }
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'RUN_IN_PROGRESS' || code === 'STORAGE_ERROR' || code === 'UNAVAILABLE') {
    return new RuntimeError(
      'UNAVAILABLE',
      `Storage failed during the run: ${errorMessage(error)}`,
      {
        cause: error,
      },
    );
  }
  return new RuntimeError('INTERNAL_ERROR', `The run failed: ${errorMessage(error)}`, {
    cause: error,
  });
}

/** The session of `sessionId` within `scope`, or SESSION_NOT_FOUND. */
export async function requireSession(
  storage: StorageBackend,
  sessionId: string,
  scope: Scope,
): Promise<Session> {
  const session = await storage.sessions.get(sessionId, scope);
  if (!session) throw new RuntimeError('SESSION_NOT_FOUND', `Session not found: ${sessionId}`);
  return session;
}
