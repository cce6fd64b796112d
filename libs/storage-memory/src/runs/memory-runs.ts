import { randomUUID } from 'node:crypto';
import type {
  CallbackAttempt,
  CreateRunInput,
  PendingRunInput,
  Run,
  UpdateRunInput,
} from '@cognition/contracts';
import {
  CallbackAttemptSchema,
  CreateRunInputSchema,
  UpdateRunInputSchema,
  holdsSession,
  isActiveRunStatus,
} from '@cognition/contracts';
import type { RunFence, SettlePausedChange } from '@cognition/storage';
import { RunFencedError, StorageError, parseInput } from '@cognition/storage';
import { clone as copy } from '../clone';
import type { MemoryState, RunExtras } from '../memory-state';

/**
 * The memory backend's runs and their callback attempts, over the backend's state. Methods are
 * synchronous (the backend wraps them in promises), so each is atomic for async callers.
 */
export class MemoryRuns {
  constructor(
    private readonly state: MemoryState,
    private readonly requireSession: (id: string) => unknown,
    private readonly now: () => Date,
    private readonly onChanged: (before: Run | null, after: Run) => void = () => undefined,
  ) {}

  private activeRunOf(sessionId: string): Run | undefined {
    for (const run of this.state.runs.values()) {
      if (run.sessionId === sessionId && holdsSession(run.status)) return run;
    }
    return undefined;
  }

  create(input: CreateRunInput): { run: Run; created: boolean } {
    const data = parseInput(CreateRunInputSchema, input, 'run');
    this.requireSession(data.sessionId);
    if (data.idempotencyKey) {
      for (const run of this.state.runs.values()) {
        if (run.sessionId === data.sessionId && run.idempotencyKey === data.idempotencyKey) {
          return { run: copy(run), created: false };
        }
      }
    }
    const active = data.status === 'pending' ? undefined : this.activeRunOf(data.sessionId);
    if (active) {
      throw new StorageError(
        'RUN_IN_PROGRESS',
        `Session ${data.sessionId} already has active run ${active.id}`,
      );
    }
    const id = data.id ?? randomUUID();
    if (this.state.runs.has(id)) throw new StorageError('CONFLICT', `Run already exists: ${id}`);
    const now = this.now();
    const run: Run = {
      id,
      sessionId: data.sessionId,
      status: data.status,
      inputMessageId: data.inputMessageId ?? null,
      idempotencyKey: data.idempotencyKey ?? null,
      multitaskStrategy: data.multitaskStrategy ?? null,
      supersedesRunId: data.supersedesRunId ?? null,
      callbackUrl: data.callbackUrl ?? null,
      callbackConfig: data.callbackConfig ?? null,
      ownerNode: data.ownerNode ?? null,
      leaseExpiresAt: data.leaseExpiresAt ?? null,
      pendingAction: null,
      kwargs: data.kwargs ? copy(data.kwargs) : null,
      startAfter: data.startAfter ?? null,
      usage: null,
      error: null,
      createdAt: now,
      startedAt: data.status === 'running' ? now : null,
      finishedAt: null,
      updatedAt: now,
    };
    this.state.runs.set(id, copy(run));
    this.onChanged(null, run);
    this.state.runExtras.set(id, {
      pendingInput: data.pendingInput ? copy(data.pendingInput) : null,
      baseCheckpointId: null,
      claim: 0,
    });
    return { run, created: true };
  }

