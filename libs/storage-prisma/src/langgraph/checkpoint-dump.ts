import { MESSAGES_CHANNEL, keepsItems } from '@cognition/storage';
import type { ChannelVersions, Checkpoint } from '@langchain/langgraph-checkpoint';
import type { ChannelEntry, Segment } from './checkpoint-codec';
import { encodeCheckpointBlob } from './checkpoint-codec';
import type { KnownEntry } from './list-channels';
import { listLength, planList } from './list-channels';

/**
 * How a checkpoint's `messages` channel relates to another checkpoint's: its first `kept`
 * entries are those of checkpoint `checkpointId` (the parent), the rest are new.
 */
export interface MessagesBase {
  checkpointId: string;
  kept: number;
}

/** Serializes one value; a value the serializer refuses is bad input named by `field`. */
export type Dump = (value: unknown, field: string) => Promise<[string, Uint8Array]>;

/** A checkpoint serialized for its row, with what the saver now knows of its channels. */
export interface DumpedCheckpoint {
  known: KnownEntry[];
  blob: Uint8Array;
  messagesBase: MessagesBase | undefined;
}

/**
 * Serializes the checkpoint: the skeleton, the values of the channels in `newVersions`, and
 * for every other versioned channel the parent's stored entry when it is at the same version
 * (bytes or segment references copied, never re-serialized). An array value is stored as
 * segments (see `list-channels.ts`): only the items that are not the parent's are serialized.
 */
export async function dumpCheckpoint(
  checkpoint: Checkpoint,
  newVersions: ChannelVersions,
  parentId: string | null,
  parentEntriesOf: Promise<KnownEntry[] | undefined> | undefined,
  dump: Dump,
): Promise<DumpedCheckpoint> {
  const { channel_values: values = {}, ...skeleton } = checkpoint;
  const versions = checkpoint.channel_versions ?? {};
  const [[skeletonType, skeletonBytes], parentEntries] = await Promise.all([
    dump(skeleton, 'checkpoint'),
    parentEntriesOf,
  ]);
  const parentByChannel = new Map((parentEntries ?? []).map((entry) => [entry.channel, entry]));
  const segments: Segment[] = [];
  const known: KnownEntry[] = [];
  let messagesBase: MessagesBase | undefined;
  for (const [channel, version] of Object.entries(newVersions)) {
    if (!(channel in values)) continue;
    const value = values[channel];
    const field = `checkpoint.channel_values.${channel}`;
    if (!Array.isArray(value)) {
      const [type, bytes] = await dump(value, field);
      known.push({ kind: 'value', channel, version: String(version), type, value: bytes });
      continue;
    }
    const parent = parentByChannel.get(channel);
    const plan = planList(value, parent, checkpoint.id, segments.length);
    // The memory the value pins, estimated: the parent's share for the kept items, plus
    // the new segments.
    const parentItems = parent?.kind === 'list' ? (parent.items?.length ?? 0) : 0;
    let bytes =
      parent?.kind === 'list' && parentItems > 0
        ? Math.round((parent.bytes * plan.kept) / parentItems)
        : 0;
    for (const { start, end } of plan.fresh) {
      const [type, serialized] = await dump(value.slice(start, end), field);
      segments.push({ type, value: serialized, count: end - start });
      bytes += serialized.length;
    }
    known.push({
      kind: 'list',
      channel,
      version: String(version),
      refs: plan.refs,
      ...(keepsItems(value) ? { items: value.slice() } : {}),
      bytes,
    });
    if (
      channel === MESSAGES_CHANNEL &&
      parentId !== null &&
      parent?.kind === 'list' &&
      parent.items
    ) {
      messagesBase = { checkpointId: parentId, kept: plan.kept };
    }
  }
  for (const [channel, version] of Object.entries(versions)) {
    if (channel in newVersions) continue;
    const entry = parentByChannel.get(channel);
    if (!entry || entry.version !== String(version)) continue;
    known.push(entry);
    if (channel === MESSAGES_CHANNEL && parentId !== null) {
      const kept = entry.kind === 'list' ? listLength(entry.refs) : undefined;
      const current = values[channel];
      if (kept !== undefined || Array.isArray(current)) {
        messagesBase = {
          checkpointId: parentId,
          kept: kept ?? (current as unknown[]).length,
        };
      }
    }
  }
  const entries = known.map(storedEntry);
  return {
    known,
    blob: encodeCheckpointBlob({ skeletonType, skeleton: skeletonBytes, segments, entries }),
    messagesBase,
  };
}

/** The stored form of what the saver knows of a channel (list items stay in memory). */
function storedEntry(entry: KnownEntry): ChannelEntry {
  if (entry.kind === 'value') return entry;
  return { kind: 'list', channel: entry.channel, version: entry.version, refs: entry.refs };
}
