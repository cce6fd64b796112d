import { agentTurnBenchmark } from './benchmarks/agent-turn';
import { chaosBenchmark } from './benchmarks/chaos';
import { checkpointerBenchmark } from './benchmarks/checkpointer';
import { concurrentTurnsBenchmark } from './benchmarks/concurrent-turns';
import { durableRunsBenchmark } from './benchmarks/durable-runs';
import { fuzzBenchmark } from './benchmarks/fuzz';
import { idleSubscriptionsBenchmark } from './benchmarks/idle-subscriptions';
import { langGraphApiBenchmark } from './benchmarks/langgraph-api';
import { longConversationBenchmark } from './benchmarks/long-conversation';
import { longThreadBenchmark } from './benchmarks/long-thread';
import { messageHistoryBenchmark } from './benchmarks/message-history';
import { sandboxExecBenchmark } from './benchmarks/sandbox-exec';
import { schedulesBenchmark } from './benchmarks/schedules';
import { soakBenchmark } from './benchmarks/soak';
import { startupBenchmark } from './benchmarks/startup';
import { tokenStreamBenchmark } from './benchmarks/token-stream';
import { usageAnalyticsBenchmark } from './benchmarks/usage-analytics';
import type { Benchmark, PlannedBenchmark } from './harness/types';

/**
 * Every benchmark that runs, in id order (the order a full run executes them). A new one is
 * added here with the id of its row in the plan.
 */
export const BENCHMARKS: readonly Benchmark[] = [
  agentTurnBenchmark,
  tokenStreamBenchmark,
  concurrentTurnsBenchmark,
  idleSubscriptionsBenchmark,
  checkpointerBenchmark,
  messageHistoryBenchmark,
  sandboxExecBenchmark,
  startupBenchmark,
  durableRunsBenchmark,
  longConversationBenchmark,
  usageAnalyticsBenchmark,
  longThreadBenchmark,
  fuzzBenchmark,
  chaosBenchmark,
  soakBenchmark,
  schedulesBenchmark,
  langGraphApiBenchmark,
];

/**
 * Benchmarks of the plan (issue 6) that are not registered yet; docs/benchmarks.md lists them as
 * not measured. Empty: every benchmark of the plan runs.
 */
export const PLANNED: readonly PlannedBenchmark[] = [];
