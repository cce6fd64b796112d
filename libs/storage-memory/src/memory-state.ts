import type { CallbackAttempt, Message, PendingRunInput, Run, Session } from '@cognition/contracts';

/** A session row plus what only the backend sees. */
export interface SessionRecord {
  session: Session;
  /** The checkpoint the message rows were last projected from (drift detection). */
  projectedCheckpointId: string | null;
}

/** A message row: `seq` is its thread position; `pending` until a checkpoint includes it. */
export interface MessageRecord {
  message: Message;
  seq: number;
  pending: boolean;
}

/** Everything the memory backend holds; exposed to its own tests for tampering. */
export interface MemoryState {
  sessions: Map<string, SessionRecord>;
  sessionByThread: Map<string, string>;
  /** Per session, rows in thread order. */
  messages: Map<string, MessageRecord[]>;
  runs: Map<string, Run>;
  /** Per run, what only the backend keeps (pending input, base checkpoint). */
  runExtras: Map<string, RunExtras>;
  /** Per run, its completion-callback attempts in the order they were recorded. */
  callbackAttempts: Map<string, CallbackAttempt[]>;
}

/** What only the backend keeps of a run (not part of `Run`). */
export interface RunExtras {
  pendingInput: PendingRunInput | null;
  baseCheckpointId: string | null;
  /** The run's claim number: incremented by every claim (`RunFence.claim`). */
  claim: number;
}