  update(id: string, input: UpdateRunInput, fence?: RunFence): Run {
    const data = parseInput(UpdateRunInputSchema, input, 'run update');
    const current = this.state.runs.get(id);
    if (!current) throw new StorageError('RUN_NOT_FOUND', `Run not found: ${id}`);
    if (fence && !this.fenceHolds(fence)) throw new RunFencedError([id]);
    if (data.status !== undefined && holdsSession(data.status)) {
      const active = this.activeRunOf(current.sessionId);
      if (active && active.id !== id) {
        throw new StorageError(
          'RUN_IN_PROGRESS',
          `Session ${current.sessionId} already has active run ${active.id}`,
        );
      }
    }
    const next: Run = {
      ...current,
      status: data.status ?? current.status,
      usage: data.usage !== undefined ? data.usage : current.usage,
      error: data.error !== undefined ? data.error : current.error,
      startedAt: data.startedAt !== undefined ? data.startedAt : current.startedAt,
      finishedAt: data.finishedAt !== undefined ? data.finishedAt : current.finishedAt,
      pendingAction: data.pendingAction !== undefined ? data.pendingAction : current.pendingAction,
      callbackUrl: data.callbackUrl !== undefined ? data.callbackUrl : current.callbackUrl,
      callbackConfig:
        data.callbackConfig !== undefined ? data.callbackConfig : current.callbackConfig,
      updatedAt: this.now(),
    };
    this.state.runs.set(id, copy(next));
    this.onChanged(current, next);
    const extras = this.state.runExtras.get(id);
    if (extras && data.baseCheckpointId !== undefined)
      extras.baseCheckpointId = data.baseCheckpointId;
    return next;
  }

  settlePaused(id: string, change: SettlePausedChange): Run | null {
    const current = this.state.runs.get(id);
    if (!current) throw new StorageError('RUN_NOT_FOUND', `Run not found: ${id}`);
    if (current.status !== 'requires_action') return null;
    const next: Run =
      change.status === 'queued'
        ? {
            ...current,
            status: 'queued',
            pendingAction: null,
            ownerNode: change.ownerNode ?? null,
            leaseExpiresAt: change.leaseExpiresAt ?? null,
            updatedAt: this.now(),
          }
        : {
            ...current,
            status: 'aborted',
            pendingAction: null,
            error: change.error,
            finishedAt: change.finishedAt,
            updatedAt: this.now(),
          };
    this.state.runs.set(id, copy(next));
    this.onChanged(current, next);
    // Resumed for a node: a claim like `claim`'s (what executed the run before is fenced out).
    if (change.status === 'queued') this.nextClaim(id);
    return copy(next);
  }

  cancelPending(id: string, finishedAt: Date): Run | null {
    const current = this.state.runs.get(id);
    if (!current) throw new StorageError('RUN_NOT_FOUND', `Run not found: ${id}`);
    if (current.status !== 'pending') return null;
    const next: Run = { ...current, status: 'aborted', finishedAt, updatedAt: this.now() };
    this.state.runs.set(id, copy(next));
    this.onChanged(current, next);
    return copy(next);
  }

  get(id: string): Run | null {
    const run = this.state.runs.get(id);
    return run ? copy(run) : null;
  }

