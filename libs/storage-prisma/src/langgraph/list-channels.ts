import type { ListEntry, SegmentRef, ValueEntry } from './checkpoint-codec';

/**
 * Array channel values (the `messages` channel above all) are stored as segments: a step that
 * appends messages serializes only the new ones and refers to the segments its ancestors hold
 * for the rest. Segments merge like a binary counter (a new segment absorbs the segments before
 * it while they are not longer than it), so a list of n items spans O(log n) segments of up to
 * {@link MAX_SEGMENT_ITEMS} items plus n / MAX_SEGMENT_ITEMS full ones: a read fetches a bounded
 * number of rows, and an item is serialized again only O(log MAX_SEGMENT_ITEMS) times.
 */
export const MAX_SEGMENT_ITEMS = 256;

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
  /**
   * How many leading items are the parent's own (the same objects as the parent's value);
   * 0 when the parent's items are unknown.
   */
  kept: number;
}

/**
 * Plans how to store `value`, the new value of an array channel of checkpoint `self`, given
 * what is known of the parent's value of that channel. Leading items that are the very objects
 * of the parent's value (LangGraph's reducers keep unchanged messages as the same objects)
 * refer to the parent's segments; the rest is new. New segments are numbered from
 * `firstIndex` (the segments `self` already holds for other channels).
 *
 * Object identity stands for equality: a message mutated in place after it was checkpointed
 * would keep its old stored form. LangGraph and this repository never do that (the messages
 * reducer replaces a message by id, time travel copies).
 */
export function planList(
  value: readonly unknown[],
  parent: KnownEntry | undefined,
  self: string,
  firstIndex: number,
): ListPlan {
  let kept = 0;
  let refs: SegmentRef[] = [];
  if (parent?.kind === 'list' && parent.items) {
    const limit = Math.min(value.length, parent.items.length);
    while (kept < limit && value[kept] === parent.items[kept]) kept += 1;
    refs = truncateRefs(parent.refs, kept);
  }
  let start = kept;
  for (let last = refs[refs.length - 1]; last; last = refs[refs.length - 1]) {
    const pending = value.length - start;
    if (pending === 0 || last.count > pending || last.count + pending > MAX_SEGMENT_ITEMS) break;
    refs.pop();
    start -= last.count;
  }
  const fresh: { start: number; end: number }[] = [];
  for (let from = start; from < value.length; from += MAX_SEGMENT_ITEMS) {
    const end = Math.min(value.length, from + MAX_SEGMENT_ITEMS);
    refs.push({ holder: self, index: firstIndex + fresh.length, start: 0, count: end - from });
    fresh.push({ start: from, end });
  }
  return { refs, fresh, kept };
}

/** The references covering the first `count` items of `refs`. */
export function truncateRefs(refs: readonly SegmentRef[], count: number): SegmentRef[] {
  const out: SegmentRef[] = [];
  let left = count;
  for (const ref of refs) {
    if (left <= 0) break;
    out.push(ref.count <= left ? ref : { ...ref, count: left });
    left -= ref.count;
  }
  return out;
}

/** Items of the list `refs` describe. */
export function listLength(refs: readonly SegmentRef[]): number {
  return refs.reduce((sum, ref) => sum + ref.count, 0);
}
