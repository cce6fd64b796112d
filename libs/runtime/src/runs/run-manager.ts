import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { CircuitBreaker } from '@cognition/circuit-breaker';
import { CircuitBreakerRegistry } from '@cognition/circuit-breaker';
import type { CircuitBreakerOptions, CircuitBreakerSnapshot } from '@cognition/circuit-breaker';
import type {
  AgentEventEnvelope,
  CallbackAttempt,
  ErrorCode,
  Message,
  Run,
  RunStatus,
  Session,
  SessionConfig,
} from '@cognition/contracts';
import {
  EventIdSchema,
  IdSchema,
  MESSAGE_CONTENT_MAX,
  StringMapSchema,
  isTerminalEvent,
  toFieldIssues,
  toWireMessage,
} from '@cognition/contracts';
import type { ExecutionBackend, ExecutionBackendFactory } from '@cognition/sandbox';
import type { Scope, StorageBackend } from '@cognition/storage';
import { COGNITION_KWARGS_KEY } from '@cognition/storage';
import type { CognitionMessageKwargs } from '@cognition/storage';
import { HumanMessage, ToolMessage } from '@langchain/core/messages';
import type { BaseMessage } from '@langchain/core/messages';
import { z } from 'zod';
import type { AgentDefinition } from '../agents/agent';
import type { AgentRegistry } from '../agents/registry';
import type { CallbackOptions, CompletionPayload } from '../callbacks/callback-dispatcher';
import { CallbackDispatcher } from '../callbacks/callback-dispatcher';
import { createCompactor } from '../context/setup';
import { RuntimeError, errorMessage } from '../errors';
import type { EventLog } from '../events/event-log';
import { createAgentGraph, danglingToolCalls } from '../graph/agent-graph';
import { refuseNonPublicHost } from '../net/public-address';
import { RunSlots } from './run-slots';
import { EVENT_SEQ_WIDTH, newMessageId, newRunId, seqOfEventId } from '../ids';
import type { Logger } from '../logger';
import { silentLogger } from '../logger';
import type { ChatModelFactory } from '../providers/chat-model';
import { createChatModel, isProviderOutage } from '../providers/chat-model';
import type { ProviderRegistry, ResolvedModel } from '../providers/registry';
import { UsageMeter } from '../providers/usage';
import type { ToolCatalogOptions } from '../tools/catalog';
import { ToolCatalog, toToolDefinition } from '../tools/catalog';
import type { RuntimeTool, ToolResult } from '../tools/types';
import type { BoundChatModel } from './agent-turn';
import { AgentTurn, TOOL_EXIT, textOf } from './agent-turn';
import { openEventStream } from './event-stream';
import { RunEmitter } from './run-emitter';

