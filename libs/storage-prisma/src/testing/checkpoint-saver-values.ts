import { AIMessage, HumanMessage } from '@langchain/core/messages';
import type { RunnableConfig } from '@langchain/core/runnables';
import type { Checkpoint } from '@langchain/langgraph-checkpoint';
import type { OpenedDatabase } from '../db/db';
import { PrismaCheckpointSaver } from '../langgraph/checkpoint-saver';

/** What the shared saver specs give the cases kept in this file (read at test time). */
export interface SaverCaseContext {
  saver(): PrismaCheckpointSaver;
  opened(): OpenedDatabase;
  config(thread_id: string, checkpoint_ns?: string, checkpoint_id?: string): RunnableConfig;
  checkpointOf(values: Record<string, unknown>, versions: Record<string, number>): Checkpoint;
  meta(step: number): { source: 'loop'; step: number; parents: Record<string, never> };
}

/**
 * A `checkpoints.checkpoint` blob as the saver wrote it before segments (magic `LGC1`: skeleton
 * type and bytes, then channel, version, type and bytes per entry; lengths as big-endian u32).
 */
function lgc1(
  skeletonType: string,
  skeleton: Uint8Array,
  entries: readonly (readonly [string, string, string, Uint8Array])[],
): Uint8Array<ArrayBuffer> {
  const parts: Uint8Array[] = [new TextEncoder().encode('LGC1')];
  const field = (bytes: Uint8Array): void => {
    const length = new Uint8Array(4);
    new DataView(length.buffer).setUint32(0, bytes.length);
    parts.push(length, bytes);
  };
  const text = (value: string): void => field(new TextEncoder().encode(value));
  text(skeletonType);
  field(skeleton);
  const count = new Uint8Array(4);
  new DataView(count.buffer).setUint32(0, entries.length);
  parts.push(count);
  for (const [channel, version, type, bytes] of entries) {
    text(channel);
    text(version);
    text(type);
    field(bytes);
  }
  const out = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/** How the saver stores channel values: carried over, segmented, legacy blobs, exotic values. */
export function channelValueCases(ctx: SaverCaseContext): void {
  const { config, checkpointOf, meta } = ctx;
  describe('channel values', () => {
    let saver: PrismaCheckpointSaver;
    let opened: OpenedDatabase;
    beforeEach(() => {
      saver = ctx.saver();
      opened = ctx.opened();
    });

    it('carries unchanged channels over from a parent this process did not write', async () => {
      const parent = checkpointOf(
        { messages: ['hi'], count: 1, stale: 'x' },
        { messages: 1, count: 1, stale: 1 },
      );
      const parentConfig = await saver.put(config('t'), parent, meta(0), {
        messages: 1,
        count: 1,
        stale: 1,
      });
      const fresh = new PrismaCheckpointSaver(opened.db);
      // `stale` claims a version its parent never stored: it has no value to carry.
      const child = checkpointOf(
        { messages: ['hi'], count: 2, stale: 'x' },
        { messages: 1, count: 2, stale: 7 },
      );
      const childConfig = await fresh.put(parentConfig, child, meta(1), { count: 2 });
      expect((await fresh.getTuple(childConfig))?.checkpoint.channel_values).toEqual({
        messages: ['hi'],
        count: 2,
      });
      expect((await saver.getTuple(childConfig))?.checkpoint.channel_values).toEqual({
        messages: ['hi'],
        count: 2,
      });
    });

    it('reads rows written in the LGC1 format and builds on them', async () => {
      const first = new HumanMessage({ id: 'm1', content: 'stored by an earlier version' });
      const { channel_values: values, ...skeleton } = checkpointOf(
        { messages: [first], count: 1 },
        { messages: 1, count: 1 },
      );
      const [skeletonType, skeletonBytes] = await saver.serde.dumpsTyped(skeleton);
      const entries = await Promise.all(
        Object.entries(values).map(async ([channel, value]) => {
          const [type, bytes] = await saver.serde.dumpsTyped(value);
          return [channel, '1', type, bytes] as const;
        }),
      );
      const [metadataType, metadataBytes] = await saver.serde.dumpsTyped(meta(0));
      await opened.db.checkpoint.create({
        data: {
          threadId: 't',
          checkpointNs: '',
          checkpointId: skeleton.id,
          type: metadataType,
          checkpoint: lgc1(skeletonType, skeletonBytes, entries),
          metadata: new Uint8Array(metadataBytes),
        },
      });
      const stored = await saver.getTuple(config('t'));
      expect(stored?.checkpoint.channel_values).toEqual({ messages: [first], count: 1 });
      const messages = [...((stored?.checkpoint.channel_values['messages'] as unknown[]) ?? [])];
      messages.push(new AIMessage({ id: 'm2', content: 'appended' }));
      const childConfig = await saver.put(
        config('t', '', skeleton.id),
        checkpointOf({ messages, count: 1 }, { messages: 2, count: 1 }),
        meta(1),
        { messages: 2 },
      );
      expect(
        (await new PrismaCheckpointSaver(opened.db).getTuple(childConfig))?.checkpoint
          .channel_values,
      ).toEqual({ messages, count: 1 });
    });

    it('does not carry values from a parent deleted with its thread', async () => {
      const parent = checkpointOf({ messages: ['hi'] }, { messages: 1 });
      const parentConfig = await saver.put(config('t'), parent, meta(0), { messages: 1 });
      await saver.deleteThread('t');
      const childConfig = await saver.put(
        parentConfig,
        checkpointOf({ messages: ['hi'] }, { messages: 1 }),
        meta(1),
        {},
      );
      expect((await saver.getTuple(childConfig))?.checkpoint.channel_values).toEqual({});
    });

    it('round-trips messages, bytes and a large state exactly', async () => {
      const bytes = new Uint8Array([0, 1, 2, 254, 255]);
      const big = 'x'.repeat(1_500_000);
      const values = {
        messages: [new HumanMessage({ content: 'hi', id: 'm1' }), new AIMessage('yo')],
        bytes,
        big,
      };
      const stored = await saver.put(
        config('t'),
        checkpointOf(values, { messages: 1, bytes: 1, big: 1 }),
        meta(0),
        {
          messages: 1,
          bytes: 1,
          big: 1,
        },
      );
      const tuple = await saver.getTuple(stored);
      const restored = tuple?.checkpoint.channel_values as typeof values;
      expect(restored.messages[0]).toBeInstanceOf(HumanMessage);
      expect(restored.messages[1]).toBeInstanceOf(AIMessage);
      expect(restored.messages.map((m) => m.content)).toEqual(['hi', 'yo']);
      expect(restored.bytes).toEqual(bytes);
      expect(restored.big).toBe(big);
    });
  });
}
