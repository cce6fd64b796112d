import type { CircuitBreakerSnapshot } from '@cognition/circuit-breaker';
import type {
  GraphRunKwargs,
  MultitaskStrategy,
  AgentEventEnvelope,
  CallbackAttempt,
  CallbackConfig,
  HitlDecision,
  Message,
  Run,
  SendMessageFieldsSchema,
  SessionConfig,
} from '@cognition/contracts';
import type { Scope } from '@cognition/storage';
import type { z } from 'zod';

/*
 * The slice of the agent runtime the API calls, declared here rather than imported from
 * `@cognition/runtime`: the router's type (and with it the context's) ships in the client
 * package's bundled `.d.ts`, which must not reference LangChain/LangGraph types. The runtime's
 * `RunManager` satisfies `RunService` structurally (the procedure tests pass a real one).
 */

/** Run admission of one process: runs executing, runs waiting for a slot, and the limit. */
export interface RunAdmission {
  executing: number;
  queued: number;
  limit: number;
}

/**
 * Input of `RunService.send`: the contract's send fields (`SendMessageFieldsSchema`, the one
 * declaration of them), the session, and `scope`, the caller's scope (from auth), never from
 * the body.
 */
export interface RunSendInput extends z.input<typeof SendMessageFieldsSchema> {
  sessionId: string;
  scope: Scope;
}

/** What a send produced: the run, the persisted user message, and whether the run is new. */
export interface RunSendResult {
  run: Run;
  /**
   * The user message (for a replayed idempotency key: the first one); for a `pending` run, as
   * it enters the history when the run starts, with the id it will have.
   */
  message: Message;
  /** false when the idempotency key matched an earlier run (nothing new was started). */
  created: boolean;
}

export interface RunAbortResult {
  /** The session's active run as updated by the abort; null when it had none. */
  run: Run | null;
  /** true when a running run was cancelled by this call. */
  aborted: boolean;
}

/** A resumed run, and the id of its `interrupt` event: follow the run after it. */
export interface RunResumeResult {
  run: Run;
  lastEventId: string | null;
}

export interface RunEventsOptions {
  /** Only this run's events, ending with its terminal event. Default: the session's current run. */
  runId?: string;
  /** Resume after this event id; a `reconnected` event comes first. */
  lastEventId?: string;
  /** Ends the stream (the subscriber went away). */
  signal?: AbortSignal;
}

/**
 * One delivery attempt of a run's completion callback (`CallbackAttempt` of the contracts),
 * under the name the API and the client have always exported.
 */
export type CallbackAttemptRecord = CallbackAttempt;

/** Admission of a message: what `messages.send` calls. */
export interface RunScheduler {
  /**
   * Persists the user message, creates the run and starts it in the background.
   * @throws RUN_IN_PROGRESS when the session cannot take the message now (the error's message
   *   says what the caller can do), VALIDATION_ERROR, SESSION_NOT_FOUND, CONFLICT, UNAVAILABLE.
   */
  send(input: RunSendInput): Promise<RunSendResult>;
  /**
   * Admits a run of a `langgraph.json` graph (the LangGraph API): the same admission as `send`,
   * with the graph's kwargs, stored with the run, for input instead of a user message.
   * @throws as `send`.
   */
  sendGraph(input: {
    sessionId: string;
    scope: Scope;
    kwargs: GraphRunKwargs;
    multitaskStrategy?: MultitaskStrategy;
    callbackUrl?: string;
    /** A delayed run: stored `pending`, it starts at this time (or once the thread is free). */
    startAfter?: Date;
  }): Promise<{ run: Run; created: boolean }>;
  /**
   * Sets (null: removes) where a run's completion payload goes, and how (`config`: an A2A push
   * notification config's), while the run has not ended.
   * @throws SESSION_NOT_FOUND, RUN_NOT_FOUND, CONFLICT (ended), VALIDATION_ERROR (`callbackUrl`).
   */
  setCallback(
    sessionId: string,
    runId: string,
    callbackUrl: string | null,
    scope: Scope,
    config?: CallbackConfig | null,
  ): Promise<Run>;
}

