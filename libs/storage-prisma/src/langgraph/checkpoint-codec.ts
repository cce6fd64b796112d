/**
 * Binary layout of the `checkpoints.checkpoint` column.
 *
 * A checkpoint is stored as its serialized skeleton (every field but `channel_values`) plus one
 * entry per channel value, each tagged with the channel version it belongs to. Keeping the
 * values apart lets `put` copy the unchanged channels of the parent checkpoint byte for byte
 * (no deserialize/serialize round trip) and store only what `newVersions` says changed, the
 * semantics the official PostgreSQL saver implements with its blobs table.
 *
 * Two formats, told apart by their magic; both are read, only `LGC2` is written:
 *
 * - `LGC1`: skeleton type, skeleton bytes, entry count, then per entry: channel, version, value
 *   type, value bytes. Every entry is a whole serialized value.
 * - `LGC2`: skeleton type, skeleton bytes, segment count, then per segment: value type, value
 *   bytes, item count; entry count, then per entry: kind, channel, version and, for kind 0
 *   (value), value type and bytes, for kind 1 (list), a reference count and per reference: the
 *   id of the checkpoint (same thread and namespace) holding the segment, the segment's index
 *   there, and the item range `start`, `count` taken from it. A list entry's value is the
 *   concatenation of its references' item ranges, so a step that appends messages stores only
 *   the new ones and refers to its ancestors' segments for the rest.
 *
 * All integers are unsigned 32-bit big-endian, strings UTF-8 with a length prefix.
 */

const MAGIC_V1 = [0x4c, 0x47, 0x43, 0x31]; // "LGC1"
const MAGIC_V2 = [0x4c, 0x47, 0x43, 0x32]; // "LGC2"

const KIND_VALUE = 0;
const KIND_LIST = 1;

/** A channel value stored whole. */
export interface ValueEntry {
  kind: 'value';
  channel: string;
  /** `String(version)` of the channel version the value was written at. */
  version: string;
  /** Serializer type tag of `value`. */
  type: string;
  value: Uint8Array;
}

/** Items `start … start + count − 1` of segment `index` of checkpoint `holder`. */
export interface SegmentRef {
  holder: string;
  index: number;
  start: number;
  count: number;
}

/** An array channel value stored as ranges of segments (see the module comment). */
export interface ListEntry {
  kind: 'list';
  channel: string;
  version: string;
  refs: SegmentRef[];
}

export type ChannelEntry = ValueEntry | ListEntry;

/** Consecutive items of an array channel value, serialized as one array. */
export interface Segment {
  type: string;
  value: Uint8Array;
  /** Items in the serialized array. */
  count: number;
}

