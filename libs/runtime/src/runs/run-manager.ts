import { CircuitBreakerRegistry } from '@cognition/circuit-breaker';
import type { CircuitBreakerSnapshot } from '@cognition/circuit-breaker';
import type {
  AgentEventEnvelope,
  CallbackAttempt,
  HitlDecision,
  Run,
  SessionConfig,
} from '@cognition/contracts';
import type { Scope } from '@cognition/storage';
import { setMaxListeners } from 'node:events';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { validateSessionId } from '@cognition/sandbox';
import { CallbackDispatcher } from '../callbacks/callback-dispatcher';
import { silentLogger } from '../logger';
import { McpManager } from '../mcp/mcp-manager';
import { createChatModel } from '../providers/chat-model';
import { ConfigRegistry } from '../registry/config-registry';
import { NOOP_RUN_OBSERVER } from '../telemetry/observer';
import { ToolCatalog } from '../tools/catalog';
import { RunScheduler } from './admission/run-scheduler';
import { ActiveRuns } from './coordination/active-runs';
import { InProcessRunControl } from './coordination/in-process-run-control';
import type { RunControlChannel, RunQueue } from './coordination/ports';
import { RunLeases } from './coordination/run-leases';
import { RunSlots } from './coordination/run-slots';
import { RunExecutor } from './execution/run-executor';
import { PausedRuns } from './paused-runs';
import type { ResumedRun } from './paused-runs';
import type { CancelOptions } from './run-cancel';
import { RunCancel } from './run-cancel';
import type { RunContext } from './run-context';
import { sleep } from './run-context';
import { RunFinisher } from './run-finisher';
import type { SessionStatusWriter } from './run-finisher';
import type {
  AbortResult,
  RunAdmission,
  RunManagerOptions,
  StartupRecovery,
} from './run-manager-options';
import { DEFAULT_MAX_CONCURRENT_RUNS } from './run-manager-options';
import type { RecoveryMode } from './run-recovery';
import { RunRecovery } from './run-recovery';
import type { EventsOptions, RunEventsDeps, ThreadEventsOptions } from './streams/run-events';
import { openEventsOfRun, openRunEvents, openThreadEvents } from './streams/run-events';
import { UserGraphs } from '../user-graphs/user-graphs';

