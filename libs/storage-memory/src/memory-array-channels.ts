import type { SerializerProtocol } from '@langchain/langgraph-checkpoint';
import type { Checkpoint } from '@langchain/langgraph-checkpoint';
import { MESSAGES_CHANNEL, planListSegments } from '@cognition/storage';

/** Consecutive items of an array channel value, serialized as one array. */
export interface Segment {
  bytes: Uint8Array;
  count: number;
}

/** Items `start … start + count − 1` of `segment`. */
export interface SegmentSlice {
  segment: Segment;
  start: number;
  count: number;
}

/**
 * Where a checkpoint's value of one channel is stored: in `holder`, the serialized checkpoint
 * (itself or an ancestor) whose `put` listed the channel in `newVersions`, at `version`; for
 * an array value, in `slices` of segments instead (see `planListSegments` of
 * `@cognition/storage`).
 */
export interface ChannelSource {
  version: string;
  holder: Uint8Array;
  slices?: readonly SegmentSlice[];
}

/**
 * Serializes the array values among `changed` (removing them from it) as slices of segments:
 * leading items that are the very objects of the parent's array refer to the parent's slices,
 * the rest become new segments (`planListSegments` of `@cognition/storage`). `keptMessages` is
 * set when the parent's messages were known: how many leading messages are the parent's.
 */
export async function storeArrays(
  serde: SerializerProtocol,
  changed: Record<string, unknown>,
  parentSources: ReadonlyMap<string, ChannelSource> | undefined,
  parentArrays: ReadonlyMap<string, readonly unknown[]> | undefined,
): Promise<{
  lists: Map<string, SegmentSlice[]>;
  freshBytes: number;
  keptMessages: number | undefined;
}> {
  const lists = new Map<string, SegmentSlice[]>();
  let freshBytes = 0;
  let keptMessages: number | undefined;
  for (const [channel, value] of Object.entries(changed)) {
    if (!Array.isArray(value)) continue;
    const ranges = parentSources?.get(channel)?.slices;
    const items = parentArrays?.get(channel);
    const plan = planListSegments<SegmentSlice>(
      value,
      ranges && items ? { items, ranges } : undefined,
      (slice, count) => ({ ...slice, count }),
    );
    const slices = [...plan.kept];
    for (const { start, end } of plan.fresh) {
      const [, bytes] = await serde.dumpsTyped(value.slice(start, end));
      freshBytes += bytes.byteLength;
      slices.push({ segment: { bytes, count: end - start }, start: 0, count: end - start });
    }
    lists.set(channel, slices);
    delete changed[channel];
    if (channel === MESSAGES_CHANNEL && ranges && items) keptMessages = plan.keptItems;
  }
  return { lists, freshBytes, keptMessages };
}

/** Assembles the array values kept as segments into `checkpoint`; each segment decoded once. */
export async function assembleArrays(
  serde: SerializerProtocol,
  checkpoint: Checkpoint,
  sources: ReadonlyMap<string, ChannelSource>,
): Promise<void> {
  const decoded = new Map<Segment, unknown[]>();
  for (const [channel, { slices }] of sources) {
    if (!slices) continue;
    const items: unknown[] = [];
    for (const { segment, start, count } of slices) {
      let values = decoded.get(segment);
      if (!values) {
        values = (await serde.loadsTyped('json', segment.bytes)) as unknown[];
        decoded.set(segment, values);
      }
      for (let i = start; i < start + count; i += 1) items.push(values[i]);
    }
    Object.defineProperty(checkpoint.channel_values, channel, {
      value: items,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
}
