import type { BaseMessage } from '@langchain/core/messages';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { emptyCheckpoint } from '@langchain/langgraph-checkpoint';
import { pruneThread } from '../../checkpoints/retention';
import { checkpointMessages } from '../../checkpoints/projection-sync';
import type { SuiteContext } from '../context';
import { latestCheckpoint, nextCheckpointId, uid } from '../helpers';

/** What a message is for these tests: its id and text. */
function shape(messages: readonly BaseMessage[]): [string | undefined, unknown][] {
  return messages.map((message) => [message.id, message.content]);
}

function message(index: number, text = `message ${index}`): BaseMessage {
  return index % 2 === 0
    ? new HumanMessage({ id: uid(`h${index}`), content: text })
    : new AIMessage({ id: uid(`a${index}`), content: text });
}

/**
 * Threads of many steps, written the way LangGraph writes them: each checkpoint is the child of
 * the previous one and its `messages` array holds the previous array's message objects plus the
 * step's new ones (the messages reducer), a run continuing from the array a read handed out.
 * A backend may store only what each step changed; every read must still see exactly the
 * messages of its checkpoint, and the projection exactly those of the latest.
 */
export function longThreadTests(ctx: SuiteContext): void {
  describe('long threads', () => {
    interface Step {
      id: string;
      messages: BaseMessage[];
    }

    async function put(
      threadId: string,
      parent: Step | undefined,
      messages: BaseMessage[],
      step: number,
    ): Promise<Step> {
      const id = nextCheckpointId();
      await ctx.backend.checkpointer.put(
        {
          configurable: {
            thread_id: threadId,
            checkpoint_ns: '',
            ...(parent ? { checkpoint_id: parent.id } : {}),
          },
        },
        {
          ...emptyCheckpoint(),
          id,
          channel_values: { messages },
          channel_versions: { messages: step + 1 },
        },
        { source: 'loop', step, parents: {} },
        { messages: step + 1 },
      );
      return { id, messages };
    }

    async function messagesOf(threadId: string, checkpointId?: string): Promise<BaseMessage[]> {
      const tuple = await ctx.backend.checkpointer.getTuple({
        configurable: {
          thread_id: threadId,
          checkpoint_ns: '',
          ...(checkpointId ? { checkpoint_id: checkpointId } : {}),
        },
      });
      if (!tuple) throw new Error(`no checkpoint ${checkpointId ?? '(latest)'}`);
      return checkpointMessages(tuple.checkpoint);
    }

    /**
     * `steps` steps of one new message each; every `runLength` steps the next one continues
     * from the latest checkpoint as read back (a new run). Returns every step.
     */
    async function grow(
      threadId: string,
      steps: number,
      runLength: number,
      from: Step | undefined = undefined,
    ): Promise<Step[]> {
      const written: Step[] = [];
      let previous = from;
      for (let step = previous?.messages.length ?? 0; written.length < steps; step += 1) {
        if (previous && written.length > 0 && written.length % runLength === 0) {
          previous = { id: previous.id, messages: await messagesOf(threadId) };
        }
        previous = await put(
          threadId,
          previous,
          [...(previous?.messages ?? []), message(step)],
          step,
        );
        written.push(previous);
      }
      return written;
    }

    async function rowIds(sessionId: string): Promise<string[]> {
      return (await ctx.backend.messages.listAll(sessionId, {})).map((row) => row.id);
    }

    it("a 300-step thread's latest checkpoint round-trips every message, and so does each earlier one", async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const steps = await grow(session.threadId, 300, 7);
      const last = steps[steps.length - 1] as Step;
      expect(shape(await messagesOf(session.threadId))).toEqual(shape(last.messages));
      for (const index of [0, 1, 49, 150, 298]) {
        const step = steps[index] as Step;
        expect(shape(await messagesOf(session.threadId, step.id))).toEqual(shape(step.messages));
      }
      expect(await rowIds(session.id)).toEqual(last.messages.map((m) => m.id));
      expect((await ctx.backend.sessions.get(session.id, {}))?.messageCount).toBe(300);
      const listed: number[] = [];
      for await (const tuple of ctx.backend.checkpointer.list(
        { configurable: { thread_id: session.threadId } },
        { limit: 120 },
      )) {
        listed.push(checkpointMessages(tuple.checkpoint).length);
      }
      expect(listed).toEqual(Array.from({ length: 120 }, (_, i) => 300 - i));
    });

    it("a thread's stored bytes grow with what its steps add, not with its length", async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const first = await grow(session.threadId, 300, 25);
      const half = (await ctx.backend.checkpoints.footprint(session.threadId)).bytes;
      await grow(session.threadId, 300, 25, first[first.length - 1]);
      const whole = (await ctx.backend.checkpoints.footprint(session.threadId)).bytes;
      // Every checkpoint holding its whole list would make this 4× (the sum of 1 … n doubles
      // twice); steps that store what they add make it at most about 2×.
      expect(whole / half).toBeLessThan(3);
    });

    it("a fork from step k sees exactly k's messages, and the steps after k keep theirs", async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const steps = await grow(session.threadId, 300, 10);
      const k = steps[269] as Step;
      const forked = { id: k.id, messages: await messagesOf(session.threadId, k.id) };
      expect(shape(forked.messages)).toEqual(shape(k.messages));
      const branch = await put(
        session.threadId,
        forked,
        [...forked.messages, message(1000, 'on the branch')],
        270,
      );
      expect(shape(await messagesOf(session.threadId))).toEqual(shape(branch.messages));
      expect(await rowIds(session.id)).toEqual(branch.messages.map((m) => m.id));
      const last300 = steps[299] as Step;
      expect(shape(await messagesOf(session.threadId, last300.id))).toEqual(
        shape(last300.messages),
      );
    });

    it('a step that removes, replaces and appends messages stores exactly its result', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const steps = await grow(session.threadId, 300, 300);
      const previous = steps[steps.length - 1] as Step;
      const replaced = previous.messages[290] as BaseMessage;
      const next = previous.messages
        .filter((_, index) => index !== 280)
        .map((m) => (m === replaced ? new AIMessage({ id: replaced.id, content: 'edited' }) : m));
      next.push(message(300));
      const edited = await put(session.threadId, previous, next, 300);
      expect(shape(await messagesOf(session.threadId))).toEqual(shape(edited.messages));
      expect(await rowIds(session.id)).toEqual(edited.messages.map((m) => m.id));
      expect((await ctx.backend.messages.get(session.id, replaced.id as string, {}))?.content).toBe(
        'edited',
      );
      // Then every message but the last two goes (a RemoveMessage of each).
      const trimmed = await put(session.threadId, edited, edited.messages.slice(-2), 301);
      expect(shape(await messagesOf(session.threadId))).toEqual(shape(trimmed.messages));
      expect(await rowIds(session.id)).toEqual(trimmed.messages.map((m) => m.id));
    });

    it('pruning all but the head keeps the long thread whole and writable', async () => {
      const session = await ctx.backend.sessions.create({}, {});
      const steps = await grow(session.threadId, 300, 300);
      const head = steps[steps.length - 1] as Step;
      expect(
        await pruneThread(ctx.backend.checkpoints, session.threadId, {
          kind: 'keep_last',
          count: 1,
        }),
      ).toBe(299);
      expect(shape(await messagesOf(session.threadId))).toEqual(shape(head.messages));
      // The next step continues from the array the last put used, as a running graph would.
      const [next] = await grow(session.threadId, 1, 300, head);
      expect(shape(await messagesOf(session.threadId))).toEqual(shape((next as Step).messages));
      expect((await latestCheckpoint(ctx.backend, session.threadId))?.checkpoint.id).toBe(
        (next as Step).id,
      );
      expect(await rowIds(session.id)).toEqual((next as Step).messages.map((m) => m.id));
    });
  });
}
