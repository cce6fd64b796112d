import { checkpointerBenchmark } from './benchmarks/checkpointer';
import { messageHistoryBenchmark } from './benchmarks/message-history';
import { sandboxExecBenchmark } from './benchmarks/sandbox-exec';
import { startupBenchmark } from './benchmarks/startup';
import type { Benchmark, PlannedBenchmark } from './harness/types';

/** Every benchmark that runs. A new one is added here with the id of its row in the plan. */
export const BENCHMARKS: readonly Benchmark[] = [
  checkpointerBenchmark,
  messageHistoryBenchmark,
  sandboxExecBenchmark,
  startupBenchmark,
];

const AGENT_RUNS = 'agent runs through the server (runtime + api integration in progress)';

/**
 * The rest of the plan (issue 6). They need agent turns driven through the server, so they are
 * not registered until that path exists; docs/benchmarks.md lists them as not measured.
 */
export const PLANNED: readonly PlannedBenchmark[] = [
  {
    id: 1,
    title: 'A full turn: send → `done`, one tool call, 50 tokens',
    measuredAs: 'p50/p99 latency via the typed client, SQLite and PostgreSQL',
    comparedWith:
      'the same agent graph invoked in-process with an in-memory checkpointer (the floor)',
    goal: 'p50 ≤ 1.5× the floor',
    blockedOn: AGENT_RUNS,
  },
  {
    id: 2,
    title: 'Streaming a 20,000-token answer to one subscriber',
    measuredAs: 'tokens/s and time to first token, tRPC subscription and REST SSE',
    comparedWith: 'a bare Node HTTP server writing the same SSE events (the floor)',
    goal: '≥ 0.7× the floor',
    blockedOn: AGENT_RUNS,
  },
  {
    id: 3,
    title: '200 sessions running turns at once',
    measuredAs: 'turns/s, p99 turn latency, errors (must be 0), peak RSS',
    comparedWith: '—',
    goal: 'report; 0 errors',
    blockedOn: AGENT_RUNS,
  },
  {
    id: 4,
    title: '1,000 idle open subscriptions',
    measuredAs: 'RSS increase per subscription',
    comparedWith: '—',
    goal: '≤ 30 KB each',
    blockedOn: AGENT_RUNS,
  },
];