/**
 * Starts, follows and cancels agent runs. Invariants the API relies on (kept by `RunManager`):
 * - at most one active run per session: a second `scheduler.send` fails with code `RUN_IN_PROGRESS`;
 * - every run emits exactly one terminal event (`done` or `error`), after which its stream ends;
 * - event ids of a session increase, so `events({ lastEventId })` yields exactly the events after
 *   that id that the log still holds (a `reconnected` event first);
 * - every session-addressed method checks `scope` and fails with `SESSION_NOT_FOUND` for a
 *   session outside it, exactly as for a missing one.
 * Errors carry a `code` from `ErrorCode` (and `issues` naming fields for `VALIDATION_ERROR`).
 */
export interface RunService {
  /**
   * Checks a session's agent and LLM overrides before they are stored.
   * @throws VALIDATION_ERROR naming `agentName`, `config.providerId` or `config.model`.
   */
  validateSessionInput(input: { agentName?: string; config?: SessionConfig }): Promise<void>;
  /** Admission of messages (the runtime's `RunScheduler`). */
  scheduler: RunScheduler;
  /**
   * Cancels the session's active run (bounded wait for it to wind down), or a paused one. With
   * `runId`, only that run (nothing happens when another one holds the session); with
   * `rollback`, the run is removed (its row, its user message and what followed, the
   * checkpoints it added) instead of kept `aborted`.
   */
  abort(
    sessionId: string,
    scope: Scope,
    options?: { runId?: string; rollback?: boolean },
  ): Promise<RunAbortResult>;
  /**
   * Cancels a run still waiting (`pending`) behind another, before it starts: it ends `aborted`
   * with its terminal event; with `rollback` it is then removed. null when it is no longer
   * pending (it started or ended meanwhile).
   * @throws SESSION_NOT_FOUND, RUN_NOT_FOUND.
   */
  cancelPending(
    sessionId: string,
    runId: string,
    scope: Scope,
    options?: { rollback?: boolean },
  ): Promise<Run | null>;
  /**
   * Resumes a run paused for a decision (`requires_action`) with one decision per pending tool
   * call; it goes on under the same id, its events following its `interrupt`.
   * @throws RUN_NOT_FOUND, CONFLICT (not paused, or settled by a concurrent resume or abort),
   *   VALIDATION_ERROR naming the decision at fault (`decisions.<i>.<field>`).
   */
  resume(
    sessionId: string,
    runId: string,
    decisions: HitlDecision[],
    scope: Scope,
  ): Promise<RunResumeResult>;
  /**
   * The session's events: replay after `lastEventId` (or from the followed run's start), then
   * live until the followed run's terminal event. Subscribed when the promise resolves.
   */
  events(
    sessionId: string,
    scope: Scope,
    options?: RunEventsOptions,
  ): Promise<AsyncGenerator<AgentEventEnvelope, void, undefined>>;
  /**
   * The session's events run after run until `signal` aborts (a thread's join stream): after
   * `lastEventId`, from the first event the log holds (`fromStart`), else from the run in
   * progress (from its first event) or the next run.
   */
  threadEvents(
    sessionId: string,
    scope: Scope,
    options?: { lastEventId?: string; fromStart?: boolean; signal?: AbortSignal },
  ): Promise<AsyncGenerator<AgentEventEnvelope, void, undefined>>;
  /** The events of a run this caller just sent or resumed (no session or run lookup). */
  eventsOfRun(
    run: Run,
    options?: Omit<RunEventsOptions, 'runId'>,
  ): Promise<AsyncGenerator<AgentEventEnvelope, void, undefined>>;
  /**
   * Completion-callback attempts recorded on a run, oldest first, read from storage (so they
   * survive restarts); empty for a run without a callback.
   */
  callbackAttempts(runId: string): Promise<CallbackAttemptRecord[]>;
  /** After a session is deleted: cancels its run and forgets its events. */
  forgetSession(sessionId: string): Promise<void>;
  /** Figures of the runtime's circuit breakers (`llm:<providerId>`). */
  breakerSnapshots(): CircuitBreakerSnapshot[];
  /** Runs executing and queued in this process, and the limit (`maxConcurrentRuns`). */
  admission(): RunAdmission;
  /** Ids of the runs this process executes (with several nodes: the runs this node owns). */
  activeRunIds(): string[];
}

/**
 * Releases a session's sandbox (container, workspace handle). Called when a session is deleted;
 * must be idempotent (releasing an unknown or already released session is not an error).
 */
export interface SandboxReleaser {
  release(sessionId: string): Promise<void>;
}
