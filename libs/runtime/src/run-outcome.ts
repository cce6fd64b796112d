import type { PendingAction } from '@cognition/contracts';
import type { RuntimeError } from './errors';

/**
 * How a run ended: decided by the executor, recorded by the finisher, reported by telemetry
 * (hence its home below runs/ and telemetry/). `rolled_back`: a newer message replaced it
 * (double-texting `rollback`), or a caller cancelled it to remove it (`message` says which), so
 * the finisher removes it.
 */
export type Outcome =
  | { kind: 'completed' }
  | { kind: 'aborted' }
  | { kind: 'interrupted'; message?: string }
  | { kind: 'rolled_back'; message?: string }
  /** This node lost the run's lease: another node executes it now; nothing is recorded here. */
  | { kind: 'lost' }
  /** The run waits for a person's decision on tool calls (status `requires_action`). */
  | { kind: 'paused'; action: PendingAction }
  /** `exception`: what a `langgraph.json` graph threw (its name and message), kept for its error event. */
  | { kind: 'failed'; error: RuntimeError; exception?: { name: string; message: string } };