export interface RunManagerOptions {
  storage: StorageBackend;
  sandbox: ExecutionBackendFactory;
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
  /** Graph steps (model calls + tool rounds) per run before it fails. Default 50. */
  maxSteps?: number;
  callbacks?: CallbackOptions;
  /** How long `abort` waits for the run to wind down before returning. Default 5000 ms. */
  abortWaitMs?: number;
  /**
   * Runs executing at once in this process; later ones wait `queued` (see `RunSlots`).
   * Default {@link DEFAULT_MAX_CONCURRENT_RUNS}.
   */
  maxConcurrentRuns?: number;
  logger?: Logger;
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

/** Input of `send`. `scope` is the caller's scope (from auth), never from the request body. */
export interface SendInput {
  sessionId: string;
  scope: Scope;
  content: string;
  /** A message of the same session this one answers (threading); null/absent: none. */
  parentId?: string | null;
  metadata?: Record<string, string>;
  /** http(s) URL POSTed the completion payload when the run ends. */
  callbackUrl?: string | null;
  /** A retried send with the same key returns the first run instead of starting another. */
  idempotencyKey?: string | null;
}

export interface SendResult {
  run: Run;
  /** The persisted user message (for a replayed idempotency key: the first one). */
  message: Message;
  /** false when the idempotency key matched an earlier run. */
  created: boolean;
}

export interface AbortResult {
  /** The run that was active, as updated; null when the session had none. */
  run: Run | null;
  /** true when this process was executing the run and cancelled it. */
  aborted: boolean;
}

export interface EventsOptions {
  /** Only this run's events, ending with its terminal event. Default: the session's current run. */
  runId?: string;
  /** Resume after this id (a client's `Last-Event-ID`); a `reconnected` event comes first. */
  lastEventId?: string;
  /** Ends the stream (e.g. the client disconnected). */
  signal?: AbortSignal;
}

const SendInputSchema = z.strictObject({
  sessionId: IdSchema,
  scope: StringMapSchema,
  content: z.string().min(1).max(MESSAGE_CONTENT_MAX),
  parentId: IdSchema.nullable().optional(),
  metadata: StringMapSchema.optional(),
  callbackUrl: z
    .url({ protocol: /^https?$/, error: 'must be an http or https URL' })
    .max(2048)
    .nullable()
    .optional(),
  idempotencyKey: z.string().min(1).max(256).nullable().optional(),
});

const NOT_ACCEPTING: readonly Session['status'][] = ['suspended', 'completed', 'failed'];

type Outcome =
  | { kind: 'completed' }
  | { kind: 'aborted' }
  | { kind: 'interrupted' }
  | { kind: 'failed'; error: RuntimeError };

interface ActiveRun {
  runId: string;
  sessionId: string;
  scope: Scope;
  controller: AbortController;
  emitter: RunEmitter;
  /** Why the run is being cancelled: by a caller (`aborted`) or by shutdown (`interrupted`). */
  cancelReason: 'aborted' | 'interrupted' | null;
  done: Promise<void>;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

function kwargs(
  parentId: string | null,
  metadata: Record<string, string>,
): Record<string, unknown> {
  const value: CognitionMessageKwargs = { parentId, metadata };
  return { [COGNITION_KWARGS_KEY]: value };
}

function toRuntimeError(error: unknown, maxSteps: number): RuntimeError {
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

/**
 * Starts, follows and cancels agent runs: the surface the API calls.
 *
 * Invariants:
 * - the user message is persisted before its run exists, with the id its checkpoint message
 *   carries, so the projection and the checkpoint agree;
 * - at most one active run per session (enforced by storage);
 * - every run emits exactly one terminal event (`done` on success, `error` otherwise), after its
 *   status, usage and the session status were persisted;
 * - event ids of a session increase (see `EventIdSchema`), so a stream resumed with
 *   `lastEventId` receives exactly the events it missed while the log still holds them.
 */
export class RunManager {
  private readonly storage: StorageBackend;
  private readonly sandbox: ExecutionBackendFactory;
  private readonly agents: AgentRegistry;
  private readonly providers: ProviderRegistry;
  private readonly log: EventLog;
  private readonly breakers: CircuitBreakerRegistry;
  private readonly chatModelFactory: ChatModelFactory;
  private readonly catalog: ToolCatalog;
  private readonly callbacks: CallbackDispatcher;
  private readonly callbackOptions: CallbackOptions;
  private readonly logger: Logger;
  private readonly maxSteps: number;
  private readonly abortWaitMs: number;
  private readonly slots: RunSlots;
  private readonly active = new Map<string, ActiveRun>();
  private readonly sendLocks = new Map<string, Promise<void>>();
  private readonly closing = new AbortController();
  private accepting = true;

  constructor(private readonly options: RunManagerOptions) {
    this.storage = options.storage;
    this.sandbox = options.sandbox;
    this.agents = options.agents;
    this.providers = options.providers;
    this.log = options.eventLog;
    this.breakers = options.breakers ?? new CircuitBreakerRegistry();
    this.chatModelFactory = options.chatModelFactory ?? createChatModel;
    this.catalog = new ToolCatalog(options.tools);
    this.logger = options.logger ?? silentLogger;
    this.callbackOptions = options.callbacks ?? {};
    this.callbacks = new CallbackDispatcher(this.storage.runs, {
      logger: this.logger,
      ...this.callbackOptions,
    });
    this.maxSteps = options.maxSteps ?? 50;
    this.abortWaitMs = options.abortWaitMs ?? 5000;
    this.slots = new RunSlots(options.maxConcurrentRuns ?? DEFAULT_MAX_CONCURRENT_RUNS);
  }

  /**
   * Checks a session's agent and LLM overrides, for the API to call on session create/update.
   * @throws RuntimeError VALIDATION_ERROR naming `agentName`, `config.providerId` or `config.model`.
   */
  validateSessionInput(input: { agentName?: string; config?: SessionConfig }): void {
    if (input.agentName !== undefined) this.agents.resolvePrimary(input.agentName);
    if (input.config !== undefined) this.providers.validateSessionConfig(input.config);
  }

  /**
   * Persists the user message, creates the run and starts it in the background.
   * @throws RuntimeError VALIDATION_ERROR (field named), SESSION_NOT_FOUND, CONFLICT (session
   *   does not accept messages), UNAVAILABLE (shutting down); StorageError RUN_IN_PROGRESS when
   *   the session already has an active run.
   */
  async send(input: SendInput): Promise<SendResult> {
    const parsed = SendInputSchema.safeParse(input);
    if (!parsed.success) {
      const issues = toFieldIssues(parsed.error);
      throw new RuntimeError(
        'VALIDATION_ERROR',
        `Invalid message: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
        { issues },
      );
    }
    if (!this.accepting) throw new RuntimeError('UNAVAILABLE', 'The server is shutting down');
    // Serialising sends per session keeps a losing concurrent send from persisting a user
    // message that no run will ever answer (storage still arbitrates between nodes).
    return this.withSessionLock(parsed.data.sessionId, () => this.sendLocked(parsed.data));
  }

  private async withSessionLock<T>(sessionId: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.sendLocks.get(sessionId) ?? Promise.resolve();
    const current = previous.then(fn, fn);
    const settled = current.then(
      () => undefined,
      () => undefined,
    );
    this.sendLocks.set(sessionId, settled);
    try {
      return await current;
    } finally {
      if (this.sendLocks.get(sessionId) === settled) this.sendLocks.delete(sessionId);
    }
  }

  private async sendLocked(input: z.output<typeof SendInputSchema>): Promise<SendResult> {
    const { sessionId, scope, content, callbackUrl, idempotencyKey } = input;
    const session = await this.requireSession(sessionId, scope);
    if (idempotencyKey) {
      const replayed = await this.findByIdempotencyKey(session.id, idempotencyKey, scope);
      if (replayed) return replayed;
    }
    if (NOT_ACCEPTING.includes(session.status)) {
      throw new RuntimeError(
        'CONFLICT',
        `Session ${session.id} is ${session.status} and accepts no messages`,
      );
    }
    const parentId = input.parentId ?? null;
    if (parentId !== null && !(await this.storage.messages.get(session.id, parentId, scope))) {
      throw RuntimeError.field('parentId', `no message ${parentId} in this session`);
    }
    if (callbackUrl && !this.callbackOptions.allowPrivateNetwork) {
      // Refused here, where the caller can still be told; delivery checks again (DNS changes).
      // A host that does not resolve now is accepted: that may pass, and delivery retries.
      const refused = await refuseNonPublicHost(new URL(callbackUrl));
      if (refused?.kind === 'non-public') {
        throw RuntimeError.field(
          'callbackUrl',
          `${refused.message}; callbacks into the server's own network are not allowed by its configuration`,
        );
      }
    }
    if (await this.storage.runs.getActive(session.id)) {
      throw new RuntimeError('RUN_IN_PROGRESS', `Session ${session.id} already has an active run`);
    }
    const message = await this.storage.messages.create({
      id: newMessageId(),
      sessionId: session.id,
      role: 'user',
      content,
      parentId,
      metadata: input.metadata ?? {},
    });
    const { run, created } = await this.storage.runs.create({
      id: newRunId(),
      sessionId: session.id,
      status: 'queued',
      inputMessageId: message.id,
      idempotencyKey: idempotencyKey ?? null,
    });
    if (!created) {
      const first = run.inputMessageId
        ? await this.storage.messages.get(session.id, run.inputMessageId, scope)
        : null;
      return { run, message: first ?? message, created: false };
    }
    const activeRun: ActiveRun = {
      runId: run.id,
      sessionId: session.id,
      scope,
      controller: new AbortController(),
      emitter: new RunEmitter(this.log, session.id, run.id, this.logger),
      cancelReason: null,
      done: Promise.resolve(),
    };
    this.active.set(run.id, activeRun);
    activeRun.done = this.execute(activeRun, session, message, callbackUrl ?? null).catch(
      (error: unknown) => {
        this.logger.error({ err: error, runId: run.id }, 'run execution crashed');
        this.active.delete(run.id);
      },
    );
    return { run, message, created: true };
  }

  /**
   * Cancels the session's active run: the model request and any running tool are aborted,
   * what was produced so far is checkpointed (hence projected), the run ends `aborted` and
   * subscribers receive the final events. Waits (bounded) for the run to wind down.
   * @throws RuntimeError SESSION_NOT_FOUND.
   */
  async abort(sessionId: string, scope: Scope): Promise<AbortResult> {
    await this.requireSession(sessionId, scope);
    const local = [...this.active.values()].find((a) => a.sessionId === sessionId);
    if (!local) {
      return { run: await this.storage.runs.getActive(sessionId), aborted: false };
    }
    local.cancelReason ??= 'aborted';
    local.controller.abort();
    await Promise.race([local.done, sleep(this.abortWaitMs)]);
    return { run: await this.storage.runs.get(local.runId), aborted: true };
  }

  /**
   * The session's events as an async iterator of envelopes: replays what the log holds after
   * `lastEventId` (or from the start of the followed run), then follows live events until the
   * followed run's terminal event. The followed run is `runId`, else the session's active run,
   * else its latest run. Subscription starts when this promise resolves, so no event emitted
   * afterwards is missed even if iteration starts later.
   * @throws RuntimeError SESSION_NOT_FOUND, RUN_NOT_FOUND, VALIDATION_ERROR (`lastEventId`).
   */
  async events(
    sessionId: string,
    scope: Scope,
    options: EventsOptions = {},
  ): Promise<AsyncGenerator<AgentEventEnvelope, void, undefined>> {
    if (
      options.lastEventId !== undefined &&
      !EventIdSchema.safeParse(options.lastEventId).success
    ) {
      throw RuntimeError.field('lastEventId', 'not an event id of this server');
    }
    await this.requireSession(sessionId, scope);
    let target: string | null;
    if (options.runId !== undefined) {
      const run = await this.storage.runs.get(options.runId);
      if (!run || run.sessionId !== sessionId) {
        throw new RuntimeError('RUN_NOT_FOUND', `Run not found: ${options.runId}`);
      }
      target = run.id;
    } else {
      const local = [...this.active.values()].find((a) => a.sessionId === sessionId);
      target =
        local?.runId ??
        (await this.storage.runs.getActive(sessionId))?.id ??
        (await this.storage.runs.list(sessionId))[0]?.id ??
        null;
    }
    const cursor = options.lastEventId ?? (target !== null ? `${target}:` : undefined);
    return openEventStream({
      log: this.log,
      sessionId,
      targetRunId: target,
      onlyRunId: options.runId ?? null,
      cursor,
      lastEventId: options.lastEventId,
      isLocal: (runId) => this.active.has(runId),
      isActive: async (runId) => {
        const run = await this.storage.runs.get(runId);
        return run !== null && (run.status === 'queued' || run.status === 'running');
      },
      signals: options.signal ? [options.signal, this.closing.signal] : [this.closing.signal],
      pollMs: 2000,
    });
  }

  /**
   * The completion-callback attempts recorded on a run (in storage, so also those of earlier
   * processes), oldest first; empty for a run without a callback or an unknown run.
   */
  callbackAttempts(runId: string): Promise<CallbackAttempt[]> {
    return this.storage.runs.listCallbackAttempts(runId);
  }

  /** How many runs execute and wait for a slot in this process, and the limit. */
  admission(): RunAdmission {
    return { executing: this.slots.active, queued: this.slots.queued, limit: this.slots.limit };
  }

  /** Runs executing in this process. */
  activeRunIds(): string[] {
    return [...this.active.keys()];
  }

  /** Figures of the LLM circuit breakers (and any other breaker of the shared registry). */
  breakerSnapshots(): CircuitBreakerSnapshot[] {
    return this.breakers.snapshots();
  }

  /**
   * At startup: marks runs that storage lists as active but no process executes any more
   * (the previous process died) `interrupted`, and gives each its terminal `error` event.
   * Call it before accepting traffic, and only where no other live node shares the database
   * (storage does not record which node owns a run).
   */
  async recoverInterrupted(): Promise<Run[]> {
    const recovered: Run[] = [];
    for (const run of await this.storage.runs.listActive()) {
      if (this.active.has(run.id)) continue;
      const message = 'The server stopped while the run was active';
      const updated = await this.storage.runs.update(run.id, {
        status: 'interrupted',
        error: { code: 'UNAVAILABLE', message },
        finishedAt: new Date(),
      });
      const { events } = await this.log.readAfter(run.sessionId, `${run.id}:`);
      const own = events.filter((e) => e.runId === run.id);
      if (!own.some((e) => isTerminalEvent(e.event))) {
        const lastId = own[own.length - 1]?.id;
        // Nothing of the run survived (in-memory log): take the highest sequence number so the
        // event sorts after anything a client may have seen before the restart.
        const startSeq = lastId ? (seqOfEventId(lastId) ?? 0) : 10 ** EVENT_SEQ_WIDTH - 2;
        const emitter = new RunEmitter(this.log, run.sessionId, run.id, this.logger, startSeq);
        emitter.emit({ type: 'error', code: 'UNAVAILABLE', message });
        await emitter.flush();
      }
      recovered.push(updated);
    }
    return recovered;
  }

  /**
   * For the API to call after deleting a session: cancels its run, forgets its events and
   * releases its sandbox.
   */
  async forgetSession(sessionId: string): Promise<void> {
    const local = [...this.active.values()].find((a) => a.sessionId === sessionId);
    if (local) {
      local.cancelReason ??= 'aborted';
      local.controller.abort();
      await Promise.race([local.done, sleep(this.abortWaitMs)]);
    }
    await this.log.dropSession(sessionId);
    await this.sandbox.release(sessionId);
  }

  /**
   * Stops accepting sends, cancels running runs (they end `interrupted` with their terminal
   * event), ends open event streams and stops callback retries. Bounded by `timeoutMs`.
   */
  async shutdown(timeoutMs = 5000): Promise<void> {
    this.accepting = false;
    const runs = [...this.active.values()];
    for (const run of runs) {
      run.cancelReason ??= 'interrupted';
      run.controller.abort();
    }
    await Promise.race([Promise.allSettled(runs.map((r) => r.done)), sleep(timeoutMs)]);
    this.closing.abort();
    await this.callbacks.close();
  }

  private async requireSession(sessionId: string, scope: Scope): Promise<Session> {
    const session = await this.storage.sessions.get(sessionId, scope);
    if (!session) throw new RuntimeError('SESSION_NOT_FOUND', `Session not found: ${sessionId}`);
    return session;
  }

  private async findByIdempotencyKey(
    sessionId: string,
    key: string,
    scope: Scope,
  ): Promise<SendResult | null> {
    const run = (await this.storage.runs.list(sessionId)).find((r) => r.idempotencyKey === key);
    if (!run) return null;
    const message = run.inputMessageId
      ? await this.storage.messages.get(sessionId, run.inputMessageId, scope)
      : null;
    if (!message) return null;
    return { run, message, created: false };
  }

  private breakerFor(resolved: ResolvedModel): CircuitBreaker {
    return this.breakers.get(`llm:${resolved.provider.id}`, {
      ...this.options.breakerOptions,
      isFailure: isProviderOutage,
    });
  }

  private bindModel(resolved: ResolvedModel, tools: readonly RuntimeTool[]): BoundChatModel {
    const chat = this.chatModelFactory(resolved);
    if (tools.length === 0) return chat;
    if (typeof chat.bindTools !== 'function') {
      throw new RuntimeError(
        'PROVIDER_CONFIG_ERROR',
        `The model of provider "${resolved.provider.id}" does not support tool calling`,
      );
    }
    return chat.bindTools(tools.map(toToolDefinition));
  }

  private backendLoader(session: Session): () => Promise<ExecutionBackend> {
    let pending: Promise<ExecutionBackend> | null = null;
    return () => {
      pending ??= (async () => {
        const root = session.workspacePath ?? join(this.options.workspaceRoot, session.id);
        await mkdir(root, { recursive: true });
        return this.sandbox.forSession(session.id, root);
      })();
      return pending;
    };
  }

  /** Waits for a slot (the run stays `queued`), runs the turn, and gives the slot back. */
  private async execute(
    active: ActiveRun,
    session: Session,
    userMessage: Message,
    callbackUrl: string | null,
  ): Promise<void> {
    const release = await this.slots.acquire(active.controller.signal);
    try {
      if (release === null) {
        // Aborted (or the server stopped) while queued: it ends without having started.
        const outcome: Outcome = { kind: active.cancelReason ?? 'aborted' };
        await this.finish(active, session, outcome, null, null, callbackUrl);
        return;
      }
      await this.executeTurn(active, session, userMessage, callbackUrl);
    } finally {
      release?.();
    }
  }

  private async executeTurn(
    active: ActiveRun,
    session: Session,
    userMessage: Message,
    callbackUrl: string | null,
  ): Promise<void> {
    const { emitter, controller } = active;
    const signal = controller.signal;
    let meter: UsageMeter | null = null;
    let turn: AgentTurn | null = null;
    let outcome: Outcome;
    try {
      await this.storage.runs.update(active.runId, { status: 'running', startedAt: new Date() });
      emitter.emit({ type: 'status', status: 'thinking' });
      const agent = this.agents.get(session.agentName);
      if (!agent) {
        throw new RuntimeError(
          'VALIDATION_ERROR',
          `The session's agent "${session.agentName}" is not defined on this server`,
        );
      }
      const resolved = this.providers.resolve(session.config, agent);
      const runMeter = new UsageMeter(
        resolved.provider.id,
        resolved.model,
        this.providers.price(resolved.model),
      );
      meter = runMeter;
      const tools = this.catalog.forAgent(agent, this.agents.subagents());
      const backend = this.backendLoader(session);
      const emit = (event: Parameters<RunEmitter['emit']>[0]) => void emitter.emit(event);
      turn = new AgentTurn({
        agent,
        tools,
        model: this.bindModel(resolved, tools),
        resolved,
        breaker: this.breakerFor(resolved),
        signal,
        emit,
        streamToClient: true,
        parentId: userMessage.id,
        runId: active.runId,
        usage: runMeter,
        backend,
        delegate: (name, task) =>
          this.delegate(
            { session, signal, emit, meter: runMeter, runId: active.runId, backend },
            name,
            task,
          ),
        compactor: createCompactor(
          { agent, resolved, tools, meter: runMeter },
          {
            providers: this.providers,
            chatModelFactory: this.chatModelFactory,
            breakerFor: (model) => this.breakerFor(model),
          },
        ),
      });
      const graph = createAgentGraph(turn, this.storage.checkpointer);
      const config = {
        configurable: { thread_id: session.threadId },
        recursionLimit: this.maxSteps,
      };
      const state = await graph.getState(config);
      const history = (state.values as { messages?: BaseMessage[] }).messages ?? [];
      const repairs = danglingToolCalls(history).map(
        (call) =>
          new ToolMessage({
            id: newMessageId(),
            tool_call_id: call.id,
            name: call.name,
            content: 'Not run: the previous run was interrupted.',
            status: 'error',
            additional_kwargs: kwargs(null, { exitCode: String(TOOL_EXIT.aborted) }),
          }),
      );
      const human = new HumanMessage({
        id: userMessage.id,
        content: userMessage.content,
        additional_kwargs: kwargs(userMessage.parentId, userMessage.metadata),
      });
      await graph.invoke({ messages: [...repairs, human] }, config);
      outcome = signal.aborted ? { kind: active.cancelReason ?? 'aborted' } : { kind: 'completed' };
    } catch (error) {
      outcome =
        signal.aborted && !(error instanceof RuntimeError)
          ? { kind: active.cancelReason ?? 'aborted' }
          : { kind: 'failed', error: toRuntimeError(error, this.maxSteps) };
    }
    await this.finish(active, session, outcome, meter, turn, callbackUrl);
  }

  private async delegate(
    parent: {
      session: Session;
      signal: AbortSignal;
      emit: (event: Parameters<RunEmitter['emit']>[0]) => void;
      meter: UsageMeter;
      runId: string;
      backend: () => Promise<ExecutionBackend>;
    },
    agentName: string,
    task: string,
  ): Promise<ToolResult> {
    const subagents = this.agents.subagents();
    const agent: AgentDefinition | undefined = subagents.find((a) => a.name === agentName);
    if (!agent) {
      const names = subagents.map((a) => a.name).join(', ') || 'none';
      return {
        output: `Unknown subagent "${agentName}". Available: ${names}.`,
        exitCode: TOOL_EXIT.unknownTool,
      };
    }
    parent.emit({ type: 'delegation', target_agent: agent.name, task });
    try {
      const resolved = this.providers.resolve(
        { providerId: parent.session.config.providerId },
        agent,
      );
      const meter = new UsageMeter(
        resolved.provider.id,
        resolved.model,
        this.providers.price(resolved.model),
      );
      parent.meter.addNested(meter);
      const tools = this.catalog.forAgent(agent, []);
      const turn = new AgentTurn({
        agent,
        tools,
        model: this.bindModel(resolved, tools),
        resolved,
        breaker: this.breakerFor(resolved),
        signal: parent.signal,
        emit: parent.emit,
        streamToClient: false,
        parentId: null,
        runId: parent.runId,
        usage: meter,
        backend: parent.backend,
        delegate: () =>
          Promise.resolve({
            output: 'Subagents cannot delegate further.',
            exitCode: TOOL_EXIT.unknownTool,
          }),
      });
      const result = await createAgentGraph(turn).invoke(
        { messages: [new HumanMessage({ id: newMessageId(), content: task })] },
        { recursionLimit: this.maxSteps },
      );
      if (parent.signal.aborted) return { output: 'Aborted.', exitCode: TOOL_EXIT.aborted };
      const last = result.messages[result.messages.length - 1];
      const text = last ? textOf(last.content) : '';
      return { output: text === '' ? '(the subagent returned no text)' : text, exitCode: 0 };
    } catch (error) {
      if (parent.signal.aborted) return { output: 'Aborted.', exitCode: TOOL_EXIT.aborted };
      return {
        output: `Subagent "${agent.name}" failed: ${errorMessage(error)}`,
        exitCode: TOOL_EXIT.failed,
      };
    }
  }

  private async finish(
    active: ActiveRun,
    session: Session,
    outcome: Outcome,
    meter: UsageMeter | null,
    turn: AgentTurn | null,
    callbackUrl: string | null,
  ): Promise<void> {
    const { emitter, runId, scope } = active;
    const usage = meter && meter.calls > 0 ? meter.toUsage() : null;
    if (usage && meter) {
      emitter.emit({
        type: 'usage',
        input_tokens: usage.inputTokens,
        output_tokens: usage.outputTokens,
        estimated_cost: usage.costUsd,
        provider: meter.provider,
        model: meter.model,
        estimated: usage.estimated,
      });
    }
    const status: RunStatus = outcome.kind;
    const runError =
      outcome.kind === 'failed'
        ? { code: outcome.error.code as ErrorCode, message: outcome.error.message }
        : outcome.kind === 'interrupted'
          ? { code: 'UNAVAILABLE' as const, message: 'The server shut down during the run' }
          : null;
    try {
      await this.storage.runs.update(runId, {
        status,
        usage,
        error: runError,
        finishedAt: new Date(),
      });
    } catch (error) {
      this.logger.error({ err: error, runId }, 'could not record the end of a run');
    }
    await this.updateSessionStatus(session, scope, outcome);
    let assistant: Message | null = null;
    if (turn?.lastAssistantId) {
      try {
        assistant = await this.storage.messages.get(session.id, turn.lastAssistantId, scope);
      } catch (error) {
        this.logger.warn({ err: error, runId }, 'could not read the final assistant message');
      }
    }
    emitter.emit({ type: 'status', status: 'idle' });
    switch (outcome.kind) {
      case 'completed':
        emitter.emit({ type: 'done', assistant_data: assistant ? toWireMessage(assistant) : null });
        break;
      case 'aborted':
        emitter.emit({ type: 'error', code: 'ABORTED', message: 'The run was aborted' });
        break;
      case 'interrupted':
        emitter.emit({
          type: 'error',
          code: 'UNAVAILABLE',
          message: 'The server shut down during the run',
        });
        break;
      case 'failed':
        emitter.emit({ type: 'error', code: outcome.error.code, message: outcome.error.message });
        break;
    }
    await emitter.flush();
    this.active.delete(runId);
    if (callbackUrl !== null) {
      const payload: CompletionPayload = {
        session_id: session.id,
        message_id: assistant?.id ?? null,
        run_id: runId,
        status,
        output: assistant?.content ?? '',
        token_usage: { input: usage?.inputTokens ?? 0, output: usage?.outputTokens ?? 0 },
        model_used: assistant?.modelUsed ?? usage?.model ?? null,
        completed_at: new Date().toISOString(),
        error: runError,
      };
      void this.callbacks.dispatch(callbackUrl, payload);
    }
  }

  private async updateSessionStatus(
    session: Session,
    scope: Scope,
    outcome: Outcome,
  ): Promise<void> {
    const next =
      outcome.kind === 'completed' ? 'active' : outcome.kind === 'failed' ? 'error' : null;
    if (next === null) return;
    try {
      const current = await this.storage.sessions.get(session.id, scope);
      if (!current) return;
      // Only move between `active` and `error`: an operator's suspend/complete wins.
      const movable = current.status === 'active' || current.status === 'error';
      if (movable && current.status !== next) {
        await this.storage.sessions.update(session.id, { status: next }, scope);
      }
    } catch (error) {
      this.logger.error(
        { err: error, sessionId: session.id },
        'could not update the session status',
      );
    }
  }
}
