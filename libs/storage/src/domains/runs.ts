import type {
  CallbackAttempt,
  CreateRunInput,
  PendingRunInput,
  Run,
  RunError,
  UpdateRunInput,
} from '@cognition/contracts';
import { StorageError } from '../errors';

/** The statuses of a run that has ended: nothing executes it again (`RunStore.delete`). */
export const ENDED_RUN_STATUSES: readonly Run['status'][] = [
  'completed',
  'failed',
  'aborted',
  'interrupted',
];

/**
 * A completion-callback delivery not yet finished (delivered, or given up): what the next
 * process needs to go on with it after a restart.
 */
export interface PendingCallback {
  /** One per delivery; the `X-Cognition-Delivery` header. */
  deliveryId: string;
  runId: string;
  url: string;
  /** The exact JSON body (the signature is computed over these bytes). */
  body: string;
  /**
   * Headers sent with every attempt besides ours (an A2A push notification's content type,
   * token and credentials); `{}` for none.
   */
  headers: Record<string, string>;
  /** Attempts claimed so far (0 before the first). */
  attempts: number;
  /** When the next attempt is due. */
  nextAttemptAt: Date;
}

/** How `RunStore.settlePaused` ends a pause: resumed (`queued`) or `aborted`. */
export type SettlePausedChange =
  | { status: 'queued'; ownerNode?: string | null; leaseExpiresAt?: Date | null }
  | { status: 'aborted'; error: RunError; finishedAt: Date };

/**
 * The claim a run's executor holds: the node and the claim number (`runs.claim` answers it;
 * every claim of the run, by any node, increments it). A write made under a fence is stored
 * only while the run is still held under exactly this claim (the check is part of the write's
 * own statement or transaction, never a read before it); otherwise it is refused with
 * {@link RunFencedError} and stores nothing. A write without a fence is unconditional (one
 * node, or a write that is not an executor's).
 */
export interface RunFence {
  runId: string;
  ownerNode: string;
  claim: number;
}

/**
 * A write refused because the run is no longer held under the writer's fence: another claim
 * took it over (the writer lost its lease). Nothing of the write was stored; the writer must
 * stop executing the run and store nothing more for it.
 */
export class RunFencedError extends StorageError {
  readonly fenced = true;

  constructor(readonly runIds: readonly string[]) {
    super(
      'CONFLICT',
      `Run ${runIds.join(', ')} was taken over by another claim: this write was refused`,
    );
  }
}

/**
 * Where a run's executor puts its fence in the LangGraph config it runs the graph with
 * (`configurable`): the checkpointer stores the checkpoints and pending writes of such a config
 * only while the run is held under it (RunFencedError otherwise, nothing written).
 */
export const RUN_FENCE_KEY = 'cognition_run_fence';

/** The fence of a LangGraph config (`configurable[RUN_FENCE_KEY]`), if it carries one. */
export function runFenceOf(
  config: { configurable?: Record<string, unknown> } | undefined,
): RunFence | undefined {
  const value = config?.configurable?.[RUN_FENCE_KEY] as Partial<RunFence> | undefined;
  if (
    typeof value?.runId === 'string' &&
    typeof value.ownerNode === 'string' &&
    typeof value.claim === 'number'
  ) {
    return { runId: value.runId, ownerNode: value.ownerNode, claim: value.claim };
  }
  return undefined;
}

/** Whether `error` is a {@link RunFencedError} (also across copies of this package). */
export function isRunFenced(error: unknown): error is RunFencedError {
  return (
    error instanceof RunFencedError ||
    (typeof error === 'object' && error !== null && (error as { fenced?: unknown }).fenced === true)
  );
}

