import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { FakeOpenAIServer } from '@cognition/runtime/testing/http';
import { sampleLatencies } from '../harness/measure';
import type { Operation } from '../harness/measure';
import { compare, formatMs, median } from '../harness/stats';
import type { Benchmark, BenchContext, BenchmarkOutput, ResultRow } from '../harness/types';
import type { AgentServer, AgentServerProvider, TurnShape } from '../support/agent-server';
import {
  BENCH_MODEL,
  startAgentServer,
  streamTurn,
  toolThenAnswer,
  TURN_ANSWER_TOKENS,
  TURN_PROMPT,
  turnProblem,
} from '../support/agent-server';
import { createInProcessAgent } from '../support/in-process-agent';

/**
 * The context window the servers are told the fake model has: far above what 300 turns of this
 * benchmark send (about 150,000 tokens), so the default agent's compaction (summarize beyond
 * 75 % of the window) never kicks in and every call sends the whole thread.
 */
const BENCH_CONTEXT_WINDOW = 100_000_000;

/** @throws Error when a turn was not one successful tool call and a 50-token answer. */
function checkTurn(who: string, turn: number, shape: TurnShape): void {
  const problem = turnProblem(shape, TURN_ANSWER_TOKENS);
  if (problem !== null) throw new Error(`${who}, turn ${turn}: ${problem}`);
}

interface Contender {
  key: string;
  label: string;
  /** Whether the goal applies (SQLite and PostgreSQL, not the floor). */
  goal: boolean;
}

const SERVERS: readonly (Contender & { provider: AgentServerProvider })[] = [
  { key: 'sqlite', provider: 'sqlite', label: 'SQLite', goal: true },
  { key: 'postgresql', provider: 'postgresql', label: 'PostgreSQL', goal: true },
];

const FLOOR: Contender = { key: 'floor', label: 'graph in-process, MemorySaver', goal: false };

/**
 * The turns (1-based) whose latencies make the figure at `mark`: `width` turns centred on it
 * (`mark − width/2 + 1 … mark + width/2`), shifted back so the window ends by the last turn.
 */
function windowOf(mark: number, width: number, lastTurn: number): [number, number] {
  const first = Math.max(1, Math.min(mark - Math.floor(width / 2) + 1, lastTurn - width + 1));
  return [first, first + width - 1];
}

function p50Around(latencies: readonly number[], mark: number, width: number): number {
  const [first, last] = windowOf(mark, width, latencies.length);
  return median(latencies.slice(first - 1, last));
}

