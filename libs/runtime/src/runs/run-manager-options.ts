import type { CircuitBreakerOptions, CircuitBreakerRegistry } from '@cognition/circuit-breaker';
import type { Run } from '@cognition/contracts';
import type { ExecutionBackendFactory } from '@cognition/sandbox';
import type { StorageBackend } from '@cognition/storage';
import type { AgentRegistry } from '../agents/registry';
import type { CallbackOptions } from '../callbacks/callback-dispatcher';
import type { EventLog } from '../events/event-log';
import type { Logger } from '../logger';
import type { McpOptions } from '../mcp/mcp-manager';
import type { ChatModelFactory } from '../providers/chat-model';
import type { ProviderRegistry } from '../providers/registry';
import type { SkillLibrary } from '../skills/skill-library';
import type { RunObserver } from '../telemetry/observer';
import type { ToolCatalogOptions } from '../tools/catalog';
import type { RunControlChannel, RunQueue } from './coordination/ports';
import type { ClusterOptions } from './coordination/run-leases';
import type { RecoveryMode, RecoveryReport } from './run-recovery';
import type { UserGraphs } from '../user-graphs/user-graphs';

// The configuration of a `RunManager` and the figures it reports, apart from its behaviour.

/** What `recover()` did at startup: the runs it took care of, and the callbacks it went on with. */
export interface StartupRecovery extends RecoveryReport {
  /** Completion-callback deliveries a previous process left pending, now being delivered. */
  callbacks: number;
}

export interface RunManagerOptions {
  storage: StorageBackend;
  sandbox: ExecutionBackendFactory;
  /**
   * The static agents and providers (built-ins, files, environment); the ones stored through the
   * registry API (`storage.registry`) are added at every run start.
   */
  agents: AgentRegistry;
  providers: ProviderRegistry;
  eventLog: EventLog;
  /** Sessions without a `workspacePath` work in `<workspaceRoot>/<sessionId>`. */
  workspaceRoot: string;
  /** Shared with the rest of the server so `/health` shows the LLM breakers (`llm:<id>`). */
  breakers?: CircuitBreakerRegistry;
  /** Options of the LLM breakers (their `isFailure` is always the provider-outage rule). */
  breakerOptions?: Omit<CircuitBreakerOptions, 'isFailure'>;
  /** Builds chat models; default: the official LangChain clients. Tests inject fakes. */
  chatModelFactory?: ChatModelFactory;
  tools?: ToolCatalogOptions;
  /** MCP: the global servers, the idle close of connections, the `mcp:<server>` breakers. */
  mcp?: McpOptions;
  /** Graph steps (model calls + tool rounds) per run before it fails. Default 50. */
  maxSteps?: number;
  callbacks?: CallbackOptions;
  /** How long `abort` waits for the run to wind down before returning. Default 5000 ms. */
  abortWaitMs?: number;
  /**
   * Runs executing at once in this process; later ones wait `queued` (see `RunSlots`).
   * Default {@link DEFAULT_MAX_CONCURRENT_RUNS}. Ignored when `runQueue` is given.
   */
  maxConcurrentRuns?: number;
  /** Admission of runs into execution; default an in-process `RunSlots(maxConcurrentRuns)`. */
  runQueue?: RunQueue;
  /** Carries cancel requests to the executing process; default `InProcessRunControl`. */
  control?: RunControlChannel;
  /**
   * What `recover()` and `shutdown()` do with runs this process cannot finish: `resume` (the
   * default) leaves them to be taken up again from their last checkpoint, `interrupt` ends
   * them `interrupted`.
   */
  recovery?: RecoveryMode;
  /** A run resumed more often than this fails instead. Default 3. */
  maxRecoveries?: number;
  /**
   * Several nodes on one database: runs are claimed by lease (see `RunLeases`), and recovery
   * runs every half lease, taking over runs whose owner stopped renewing. Absent: one node.
   */
  cluster?: ClusterOptions;
  logger?: Logger;
  /** Receives run starts and ends, first tokens and every model call's usage (metrics). */
  observer?: RunObserver;
  /**
   * The server workspace's skills, listed to agents that have `read_skill` (see
   * `SkillLibrary`). Absent: agents are shown no skills.
   */
  skills?: SkillLibrary;
  /** The graphs of `langgraph.json`, which graph runs (`scheduler.sendGraph`) execute. */
  userGraphs?: UserGraphs;
}

export const DEFAULT_MAX_CONCURRENT_RUNS = 32;

/** The run admission figures of one process (see `maxConcurrentRuns`). */
export interface RunAdmission {
  /** Runs holding a slot: executing their turn (or finishing it). */
  executing: number;
  /** Runs accepted and waiting for a slot (status `queued`). */
  queued: number;
  /** `maxConcurrentRuns`. */
  limit: number;
}

export interface AbortResult {
  /** The run that was active, as updated; null when the session had none. */
  run: Run | null;
  /** true when the executor of the run received the cancel request and cancelled it. */
  aborted: boolean;
}