export interface CheckpointBlob {
  skeletonType: string;
  skeleton: Uint8Array;
  /** The segments this checkpoint holds (always empty in `LGC1`). */
  segments: Segment[];
  entries: ChannelEntry[];
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Encodes `blob` as `LGC2`. */
export function encodeCheckpointBlob(blob: CheckpointBlob): Uint8Array<ArrayBuffer> {
  const skeletonType = encoder.encode(blob.skeletonType);
  const segments = blob.segments.map((segment) => ({
    ...segment,
    type: encoder.encode(segment.type),
  }));
  const entries = blob.entries.map((entry) => ({
    entry,
    channel: encoder.encode(entry.channel),
    version: encoder.encode(entry.version),
    type: entry.kind === 'value' ? encoder.encode(entry.type) : undefined,
    holders: entry.kind === 'list' ? entry.refs.map((ref) => encoder.encode(ref.holder)) : [],
  }));
  let size = MAGIC_V2.length + 4 + skeletonType.length + 4 + blob.skeleton.length + 4 + 4;
  for (const segment of segments) size += 12 + segment.type.length + segment.value.length;
  for (const { entry, channel, version, type, holders } of entries) {
    size += 12 + channel.length + version.length;
    if (entry.kind === 'value') size += 8 + (type?.length ?? 0) + entry.value.length;
    else size += 4 + holders.reduce((sum, holder) => sum + 16 + holder.length, 0);
  }
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  out.set(MAGIC_V2, 0);
  let offset = MAGIC_V2.length;
  const int = (value: number): void => {
    view.setUint32(offset, value);
    offset += 4;
  };
  const bytes = (value: Uint8Array): void => {
    int(value.length);
    out.set(value, offset);
    offset += value.length;
  };
  bytes(skeletonType);
  bytes(blob.skeleton);
  int(segments.length);
  for (const segment of segments) {
    bytes(segment.type);
    bytes(segment.value);
    int(segment.count);
  }
  int(entries.length);
  for (const { entry, channel, version, type, holders } of entries) {
    int(entry.kind === 'value' ? KIND_VALUE : KIND_LIST);
    bytes(channel);
    bytes(version);
    if (entry.kind === 'value') {
      bytes(type ?? new Uint8Array());
      bytes(entry.value);
      continue;
    }
    int(entry.refs.length);
    entry.refs.forEach((ref, i) => {
      bytes(holders[i] ?? new Uint8Array());
      int(ref.index);
      int(ref.start);
      int(ref.count);
    });
  }
  return out;
}

/**
 * Parses a blob written by {@link encodeCheckpointBlob} (`LGC2`) or by earlier versions of the
 * saver (`LGC1`). Byte fields are views into `bytes` (copy them before handing them out).
 * Throws on anything else, naming what is wrong.
 */
export function decodeCheckpointBlob(bytes: Uint8Array): CheckpointBlob {
  const version = hasMagic(bytes, MAGIC_V2) ? 2 : hasMagic(bytes, MAGIC_V1) ? 1 : 0;
  if (version === 0) {
    throw new Error('Not a checkpoint blob written by PrismaCheckpointSaver (bad magic)');
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let offset = MAGIC_V2.length;
  const int = (): number => {
    if (offset + 4 > bytes.length) throw new Error('Truncated checkpoint blob');
    const value = view.getUint32(offset);
    offset += 4;
    return value;
  };
  const take = (): Uint8Array => {
    const length = int();
    if (offset + length > bytes.length) throw new Error('Truncated checkpoint blob');
    offset += length;
    return bytes.subarray(offset - length, offset);
  };
  const text = (): string => decoder.decode(take());
  const skeletonType = text();
  const skeleton = take();
  const segments: Segment[] = [];
  if (version === 2) {
    const count = int();
    for (let i = 0; i < count; i += 1) {
      segments.push({ type: text(), value: take(), count: int() });
    }
  }
  const entries: ChannelEntry[] = [];
  const count = int();
  for (let i = 0; i < count; i += 1) {
    const kind = version === 1 ? KIND_VALUE : int();
    const channel = text();
    const entryVersion = text();
    if (kind === KIND_VALUE) {
      entries.push({ kind: 'value', channel, version: entryVersion, type: text(), value: take() });
    } else if (kind === KIND_LIST) {
      const refs: SegmentRef[] = [];
      const refCount = int();
      for (let r = 0; r < refCount; r += 1) {
        refs.push({ holder: text(), index: int(), start: int(), count: int() });
      }
      entries.push({ kind: 'list', channel, version: entryVersion, refs });
    } else {
      throw new Error(`Unknown checkpoint blob entry kind ${kind}`);
    }
  }
  return { skeletonType, skeleton, segments, entries };
}

function hasMagic(bytes: Uint8Array, magic: readonly number[]): boolean {
  return bytes.length >= magic.length && magic.every((byte, i) => bytes[i] === byte);
}

/** The checkpoints (other than `self`) whose segments `entries` refer to. */
export function foreignHolders(entries: readonly ChannelEntry[], self: string): string[] {
  const holders = new Set<string>();
  for (const entry of entries) {
    if (entry.kind !== 'list') continue;
    for (const ref of entry.refs) if (ref.holder !== self) holders.add(ref.holder);
  }
  return [...holders];
}

/**
 * `bytes` (the blob of checkpoint `self`) with every segment it refers to in `holders` copied
 * into it, so it no longer depends on those checkpoints (retention deletes them); null when it
 * refers to none of them. Bytes are copied, nothing is deserialized.
 * @throws Error when a referenced segment is not among `holders`' segments.
 */
export function inlineSegments(
  bytes: Uint8Array,
  self: string,
  holders: ReadonlyMap<string, readonly Segment[]>,
): Uint8Array<ArrayBuffer> | null {
  const blob = decodeCheckpointBlob(bytes);
  if (!foreignHolders(blob.entries, self).some((holder) => holders.has(holder))) return null;
  const segments = [...blob.segments];
  const copied = new Map<string, number>();
  const entries = blob.entries.map((entry): ChannelEntry => {
    if (entry.kind === 'value') return entry;
    const refs = entry.refs.map((ref): SegmentRef => {
      const source = ref.holder === self ? undefined : holders.get(ref.holder);
      if (!source) return ref;
      const key = `${ref.holder}\u0000${ref.index}`;
      let index = copied.get(key);
      if (index === undefined) {
        const segment = source[ref.index];
        if (!segment)
          throw new Error(`segment ${ref.index} of checkpoint ${ref.holder} is missing`);
        index = segments.push(segment) - 1;
        copied.set(key, index);
      }
      return { holder: self, index, start: ref.start, count: ref.count };
    });
    return { ...entry, refs };
  });
  return encodeCheckpointBlob({ ...blob, segments, entries });
}