  list(sessionId: string): Run[] {
    return [...this.state.runs.values()]
      .filter((run) => run.sessionId === sessionId)
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || a.id.localeCompare(b.id))
      .map(copy);
  }

  getActive(sessionId: string): Run | null {
    const run = this.activeRunOf(sessionId);
    return run ? copy(run) : null;
  }

  getActiveAndPending(sessionId: string): { active: Run | null; pending: Run[] } {
    return { active: this.getActive(sessionId), pending: this.listPending(sessionId) };
  }

  listActive(): Run[] {
    return [...this.state.runs.values()]
      .filter((run) => isActiveRunStatus(run.status))
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id))
      .map(copy);
  }

  recordCallbackAttempt(input: CallbackAttempt): CallbackAttempt {
    const attempt = parseInput(CallbackAttemptSchema, input, 'callback attempt');
    if (!this.state.runs.has(attempt.runId)) {
      throw new StorageError('RUN_NOT_FOUND', `Run not found: ${attempt.runId}`);
    }
    const recorded = this.state.callbackAttempts.get(attempt.runId) ?? [];
    if (
      recorded.some((a) => a.deliveryId === attempt.deliveryId && a.attempt === attempt.attempt)
    ) {
      throw new StorageError(
        'CONFLICT',
        `Callback attempt already recorded: delivery ${attempt.deliveryId}, attempt ${attempt.attempt}`,
      );
    }
    recorded.push(copy(attempt));
    this.state.callbackAttempts.set(attempt.runId, recorded);
    return attempt;
  }

  listCallbackAttempts(runId: string): CallbackAttempt[] {
    return (this.state.callbackAttempts.get(runId) ?? [])
      .slice()
      .sort(
        (a, b) =>
          a.startedAt.getTime() - b.startedAt.getTime() ||
          a.attempt - b.attempt ||
          a.deliveryId.localeCompare(b.deliveryId),
      )
      .map(copy);
  }

  promote(id: string): Run {
    const current = this.state.runs.get(id);
    if (!current) throw new StorageError('RUN_NOT_FOUND', `Run not found: ${id}`);
    const input = this.state.runExtras.get(id)?.pendingInput;
    // A graph run waits with its kwargs instead of a message.
    if (current.status !== 'pending' || (!input && !current.kwargs)) {
      throw new StorageError('CONFLICT', `Run ${id} is ${current.status}, not pending`);
    }
    const active = this.activeRunOf(current.sessionId);
    if (active) {
      throw new StorageError(
        'RUN_IN_PROGRESS',
        `Session ${current.sessionId} already has active run ${active.id}`,
      );
    }
    const next: Run = {
      ...current,
      status: 'queued',
      inputMessageId: input?.messageId ?? null,
      updatedAt: this.now(),
    };
    this.state.runs.set(id, copy(next));
    return copy(next);
  }

  claim(id: string, node: string, now: Date, until: Date): number | null {
    const run = this.state.runs.get(id);
    if (!run || !isActiveRunStatus(run.status)) return null;
    const free =
      run.ownerNode === null ||
      run.ownerNode === node ||
      (run.leaseExpiresAt !== null && run.leaseExpiresAt < now);
    if (!free) return null;
    this.state.runs.set(id, { ...run, ownerNode: node, leaseExpiresAt: new Date(until) });
    return this.nextClaim(id);
  }

  /** The claim the run is held under now; null when missing or unowned. */
  fenceOf(id: string): RunFence | null {
    const run = this.state.runs.get(id);
    if (!run || run.ownerNode === null) return null;
    return { runId: id, ownerNode: run.ownerNode, claim: this.state.runExtras.get(id)?.claim ?? 0 };
  }

  /** Whether the run is still held under `fence` (its node and claim number). */
  fenceHolds(fence: RunFence): boolean {
    const run = this.state.runs.get(fence.runId);
    return (
      run !== undefined &&
      run.ownerNode === fence.ownerNode &&
      (this.state.runExtras.get(fence.runId)?.claim ?? 0) === fence.claim
    );
  }

  private nextClaim(id: string): number {
    let extras = this.state.runExtras.get(id);
    if (!extras) {
      extras = { pendingInput: null, baseCheckpointId: null, claim: 0 };
      this.state.runExtras.set(id, extras);
    }
    extras.claim += 1;
    return extras.claim;
  }

  renewLease(id: string, node: string, until: Date): boolean {
    const run = this.state.runs.get(id);
    if (!run || !isActiveRunStatus(run.status) || run.ownerNode !== node) return false;
    this.state.runs.set(id, { ...run, leaseExpiresAt: new Date(until) });
    return true;
  }

  listPending(sessionId?: string): Run[] {
    return [...this.state.runs.values()]
      .filter((run) => run.status === 'pending')
      .filter((run) => sessionId === undefined || run.sessionId === sessionId)
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id))
      .map(copy);
  }

  pendingInput(id: string): PendingRunInput | null {
    const input = this.state.runExtras.get(id)?.pendingInput;
    return input ? copy(input) : null;
  }

  extras(id: string): RunExtras | undefined {
    return this.state.runExtras.get(id);
  }

  /** Forgets a run and its callback attempts (the caller drops its pending deliveries). */
  delete(id: string): void {
    this.state.runs.delete(id);
    this.state.runExtras.delete(id);
    this.state.callbackAttempts.delete(id);
  }
}
