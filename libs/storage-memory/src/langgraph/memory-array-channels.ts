import type {
  ChannelVersions,
  Checkpoint,
  SerializerProtocol,
} from '@langchain/langgraph-checkpoint';
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

/** The values of the channels `put` was told changed (those absent from the checkpoint aside). */
export function changedValues(
  checkpoint: Checkpoint,
  newVersions: ChannelVersions,
): Record<string, unknown> {
  const values = checkpoint.channel_values ?? {};
  return Object.fromEntries(
    Object.keys(newVersions)
      .filter((channel) => Object.hasOwn(values, channel))
      .map((channel) => [channel, values[channel]]),
  );
}

/**
 * Where each versioned channel's value of a new checkpoint lives: the checkpoint itself for the
 * channels it stores; for each other channel, the parent's source when the parent holds the
 * channel at the same version. A channel listed in `newVersions` without a value has none.
 */
export function channelSources(
  versions: ChannelVersions,
  newVersions: ChannelVersions,
  storedChannels: string[],
  lists: ReadonlyMap<string, readonly SegmentSlice[]>,
  own: Uint8Array,
  parentSources: ReadonlyMap<string, ChannelSource> | undefined,
): Map<string, ChannelSource> {
  const stored = new Set(storedChannels);
  const sources = new Map<string, ChannelSource>();
  for (const [channel, version] of Object.entries(versions)) {
    if (Object.hasOwn(newVersions, channel)) {
      const slices = lists.get(channel);
      if (slices) sources.set(channel, { version: String(version), holder: own, slices });
      else if (stored.has(channel)) sources.set(channel, { version: String(version), holder: own });
      continue;
    }
    const inherited = parentSources?.get(channel);
    if (inherited?.version === String(version)) sources.set(channel, inherited);
  }
  return sources;
}

/** Adds the values of the channels an ancestor stored; each ancestor is decoded once. */
export async function addCarriedValues(
  serde: SerializerProtocol,
  checkpoint: Checkpoint,
  own: Uint8Array,
  sources: ReadonlyMap<string, ChannelSource>,
): Promise<void> {
  const byHolder = new Map<Uint8Array, string[]>();
  for (const [channel, { holder, slices }] of sources) {
    if (holder === own || slices) continue;
    const channels = byHolder.get(holder);
    if (channels) channels.push(channel);
    else byHolder.set(holder, [channel]);
  }
  await Promise.all(
    [...byHolder].map(async ([holder, channels]) => {
      const ancestor = (await serde.loadsTyped('json', holder)) as Checkpoint;
      for (const channel of channels) {
        if (!Object.hasOwn(ancestor.channel_values, channel)) continue;
        // defineProperty, so a channel named like `__proto__` stays an ordinary key.
        Object.defineProperty(checkpoint.channel_values, channel, {
          value: ancestor.channel_values[channel],
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
    }),
  );
}
