import type { CheckpointRetentionStore, StoredCheckpointRef } from '../domains/checkpoints';

/** A parsed `COGNITION_CHECKPOINT_RETENTION` / per-session `checkpointRetention` value. */
export type RetentionPolicy =
  { kind: 'all' } | { kind: 'keep_last'; count: number } | { kind: 'max_age'; ms: number };

const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/**
 * Parses `all`, `keep_latest` (= `keep_last:1`), `keep_last:<n>` (n ≥ 1) and
 * `max_age:<n><s|m|h|d>`; null for anything else (the contracts' CheckpointRetentionSchema
 * validates the same grammar with a message).
 */
export function parseRetention(text: string): RetentionPolicy | null {
  if (text === 'all') return { kind: 'all' };
  if (text === 'keep_latest') return { kind: 'keep_last', count: 1 };
  const last = /^keep_last:([1-9][0-9]{0,8})$/.exec(text);
  if (last) return { kind: 'keep_last', count: Number(last[1]) };
  const age = /^max_age:([1-9][0-9]{0,8})([smhd])$/.exec(text);
  if (age) return { kind: 'max_age', ms: Number(age[1]) * UNIT_MS[age[2] as keyof typeof UNIT_MS] };
  return null;
}

/**
 * The checkpoints `policy` lets go, from `refs` (newest first): never the head (the first),
 * never an id in `protect`. `keep_last:n` keeps the n newest; `max_age` keeps those written
 * after `now − age`.
 */
export function prunableCheckpoints(
  refs: readonly StoredCheckpointRef[],
  policy: RetentionPolicy,
  now: Date,
  protect: ReadonlySet<string> = new Set(),
): string[] {
  if (policy.kind === 'all') return [];
  const older = refs.slice(policy.kind === 'keep_last' ? Math.max(1, policy.count) : 1);
  const cutoff = policy.kind === 'max_age' ? now.getTime() - policy.ms : Infinity;
  return older
    .filter((ref) => policy.kind === 'keep_last' || ref.createdAt.getTime() < cutoff)
    .map((ref) => ref.checkpointId)
    .filter((id) => !protect.has(id));
}

/**
 * One retention step on a thread: deletes at most `batch` prunable checkpoints (oldest first)
 * and returns how many went. Call again until it returns less than `batch`.
 */
export async function pruneThread(
  store: CheckpointRetentionStore,
  threadId: string,
  policy: RetentionPolicy,
  options: { now?: Date; batch?: number; protect?: ReadonlySet<string> } = {},
): Promise<number> {
  if (policy.kind === 'all') return 0;
  const refs = await store.list(threadId);
  const prunable = prunableCheckpoints(refs, policy, options.now ?? new Date(), options.protect);
  const oldestFirst = prunable.reverse().slice(0, options.batch ?? 500);
  return oldestFirst.length === 0 ? 0 : store.delete(threadId, oldestFirst);
}