export interface RunStore {
  /**
   * Creates a run. At most one active (`queued` | `running`) run per session, enforced
   * atomically by the database (not by a read-then-write), so two processes sharing one
   * database can never both succeed: the loser gets RUN_IN_PROGRESS.
   * A create with an idempotency key already used on the session returns the existing run.
   * A `pending` run (with its `pendingInput`, or a graph run's `kwargs`) is not active and
   * never conflicts. A graph run's `kwargs` are kept as written and read back by every read.
   */
  create(input: CreateRunInput): Promise<{ run: Run; created: boolean }>;
  /**
   * Starts a pending run: it becomes `queued` (active, so the one-active-run rule applies
   * atomically: RUN_IN_PROGRESS when another run of the session is active) with its pending
   * input's `messageId` as `inputMessageId` (a graph run: none). RUN_NOT_FOUND; CONFLICT when
   * it is not pending.
   */
  promote(id: string): Promise<Run>;
  /**
   * Claims an active run for `node` until `until`: succeeds when it was unowned, already
   * `node`'s, or its owner's lease expired before `now` — a conditional update, so of several
   * nodes claiming at once exactly one wins. Every successful claim increments the run's claim
   * number and answers it (≥ 1): with `node` it is the fence (`RunFence`) of the writes made
   * under this claim, which every later claim (even by the same node) invalidates. null for a
   * run that is not active or missing, or held by another node.
   */
  claim(id: string, node: string, now: Date, until: Date): Promise<number | null>;
  /**
   * The claim the run is held under now (its owner node and claim number): what a write for a
   * run that the writer did not claim itself (the repair of a missing terminal event) is made
   * under, so that a claim coming after the read refuses it. null when the run is missing or
   * has no owner (one node: nothing is fenced).
   */
  fenceOf(id: string): Promise<RunFence | null>;
  /** Extends `node`'s lease of an active run to `until`; false when `node` no longer owns it. */
  renewLease(id: string, node: string, until: Date): Promise<boolean>;
  /**
   * Ends a run's pause for a person's decision (status `requires_action`), atomically: of
   * several callers (two resumes, a resume and an abort, on any node) exactly one gets the
   * updated run; the others get null, as does a run that is not paused. `queued` resumes it
   * (it keeps its session, claimed by `ownerNode` until `leaseExpiresAt` when given); `aborted`
   * ends it (`error`, `finishedAt`). Either way its `pendingAction` is cleared.
   * RUN_NOT_FOUND when missing.
   */
  settlePaused(id: string, change: SettlePausedChange): Promise<Run | null>;
  /**
   * Ends a pending run that never started (cancelled while it waited behind another run):
   * `aborted` at `finishedAt`, atomically against `promote`, so of a cancel and a start exactly
   * one wins. Answers the ended run, or null when it is no longer pending (it started, or ended
   * meanwhile). RUN_NOT_FOUND when missing.
   */
  cancelPending(id: string, finishedAt: Date): Promise<Run | null>;
  /** Pending runs, oldest first: of one session, or of every session when omitted. */
  listPending(sessionId?: string): Promise<Run[]>;
  /** The message a run was created `pending` with (kept after it started); null otherwise. */
  pendingInput(id: string): Promise<PendingRunInput | null>;
  /**
   * Throws RUN_NOT_FOUND. With `fence`, stored only while the run is held under it (in the
   * update's own statement or transaction): otherwise RunFencedError, nothing written.
   */
  update(id: string, input: UpdateRunInput, fence?: RunFence): Promise<Run>;
  get(id: string): Promise<Run | null>;
  /** Runs of a session, newest first. */
  list(sessionId: string): Promise<Run[]>;
  /**
   * Deletes a run that has ended (`completed`, `failed`, `aborted`, `interrupted`) with its
   * callback attempts and pending deliveries, atomically: true when it went, false for an
   * unknown run; CONFLICT (nothing deleted) for one that has not ended (pending, queued,
   * running, paused for a decision). Its events, messages and checkpoints are its session's
   * and stay.
   */
  delete(id: string): Promise<boolean>;
  /**
   * The run holding the session (see `holdsSession`): its active run, or the run paused for a
   * decision. At most one.
   */
  getActive(sessionId: string): Promise<Run | null>;
  /**
   * `getActive` and `listPending` of one session in one read (what a send and a finished run
   * ask before starting anything; one round trip on a database).
   */
  getActiveAndPending(sessionId: string): Promise<{ active: Run | null; pending: Run[] }>;
  /**
   * Every active (`queued` | `running`) run across sessions, for recovery; paused runs are not
   * listed (no process executes them, none needs to).
   */
  listActive(): Promise<Run[]>;
  /**
   * Records one completion-callback delivery attempt on its run. Attempts go with their run
   * (and so with its session) when it is deleted.
   * Throws RUN_NOT_FOUND when the run does not exist, CONFLICT when the run already has this
   * (deliveryId, attempt) pair, VALIDATION_ERROR naming the field for bad input.
   */
  recordCallbackAttempt(input: CallbackAttempt): Promise<CallbackAttempt>;
  /**
   * The run's recorded callback attempts, oldest first (`startedAt`, then `attempt`). Empty for
   * a run without a callback and for an unknown run (like `list` for an unknown session).
   */
  listCallbackAttempts(runId: string): Promise<CallbackAttempt[]>;
  /**
   * Stores a pending delivery (goes with its run when the run is deleted). Throws RUN_NOT_FOUND,
   * CONFLICT when the delivery id exists. With `fence` (the claim the run was ended under),
   * stored only while the run is still held under it, in the write's own transaction:
   * otherwise RunFencedError, nothing stored (another claim ends the run and sends its own).
   */
  savePendingCallback(input: PendingCallback, fence?: RunFence): Promise<void>;
  /**
   * Claims attempt `attempt` of a pending delivery: true for exactly one caller, when the stored
   * `attempts` is `attempt - 1` (it becomes `attempt`), false otherwise (another process claimed
   * it, or the delivery is finished). So each attempt is made at most once across processes.
   */
  claimCallbackAttempt(deliveryId: string, attempt: number): Promise<boolean>;
  /** Sets when the next attempt is due, or with null removes the delivery (finished). */
  settlePendingCallback(deliveryId: string, nextAttemptAt: Date | null): Promise<void>;
  /** Every pending delivery, the earliest due first. */
  listPendingCallbacks(): Promise<PendingCallback[]>;
}