async function run(ctx: BenchContext): Promise<BenchmarkOutput> {
  const marks = ctx.size([2, 4, 6], [10, 100, 300]);
  const width = ctx.size(2, 10);
  const turns = marks[marks.length - 1] ?? 1;
  const providersFile = path.join(ctx.tmpDir, 'providers.json');
  await writeFile(
    providersFile,
    JSON.stringify({ contextWindows: { [BENCH_MODEL]: BENCH_CONTEXT_WINDOW } }),
  );
  const fake = await FakeOpenAIServer.start({ fallback: toolThenAnswer(TURN_ANSWER_TOKENS) });
  const started: { contender: Contender; agent: AgentServer; sessionId: string }[] = [];
  try {
    for (const contender of SERVERS) {
      const agent = await startAgentServer(ctx, {
        provider: contender.provider,
        fake,
        env: { COGNITION_PROVIDERS_FILE: providersFile },
      });
      const { id } = await agent.client.sessions.create.mutate({ title: 'long thread' });
      started.push({ contender, agent, sessionId: id });
    }
    const floorWorkspace = path.join(ctx.tmpDir, 'floor');
    await mkdir(floorWorkspace, { recursive: true });
    const floor = await createInProcessAgent(fake, floorWorkspace);
    const floorThread = randomUUID();

    const operations: Record<string, Operation> = {
      [FLOOR.key]: async (i) => {
        checkTurn(FLOOR.label, i + 1, await floor(floorThread, prompt(i)));
        if ((i + 1) % 50 === 0) ctx.log(`  long thread: turn ${i + 1} of ${turns}`);
      },
    };
    for (const { contender, agent, sessionId } of started) {
      operations[contender.key] = async (i) =>
        checkTurn(contender.label, i + 1, await streamTurn(agent.client, sessionId, prompt(i)));
    }
    ctx.log(`long thread: ${turns} turns of one session per contender`);
    const latencies = await sampleLatencies(operations, { warmup: 0, samples: turns });

    const contenders = [...started.map(({ contender }) => contender), FLOOR];
    const rows = contenders.map((contender): ResultRow => {
      const own = latencies[contender.key] ?? [];
      const at = marks.map((mark) => p50Around(own, mark, width));
      const metrics: Record<string, number> = {};
      marks.forEach((mark, i) => {
        metrics[`turn${mark}P50Ms`] = at[i] ?? 0;
        metrics[`floorTurn${mark}P50Ms`] = p50Around(latencies[FLOOR.key] ?? [], mark, width);
      });
      const first = at[0] ?? 0;
      const last = at[at.length - 1] ?? 0;
      return {
        case: `${contender.label}, turn ${turns} vs turn ${marks[0]}`,
        figures: marks.map((mark, i) => `turn ${mark}: ${formatMs(at[i] ?? 0)}`).join(' · '),
        metrics,
        comparison: compare(
          last,
          first,
          `turn ${marks[0]} of the same thread`,
          `p50 ${formatMs(first)}`,
          contender.goal ? { kind: 'at-most', ratio: 1.3 } : undefined,
        ),
      };
    });
    return {
      rows,
      notes: [
        `One session per contender, ${turns} turns each, all contenders taking turns call by call (rotating order) so machine load hits them alike. A turn is benchmark 1's: the user message → the model asks for \`ls\` → the tool runs in the local sandbox → a ${TURN_ANSWER_TOKENS}-word answer → \`done\` (four messages added to the thread per turn).`,
        `Every model call is sent the whole thread: the servers run the default agent with the fake model's context window set to ${BENCH_CONTEXT_WINDOW.toLocaleString('en-US')} tokens (providers file \`contextWindows\`), so its compaction (summarize beyond 75 % of the window) never starts; the floor has no compactor.`,
        `The figure at turn N is the median latency of the ${width} turns around it (turns ${marks.map((mark) => windowOf(mark, width, turns).join('–')).join(', ')}), the last window shifted back to end at turn ${turns}. Ratio = turn ${turns} / turn ${marks[0]} of the same contender; goal ≤ 1.3× on SQLite and PostgreSQL (flat).`,
        'Ours: `streamMessage` of the typed client against the built server, send → `done`; the floor: the same agent graph in the bench process on a MemorySaver thread (benchmark 1’s floor, one thread for all turns). No in-memory-storage row (no goal; its 300 turns cost the full run 40 s of its 15-minute budget): the floor is the storage-free reference.',
      ],
    };
  } finally {
    for (const { agent } of started) await agent.cleanup();
    await fake.close();
  }
}

/** The user message of 0-based turn `i` (numbered so no two messages of the thread are equal). */
function prompt(i: number): string {
  return `${TURN_PROMPT} (turn ${i + 1})`;
}

export const longThreadBenchmark: Benchmark = {
  id: 12,
  title: 'Long thread: turn latency at turn 10, 100 and 300 of one session',
  measuredAs:
    'benchmark 1’s turn (one tool call, 50 tokens) repeated on one session, whole history sent to the model; p50 of 10 turns around turns 10, 100 and 300, SQLite, PostgreSQL and the in-process floor',
  comparedWith: 'turn 10 of the same thread (flatness)',
  goal: 'turn 300 p50 ≤ 1.3× turn 10 p50 on SQLite and PostgreSQL',
  run,
};
