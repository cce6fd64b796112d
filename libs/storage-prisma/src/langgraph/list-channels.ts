import { planListSegments } from '@cognition/storage';
import type { ListEntry, SegmentRef, ValueEntry } from './checkpoint-codec';

/**
 * What the saver knows of a channel of a checkpoint it wrote or read, to write that
 * checkpoint's child as a delta. `items` (a copy of the array, same element objects) is known
 * when this process put or read the value; `bytes` approximates the memory it pins.
 */
export type KnownEntry = ValueEntry | (ListEntry & { items?: readonly unknown[]; bytes: number });

/** How a new array value is stored: references, then the new ranges to serialize. */
export interface ListPlan {
  /** The whole value in order: ancestors' ranges, then this checkpoint's new segments. */
  refs: SegmentRef[];
  /** Item ranges `[start, end)` of the value that become new segments, in `refs` order. */
  fresh: { start: number; end: number }[];
  /** How many leading items are the parent's own (the same objects); 0 when unknown. */
  kept: number;
}

/**
 * Plans how to store `value`, the new value of an array channel of checkpoint `self`, given
 * what is known of the parent's value of that channel (`planListSegments` of
 * `@cognition/storage`). New segments are numbered from `firstIndex` (the segments `self`
 * already holds for other channels).
 */
export function planList(
  value: readonly unknown[],
  parent: KnownEntry | undefined,
  self: string,
  firstIndex: number,
): ListPlan {
  const plan = planListSegments<SegmentRef>(
    value,
    parent?.kind === 'list' && parent.items
      ? { items: parent.items, ranges: parent.refs }
      : undefined,
    (ref, count) => ({ ...ref, count }),
  );
  const refs = [...plan.kept];
  plan.fresh.forEach(({ start, end }, i) => {
    refs.push({ holder: self, index: firstIndex + i, start: 0, count: end - start });
  });
  return { refs, fresh: plan.fresh, kept: plan.keptItems };
}

/** Items of the list `refs` describe. */
export function listLength(refs: readonly SegmentRef[]): number {
  return refs.reduce((sum, ref) => sum + ref.count, 0);
}
