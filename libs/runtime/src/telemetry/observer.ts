import type { CallUsage } from '../providers/usage';
import type { Outcome } from '../run-outcome';

/** How a run left this process: its outcome, or `handed_off` to the next process (shutdown). */
export type RunEndOutcome = Outcome['kind'] | 'handed_off';

/**
 * One model call's usage, as the run's usage meter counted it (`costUsd` is null when the
 * model's price is unknown: never counted as 0).
 */
export interface ModelCallRecord extends CallUsage {
  runId: string;
}

/**
 * What the run machinery reports as it goes, for metrics (the server turns the calls into
 * Prometheus series). Implementations must be cheap and must not throw: they are called on the
 * run's path. Timing is the observer's (it sees the calls as they happen).
 *
 * Order per run in this process: `runStarted`, then any number of `modelCall`, at most one
 * `firstToken`, then exactly one `runEnded` — except for runs a recovery ends without executing
 * them here (`runEnded` alone).
 */
export interface RunObserver {
  /** The run was accepted for execution (queued or executing), or taken up again after a restart. */
  runStarted(run: { runId: string; sessionId: string; resumed: boolean }): void;
  /** The run's first token was handed to its stream. */
  firstToken(run: { runId: string }): void;
  /** Every model call of the run: the agent's, a subagent's, a context summary's. */
  modelCall(call: ModelCallRecord): void;
  /** The run's terminal event was handed to the log, or the run was handed off. */
  runEnded(run: { runId: string; sessionId: string; outcome: RunEndOutcome }): void;
}

/** Reports nothing (the default when no observer is configured). */
export const NOOP_RUN_OBSERVER: RunObserver = {
  runStarted: () => undefined,
  firstToken: () => undefined,
  modelCall: () => undefined,
  runEnded: () => undefined,
};
