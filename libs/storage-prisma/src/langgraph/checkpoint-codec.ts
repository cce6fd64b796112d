/**
 * Binary layout of the `checkpoints.checkpoint` column.
 *
 * A checkpoint is stored as its serialized skeleton (every field but `channel_values`) plus one
 * separately serialized entry per channel value, each tagged with the channel version it
 * belongs to. Keeping the values apart lets `put` copy the unchanged channels of the parent
 * checkpoint byte for byte (no deserialize/serialize round trip) and store only what
 * `newVersions` says changed, the semantics the official PostgreSQL saver implements with its
 * blobs table, while a read stays a single-row lookup.
 *
 * Layout (all integers unsigned 32-bit big-endian, strings UTF-8 with a length prefix):
 * `"LGC1"`, skeleton type, skeleton bytes, entry count, then per entry: channel, version, value
 * type, value bytes.
 */

const MAGIC = [0x4c, 0x47, 0x43, 0x31]; // "LGC1"

export interface ChannelEntry {
  channel: string;
  /** `String(version)` of the channel version the value was written at. */
  version: string;
  /** Serializer type tag of `value`. */
  type: string;
  value: Uint8Array;
}

export interface CheckpointBlob {
  skeletonType: string;
  skeleton: Uint8Array;
  entries: ChannelEntry[];
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function encodeCheckpointBlob(blob: CheckpointBlob): Uint8Array {
  const skeletonType = encoder.encode(blob.skeletonType);
  const entries = blob.entries.map((entry) => ({
    channel: encoder.encode(entry.channel),
    version: encoder.encode(entry.version),
    type: encoder.encode(entry.type),
    value: entry.value,
  }));
  let size = MAGIC.length + 4 + skeletonType.length + 4 + blob.skeleton.length + 4;
  for (const entry of entries) {
    size +=
      16 + entry.channel.length + entry.version.length + entry.type.length + entry.value.length;
  }
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  out.set(MAGIC, 0);
  let offset = MAGIC.length;
  const put = (bytes: Uint8Array): void => {
    view.setUint32(offset, bytes.length);
    out.set(bytes, offset + 4);
    offset += 4 + bytes.length;
  };
  put(skeletonType);
  put(blob.skeleton);
  view.setUint32(offset, entries.length);
  offset += 4;
  for (const entry of entries) {
    put(entry.channel);
    put(entry.version);
    put(entry.type);
    put(entry.value);
  }
  return out;
}

/**
 * Parses a blob written by {@link encodeCheckpointBlob}. Byte fields are views into `bytes`
 * (copy them before handing them out). Throws on anything else, naming what is wrong.
 */
export function decodeCheckpointBlob(bytes: Uint8Array): CheckpointBlob {
  if (bytes.length < MAGIC.length || MAGIC.some((byte, i) => bytes[i] !== byte)) {
    throw new Error('Not a checkpoint blob written by PrismaCheckpointSaver (bad magic)');
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let offset = MAGIC.length;
  const take = (): Uint8Array => {
    if (offset + 4 > bytes.length) throw new Error('Truncated checkpoint blob');
    const length = view.getUint32(offset);
    const start = offset + 4;
    if (start + length > bytes.length) throw new Error('Truncated checkpoint blob');
    offset = start + length;
    return bytes.subarray(start, offset);
  };
  const skeletonType = decoder.decode(take());
  const skeleton = take();
  if (offset + 4 > bytes.length) throw new Error('Truncated checkpoint blob');
  const count = view.getUint32(offset);
  offset += 4;
  const entries: ChannelEntry[] = [];
  for (let i = 0; i < count; i += 1) {
    const channel = decoder.decode(take());
    const version = decoder.decode(take());
    const type = decoder.decode(take());
    entries.push({ channel, version, type, value: take() });
  }
  return { skeletonType, skeleton, entries };
}
