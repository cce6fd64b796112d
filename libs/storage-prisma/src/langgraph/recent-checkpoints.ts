import type { KnownEntry } from './list-channels';

/**
 * The channel entries of the checkpoint the saver stored or read (as the latest) last per
 * (thread, namespace), so the next `put` of that thread (whose parent it almost always is)
 * copies the unchanged channels without reading the parent back and compares its arrays with
 * the parent's items. It only ever returns what this process itself wrote or read for that
 * exact (thread, namespace, checkpoint id); bounded by thread count and bytes, oldest dropped.
 */
export class RecentCheckpoints {
  private readonly byKey = new Map<
    string,
    { checkpointId: string; entries: KnownEntry[]; bytes: number }
  >();
  private bytes = 0;

  constructor(
    private readonly maxThreads: number,
    private readonly maxBytes: number,
  ) {}

  get(threadId: string, checkpointNs: string, checkpointId: string): KnownEntry[] | undefined {
    const hit = this.byKey.get(recentKey(threadId, checkpointNs));
    return hit?.checkpointId === checkpointId ? hit.entries : undefined;
  }

  remember(
    threadId: string,
    checkpointNs: string,
    checkpointId: string,
    entries: KnownEntry[],
  ): void {
    const key = recentKey(threadId, checkpointNs);
    this.drop(key);
    const bytes = entries.reduce(
      (sum, entry) => sum + (entry.kind === 'value' ? entry.value.length : entry.bytes),
      0,
    );
    if (bytes > this.maxBytes) return;
    this.byKey.set(key, { checkpointId, entries, bytes });
    this.bytes += bytes;
    for (const oldest of this.byKey.keys()) {
      if (this.byKey.size <= this.maxThreads && this.bytes <= this.maxBytes) break;
      this.drop(oldest);
    }
  }

  forgetThread(threadId: string): void {
    const prefix = recentKey(threadId, '');
    for (const key of [...this.byKey.keys()]) if (key.startsWith(prefix)) this.drop(key);
  }

  private drop(key: string): void {
    const entry = this.byKey.get(key);
    if (!entry) return;
    this.bytes -= entry.bytes;
    this.byKey.delete(key);
  }
}

/** NUL cannot occur in stored ids (see `assertStorableString`), so the key is unambiguous. */
function recentKey(threadId: string, checkpointNs: string): string {
  return `${threadId}\u0000${checkpointNs}`;
}