/**
 * Starts, follows and cancels agent runs: the surface the API calls. It composes the parts of
 * the run machinery (`runs/`): admission (`RunScheduler`), executing one run (`RunExecutor`),
 * finishing (`RunFinisher`), recovery (`run-recovery`), over three ports a cluster can replace:
 * the event log, the run queue and the control channel.
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
  private readonly ctx: RunContext;
  private readonly queue: RunQueue;
  private readonly control: RunControlChannel;
  private readonly active: ActiveRuns;
  /**
   * Admission of messages: `scheduler.send(input)` persists the user message, creates the run
   * and starts it in the background.
   * @throws RuntimeError VALIDATION_ERROR (field named), SESSION_NOT_FOUND, CONFLICT (session
   *   does not accept messages), UNAVAILABLE (shutting down), RUN_IN_PROGRESS when the session
   *   cannot take the message now.
   */
  readonly scheduler: RunScheduler;
  private readonly finisher: RunFinisher;
  private readonly recovery: RunRecovery;
  private readonly paused: PausedRuns;
  private readonly cancelling: RunCancel;
  private readonly recoveryMode: RecoveryMode;
  private readonly callbacks: CallbackDispatcher;
  private readonly abortWaitMs: number;
  /**
   * Aborted at shutdown; every open event stream listens to it, so it has no listener limit
   * (Node warns of a leak past 10, a figure any server with a few clients passes).
   */
  private readonly closing = unlimitedListeners(new AbortController());
  private readonly leases: RunLeases;
  private sweepTimer: NodeJS.Timeout | null = null;
  private sweeping = false;

  constructor(private readonly options: RunManagerOptions) {
    const logger = options.logger ?? silentLogger;
    const breakers = options.breakers ?? new CircuitBreakerRegistry();
    this.ctx = {
      storage: options.storage,
      sandbox: options.sandbox,
      registry: new ConfigRegistry({
        agents: options.agents,
        providers: options.providers,
        store: options.storage.registry,
        logger,
      }),
      log: options.eventLog,
      breakers,
      breakerOptions: options.breakerOptions,
      chatModelFactory: options.chatModelFactory ?? createChatModel,
      catalog: new ToolCatalog(options.tools),
      mcp: new McpManager(options.mcp ?? {}, breakers, logger),
      logger,
      workspaceRoot: options.workspaceRoot,
      maxSteps: options.maxSteps ?? 50,
      observer: options.observer ?? NOOP_RUN_OBSERVER,
      skills: options.skills ?? null,
      userGraphs: options.userGraphs ?? UserGraphs.empty(),
    };
    const callbackOptions = options.callbacks ?? {};
    this.callbacks = new CallbackDispatcher(options.storage.runs, { logger, ...callbackOptions });
    this.abortWaitMs = options.abortWaitMs ?? 5000;
    this.queue =
      options.runQueue ?? new RunSlots(options.maxConcurrentRuns ?? DEFAULT_MAX_CONCURRENT_RUNS);
    this.control = options.control ?? new InProcessRunControl();
    // A run's execution checks its claim before each model call and tool round (run fencing).
    this.active = new ActiveRuns(this.control, options.eventLog, logger, (run) =>
      this.leases.surelyHeld(run),
    );
    this.leases = new RunLeases(
      options.storage,
      options.cluster ?? null,
      this.active,
      logger,
      () => this.queue.active + this.queue.queued < this.queue.limit,
    );
    this.finisher = new RunFinisher(
      options.storage,
      this.callbacks,
      logger,
      (run) => {
        this.active.remove(run.runId);
        void this.scheduler.startNext(run.sessionId);
        for (const listener of this.endListeners) {
          listener({ runId: run.runId, sessionId: run.sessionId });
        }
        // A slot freed: a run another busy node left queued may start here now.
        const leaseMs = options.cluster?.leaseMs;
        if (leaseMs !== undefined && this.sweepTimer) void this.sweep(leaseMs);
      },
      this.ctx.observer,
    );
    const executor = new RunExecutor(this.ctx, this.queue, this.finisher);
    this.scheduler = new RunScheduler({
      storage: options.storage,
      active: this.active,
      executor,
      control: this.control,
      leases: this.leases,
      logger,
      allowPrivateCallbacks: callbackOptions.allowPrivateNetwork === true,
      registry: this.ctx.registry,
    });
    this.paused = new PausedRuns({
      ctx: this.ctx,
      active: this.active,
      executor,
      finisher: this.finisher,
      leases: this.leases,
    });
    this.cancelling = new RunCancel({
      ctx: this.ctx,
      active: this.active,
      control: this.control,
      paused: this.paused,
      waitMs: this.abortWaitMs,
    });
    this.recoveryMode = options.recovery ?? 'resume';
    this.recovery = new RunRecovery({
      storage: options.storage,
      log: options.eventLog,
      logger,
      active: this.active,
      executor,
      mode: this.recoveryMode,
      maxRecoveries: options.maxRecoveries ?? 3,
      startNext: (sessionId) => this.scheduler.startNext(sessionId),
      leases: this.leases,
      sandbox: this.ctx.sandbox,
    });
  }

  /**
   * Checks a session's agent and LLM overrides, for the API to call on session create/update.
   * @throws RuntimeError VALIDATION_ERROR naming `agentName`, `config.providerId` or `config.model`.
   */
  async validateSessionInput(input: { agentName?: string; config?: SessionConfig }): Promise<void> {
    const { agents, providers } = await this.ctx.registry.current();
    if (input.agentName !== undefined) agents.resolvePrimary(input.agentName);
    if (input.config !== undefined) providers.validateSessionConfig(input.config);
  }

  /** The agents and providers in force (static plus stored), as the next run sees them. */
  get registry(): ConfigRegistry {
    return this.ctx.registry;
  }

  /**
   * Cancels the session's active run through the control channel: the model request and any
   * running tool are aborted, what was produced so far is checkpointed (hence projected), the
   * run ends `aborted` and subscribers receive the final events. A run paused for a decision
   * ends `aborted` at once. Waits (bounded) for a run of this process to wind down. With
   * `runId`, only that run (nothing happens when another one holds the session); with
   * `rollback`, the run is removed instead, as a newer message's `rollback` removes it.
   * @throws RuntimeError SESSION_NOT_FOUND.
   */
  abort(sessionId: string, scope: Scope, options: CancelOptions = {}): Promise<AbortResult> {
    return this.cancelling.abort(sessionId, scope, options);
  }

  /**
   * Cancels a run still waiting (`pending`) behind the session's active run, before it ever
   * starts: it ends `aborted` with its terminal `error ABORTED` event, and the runs behind it
   * keep their order; with `rollback` it is then removed. null when it is no longer pending
   * (it started or ended meanwhile: `abort` it). No completion callback: it never ran.
   * @throws RuntimeError SESSION_NOT_FOUND, RUN_NOT_FOUND.
   */
  cancelPending(
    sessionId: string,
    runId: string,
    scope: Scope,
    options: { rollback?: boolean } = {},
  ): Promise<Run | null> {
    return this.cancelling.cancelPending(sessionId, runId, scope, options);
  }

  /**
   * Resumes a run paused for a person's decision (`requires_action`) with one decision per
   * pending tool call; it executes here, streaming on its run id after its `interrupt` event.
   * @throws RuntimeError SESSION_NOT_FOUND, RUN_NOT_FOUND, CONFLICT (not paused, or settled by
   *   a concurrent resume or abort), VALIDATION_ERROR (the decision at fault named).
   */
  resume(
    sessionId: string,
    runId: string,
    decisions: HitlDecision[],
    scope: Scope,
  ): Promise<ResumedRun> {
    return this.paused.resume(sessionId, runId, decisions, scope);
  }

  /**
   * The session's events as an async iterator of envelopes: replays what the log holds after
   * `lastEventId` (or from the start of the followed run), then follows live events until the
   * followed run's terminal event. The followed run is `runId`, else the session's active run,
   * else its latest run. Subscription starts when this promise resolves, so no event emitted
   * afterwards is missed even if iteration starts later.
   * @throws RuntimeError SESSION_NOT_FOUND, RUN_NOT_FOUND, VALIDATION_ERROR (`lastEventId`).
   */
  events(
    sessionId: string,
    scope: Scope,
    options: EventsOptions = {},
  ): Promise<AsyncGenerator<AgentEventEnvelope, void, undefined>> {
    return openRunEvents(this.eventsDeps(), sessionId, scope, options);
  }

  /**
   * The session's events run after run, until `signal` aborts: after `lastEventId`, from the
   * first one the log holds (`fromStart`), else from the run in progress (or the next one).
   * @throws RuntimeError SESSION_NOT_FOUND, VALIDATION_ERROR (`lastEventId`).
   */
  threadEvents(
    sessionId: string,
    scope: Scope,
    options: ThreadEventsOptions = {},
  ): Promise<AsyncGenerator<AgentEventEnvelope, void, undefined>> {
    return openThreadEvents(this.eventsDeps(), sessionId, scope, options);
  }

  /**
   * The events of `run`, which the caller just obtained from `send` or `resume` (so it is in
   * the caller's scope): as `events` with its id, without reading the session and run again.
   */
  eventsOfRun(
    run: Run,
    options: Omit<EventsOptions, 'runId'> = {},
  ): Promise<AsyncGenerator<AgentEventEnvelope, void, undefined>> {
    return openEventsOfRun(this.eventsDeps(), run, options);
  }

  /**
   * The completion-callback attempts recorded on a run (in storage, so also those of earlier
   * processes), oldest first; empty for a run without a callback or an unknown run.
   */
  callbackAttempts(runId: string): Promise<CallbackAttempt[]> {
    return this.ctx.storage.runs.listCallbackAttempts(runId);
  }

  /** How many runs execute and wait for a slot in this process, and the limit. */
  admission(): RunAdmission {
    return { executing: this.queue.active, queued: this.queue.queued, limit: this.queue.limit };
  }

  /** Runs executing in this process. */
  activeRunIds(): string[] {
    return this.active.ids();
  }

  /** Figures of the LLM circuit breakers (and any other breaker of the shared registry). */
  breakerSnapshots(): CircuitBreakerSnapshot[] {
    return this.ctx.breakers.snapshots();
  }

  /**
   * At startup, for runs storage lists as active but no process executes any more (the
   * previous process died or handed them off): with recovery `resume`, takes each up again from
   * its last checkpoint (same run id, a `resumed` event, ids continuing; failing a run resumed
   * more than `maxRecoveries` times); with `interrupt`, ends each `interrupted` with its terminal
   * `error` event. Call it before accepting traffic, and only where no other live node shares
   * the database (storage does not record which node owns a run). Also goes on with the
   * completion-callback deliveries a previous process left pending.
   */
  async recover(): Promise<StartupRecovery> {
    const report = await this.recovery.recover();
    const callbacks = await this.callbacks.resumePending();
    this.startClusterDuties();
    return { ...report, callbacks };
  }

  /** This node's id in a cluster (null on a single node). */
  get nodeId(): string | null {
    return this.leases.nodeId;
  }

  private eventsDeps(): RunEventsDeps {
    return { ctx: this.ctx, active: this.active, closing: this.closing.signal };
  }

  /**
   * In a cluster: renews this node's leases, and every half lease takes over what a dead node
   * left (runs whose lease expired, pending runs of idle sessions, overdue callback deliveries).
   */
  private startClusterDuties(): void {
    const leaseMs = this.options.cluster?.leaseMs;
    if (leaseMs === undefined || this.sweepTimer) return;
    this.leases.start();
    this.sweepTimer = setInterval(() => void this.sweep(leaseMs), Math.max(50, leaseMs / 2));
    this.sweepTimer.unref();
  }

  private async sweep(leaseMs: number): Promise<void> {
    if (this.sweeping || this.closing.signal.aborted) return;
    this.sweeping = true;
    try {
      const report = await this.recovery.recover();
      const taken =
        report.resumed.length +
        report.interrupted.length +
        report.failed.length +
        report.settled.length;
      if (taken > 0) {
        this.ctx.logger.info(
          { resumedRuns: report.resumed.map((run) => run.id) },
          `Took over ${taken} run(s) whose node stopped renewing its lease`,
        );
      }
      await this.callbacks.resumeOverdue(leaseMs);
    } catch (error) {
      this.ctx.logger.warn({ err: error }, 'cluster recovery sweep failed');
    } finally {
      this.sweeping = false;
    }
  }

  /**
   * Routes the session status a run's outcome decides (active / error) through `writer` (the
   * server passes the session pipeline's), instead of a direct storage update.
   */
  useSessionStatusWriter(writer: SessionStatusWriter): void {
    this.finisher.statusWriter = writer;
  }

  private readonly endListeners: ((run: { runId: string; sessionId: string }) => void)[] = [];

  /**
   * Calls `listener` each time a run executing on this node stops executing here (it ended,
   * paused for a decision, or was handed off or lost to another node: read the run to know),
   * after its terminal event and after the session's next pending run was asked to start. A
   * listener must not throw; what it starts is its own to wait for.
   */
  onRunStopped(listener: (run: { runId: string; sessionId: string }) => void): void {
    this.endListeners.push(listener);
  }

  /**
   * Starts the session's oldest pending run if none is active and the session accepts messages
   * (after a suspended session is resumed). Never throws.
   */
  startPending(sessionId: string): Promise<void> {
    return this.scheduler.startNext(sessionId);
  }

  /**
   * For whoever deletes a session, before its rows go: cancels its run, forgets its events,
   * releases its sandbox and removes its workspace directory.
   */
  async forgetSession(sessionId: string): Promise<void> {
    const local = this.active.forSession(sessionId);
    if (local) {
      await this.control.cancel(local.runId, 'aborted');
      await Promise.race([local.done, sleep(this.abortWaitMs)]);
    }
    await this.ctx.log.dropSession(sessionId);
    await this.ctx.mcp.closeSession(sessionId);
    await this.ctx.sandbox.release(sessionId);
    // The files its tools wrote are the session's data and go with it. Only the directory this
    // manager gives a session of its own (`<workspaceRoot>/<id>`): a `workspacePath` set at
    // creation is the caller's. An id the sandbox would refuse (a path separator, a leading
    // dot) never got a sandbox, and must not name a path outside the root.
    if (isPathSegmentId(sessionId)) {
      await rm(join(this.ctx.workspaceRoot, sessionId), { recursive: true, force: true });
    }
  }

  /**
   * Stops accepting sends, ends open event streams and stops callback retries. Runs still
   * executing are, with recovery `resume`, handed off: left `running` in storage, without a
   * terminal event, for the next process to resume (call it after their grace period); with
   * `interrupt`, cancelled: they end `interrupted` with their terminal event (bounded by
   * `timeoutMs`).
   */
  async shutdown(timeoutMs = 5000): Promise<void> {
    this.scheduler.stopAccepting();
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    this.sweepTimer = null;
    const runs = this.active.all();
    if (this.recoveryMode === 'resume') {
      this.finisher.handOff();
      // Other nodes may take the handed-off runs at once, but only once nothing of ours can
      // still be stored for them: the next owner numbers its events after the last stored one.
      // A write still in flight after the wait keeps the leases (they expire instead).
      const handedOff = runs.map((run) => run.runId);
      const quiet = await this.active.abandon(handedOff, HAND_OFF_WRITE_WAIT_MS);
      await this.leases.stop(quiet ? handedOff : []);
    } else {
      await this.leases.stop([]);
      for (const run of runs) await this.control.cancel(run.runId, 'interrupted');
    }
    // Handed off or cancelled, the executors still unwind (an aborted model call, a sandbox
    // opened on the way out): whoever closes storage and the workspace after this must not pull
    // them from under a run still stepping.
    await Promise.race([Promise.allSettled(runs.map((r) => r.done)), sleep(timeoutMs)]);
    this.closing.abort();
    await this.ctx.mcp.closeAll();
    await this.callbacks.close();
  }
}

/** Whether the sandbox accepts `sessionId` (`validateSessionId`): then it is a plain path segment. */
function isPathSegmentId(sessionId: string): boolean {
  try {
    validateSessionId(sessionId);
    return true;
  } catch {
    return false;
  }
}

/** How long a hand-off waits for an event write of the handed-off runs that is in flight. */
const HAND_OFF_WRITE_WAIT_MS = 2_000;

function unlimitedListeners(controller: AbortController): AbortController {
  setMaxListeners(0, controller.signal);
  return controller;
}
