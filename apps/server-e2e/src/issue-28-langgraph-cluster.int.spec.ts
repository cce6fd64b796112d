import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@langchain/langgraph-sdk';
import { FakeOpenAIServer, eventually } from './testing/agent-server';
import type { TestCluster } from './testing/cluster';
import { startCluster } from './testing/cluster';
import { http } from './testing/http';
import { GRAPHS_DIR } from './testing/langgraph-sdk';
import { STORY, STORY_WORDS_BEFORE_GATE } from './testing/langgraph/story';
import { tempWorkspace } from './testing/server-process';

/**
 * Issue 28 on three nodes (one PostgreSQL, one Redis, behind HAProxy), driven by the official
 * SDK: a langgraph.json graph's run started through the balancer with `stream_resumable`, its
 * stream joined (`client.runs.joinStream`) through a node that is not running it and through the
 * balancer, and the thread's join stream (`client.threads.joinStream`) through that node, then
 * the node running it killed with SIGKILL: another node takes the run over from its last
 * checkpoint, and every join completes with the whole answer; one run, a success.
 *
 * The `story` graph streams its answer word by word and stops mid-answer until the test releases
 * its gate (a folder all nodes see), so the kill happens mid-stream without timing.
 */
const KEY = 'e2e-lg-cluster-key-0123456789';
// As cluster.int.spec.ts: a dead node's run is taken over within 1.5 leases.
const LEASE_SECONDS = 3;

type Part = { event: string; data: unknown; id?: string };
type Message = { id?: string; type: string; content: unknown };

describe('LangGraph API on three nodes behind HAProxy (issue 28)', () => {
  let fake: FakeOpenAIServer;
  let cluster: TestCluster;
  const gates = tempWorkspace('cognition-e2e-lg-cluster-');

  beforeAll(async () => {
    // The graphs run no provider model; the cluster helper wants one for its agents.
    fake = await FakeOpenAIServer.start({ fallback: { text: 'ok' } });
    cluster = await startCluster({
      size: 3,
      fake,
      leaseSeconds: LEASE_SECONDS,
      env: {
        COGNITION_LANGGRAPH_CONFIG: path.join(GRAPHS_DIR, 'langgraph.json'),
        COGNITION_SCOPING_ENABLED: 'true',
        COGNITION_SCOPE_KEYS: 'user',
        COGNITION_API_KEYS: `${KEY}:user=alice`,
      },
      checkKey: KEY,
    });
  }, 90_000);
  afterAll(async () => {
    await cluster?.close();
    await fake?.close();
    gates.remove();
  });

  const client = (url: string) => new Client({ apiUrl: url, apiKey: KEY });

  /** The index of the node whose /health lists the run among the runs it owns. */
  async function ownerOf(runId: string): Promise<number> {
    return eventually(async () => {
      for (let i = 0; i < cluster.nodes.length; i += 1) {
        if (!cluster.nodes[i]?.process) continue;
        const health = await http(cluster.nodeUrl(i), 'GET', '/health', {
          headers: { Authorization: `Bearer ${KEY}` },
        });
        const node = health.json?.['node'] as { owned_runs?: string[] } | null;
        if (node?.owned_runs?.includes(runId)) return i + 1;
      }
      return false;
    }).then((n) => n - 1);
  }

  /** Every part of a join, collected as they come (`parts` is readable meanwhile). */
  function join(via: Client, threadId: string, runId: string) {
    const parts: Part[] = [];
    const done = (async () => {
      for await (const part of via.runs.joinStream(threadId, runId)) parts.push(part);
      return parts;
    })();
    return { parts, done };
  }

  /** The words of the answer streamed as message tuples of `messageId`, joined. */
  const tokensOf = (parts: Part[], messageId: string) =>
    parts
      .filter((p) => p.event === 'messages')
      .map((p) => (p.data as [Message, unknown])[0])
      .filter((chunk) => chunk.id === messageId)
      .map((chunk) => String(chunk.content))
      .join('');

  it('a joined stream survives SIGKILL of the node running the run: the whole answer, one run, success', async () => {
    const gate = path.join(gates.dir, 'story');
    mkdirSync(gate);
    const balancer = client(cluster.url);
    const thread = await balancer.threads.create();
    const run = await balancer.runs.create(thread.thread_id, 'story', {
      input: { messages: [{ type: 'human', content: 'tell me a story' }] },
      config: { configurable: { gate } },
      streamMode: ['values', 'messages-tuple'],
      streamResumable: true,
      onDisconnect: 'continue',
    });
    const owner = await ownerOf(run.run_id);
    const other = (owner + 1) % cluster.nodes.length;
    const viaNode = join(client(cluster.nodeUrl(other)), thread.thread_id, run.run_id);
    const viaBalancer = join(balancer, thread.thread_id, run.run_id);
    // The thread's join stream through the same node: the run in progress, from its start.
    const closing = new AbortController();
    const threadParts: Part[] = [];
    const threadDone = (async () => {
      const stream = client(cluster.nodeUrl(other)).threads.joinStream(thread.thread_id, {
        signal: closing.signal,
      });
      for await (const part of stream) {
        threadParts.push(part);
        if (part.event === 'run_done') break;
      }
    })();
    // Every join has the first words while the run waits at its gate on its node.
    const words = (parts: Part[]) => parts.filter((p) => p.event === 'messages').length;
    await eventually(() =>
      Promise.resolve(
        words(viaNode.parts) === STORY_WORDS_BEFORE_GATE &&
          words(viaBalancer.parts) === STORY_WORDS_BEFORE_GATE &&
          words(threadParts) === STORY_WORDS_BEFORE_GATE,
      ),
    );

    await cluster.stop(owner, 'SIGKILL');
    writeFileSync(path.join(gate, 'release'), '');
    const [fromNode, fromBalancer] = await Promise.all([viaNode.done, viaBalancer.done]);

    for (const parts of [fromNode, fromBalancer]) {
      expect(parts[0]).toMatchObject({ event: 'metadata', data: { run_id: run.run_id } });
      // The run's own modes only (the join names none): no error, no `custom` resumed part.
      expect([...new Set(parts.map((p) => p.event))].sort()).toEqual([
        'messages',
        'metadata',
        'values',
      ]);
      const last = parts.at(-1);
      expect(last?.event).toBe('values');
      const messages = (last?.data as { messages: Message[] }).messages;
      expect(messages.map((m) => [m.type, m.content])).toEqual([
        ['human', 'tell me a story'],
        ['ai', STORY],
      ]);
      // The answer's tokens, from the attempt that finished it, are the whole answer once.
      expect(tokensOf(parts, messages[1]?.id ?? '')).toBe(STORY);
    }
    // The thread's stream went on past the takeover to the run's end, the whole answer once.
    await threadDone;
    closing.abort();
    expect(threadParts[0]).toMatchObject({ event: 'metadata', data: { run_id: run.run_id } });
    expect(threadParts.at(-1)).toMatchObject({
      event: 'run_done',
      data: { run_id: run.run_id, status: 'success' },
    });
    const states = threadParts.filter((p) => p.event === 'values');
    const answer = (states.at(-1)?.data as { messages: Message[] }).messages[1];
    expect(answer?.content).toBe(STORY);
    expect(tokensOf(threadParts, answer?.id ?? '')).toBe(STORY);
    // Resumed once, on another node, from the checkpoint before the answer.
    expect(readFileSync(path.join(gate, 'log'), 'utf8')).toBe('words\nwords\n');
    const runs = await balancer.runs.list(thread.thread_id);
    expect(runs.map((r) => [r.run_id, r.status])).toEqual([[run.run_id, 'success']]);
    const state = await balancer.threads.getState<{ messages: Message[] }>(thread.thread_id);
    expect(state.values.messages.map((m) => m.content)).toEqual(['tell me a story', STORY]);
  });
});
