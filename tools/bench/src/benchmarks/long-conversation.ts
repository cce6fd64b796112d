import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { SUMMARIZER_PROMPT } from '@cognition/runtime';
import { FakeOpenAIServer } from '@cognition/runtime/testing/http';
import type { RecordedRequest } from '@cognition/runtime/testing/http';
import { compare, formatMs, median } from '../harness/stats';
import type { Benchmark, BenchContext, ResultRow } from '../harness/types';
import type { AgentServer } from '../support/agent-server';
import { answerText, startAgentServer, streamTurn } from '../support/agent-server';

const ANSWER_WORDS = 50;
/** Latency at turn N is the median of turns N-WINDOW+1 … N (one turn is too noisy). */
const WINDOW = 5;

/**
 * The agent files: `compacting` summarizes beyond `budget` tokens (reached after a few dozen
 * turns at full size, a few turns at smoke size), `whole` sends the whole thread every call.
 */
function agentFiles(budget: number, keepLast: number): Record<string, string> {
  return {
    'compacting.md': `---
description: Long conversations, summarized beyond ${budget} tokens
tools: []
context:
  max_tokens: ${budget}
  strategy: summarize
  keep_last_messages: ${keepLast}
---
You are a patient assistant.`,
    'whole.md': `---
description: Long conversations, whole thread every call (no compaction)
tools: []
context:
  strategy: none
---
You are a patient assistant.`,
  };
}

/** Tokens of a request as the fake provider reports them (its JSON, 4 characters per token). */
function requestTokens(request: RecordedRequest): number {
  return Math.ceil(JSON.stringify(request.body.messages ?? []).length / 4);
}

function isSummaryRequest(request: RecordedRequest): boolean {
  return request.body.messages?.[0]?.content === SUMMARIZER_PROMPT;
}

interface Contender {
  label: string;
  agent: string;
  sessionId: string;
  latencies: number[];
  /** Tokens of the turn's model call (the agent's), per turn. */
  sent: number[];
  /** Tokens of the turn's summary calls, per turn (0 when it did not compact). */
  summarySent: number[];
}

/**
 * One session per contender on the built server (SQLite), turns alternating between them so
 * machine load hits both alike; the fake provider answers 50 words and writes one-line
 * summaries. Tokens sent are what the provider received (its own count), per turn.
 */
async function runTurns(
  ctx: BenchContext,
  agentServer: AgentServer,
  fake: FakeOpenAIServer,
  contenders: Contender[],
  turns: number,
): Promise<void> {
  const filler = 'the quick brown fox jumps over the lazy dog '.repeat(3).trim();
  for (let turn = 1; turn <= turns; turn += 1) {
    for (const contender of contenders) {
      const before = fake.requests.length;
      const started = performance.now();
      const shape = await streamTurn(
        agentServer.client,
        contender.sessionId,
        `Turn ${turn}: ${filler}`,
      );
      contender.latencies.push(performance.now() - started);
      if (shape.terminal !== 'done') {
        throw new Error(`${contender.label}, turn ${turn}: ${shape.terminal}`);
      }
      const requests = fake.requests.slice(before);
      contender.sent.push(
        requests.filter((r) => !isSummaryRequest(r)).reduce((n, r) => n + requestTokens(r), 0),
      );
      contender.summarySent.push(
        requests.filter(isSummaryRequest).reduce((n, r) => n + requestTokens(r), 0),
      );
    }
    if (turn % 100 === 0) ctx.log(`  long conversation: turn ${turn} of ${turns}`);
  }
}

function at(values: readonly number[], turn: number): number {
  return values[turn - 1] ?? 0;
}

function latencyAt(contender: Contender, turn: number): number {
  return median(contender.latencies.slice(Math.max(0, turn - WINDOW), turn));
}

export const longConversationBenchmark: Benchmark = {
  id: 10,
  title: 'Long conversation (context compaction)',
  measuredAs:
    'one session of N turns through the built server (SQLite, fake model): turn latency (median of 5 turns) and tokens sent to the model at turns 10, 100 and 300, with compaction (summarize, 4,000-token budget, last 20 messages kept) and without (strategy none)',
  comparedWith: 'the same conversation without compaction',
  goal: 'report: tokens sent per turn flat once the budget is reached',
  async run(ctx) {
    // Turn 300, as benchmark 12's long thread: 1,000 turns took 28 minutes, past the full run's budget.
    const checkpoints = ctx.size([2, 6], [10, 100, 300]);
    const turns = checkpoints[checkpoints.length - 1] ?? 1;
    const workspace = path.join(ctx.tmpDir, 'workspace');
    await mkdir(path.join(workspace, '.cognition', 'agents'), { recursive: true });
    const budget = ctx.size(600, 4000);
    for (const [file, text] of Object.entries(agentFiles(budget, ctx.size(4, 20)))) {
      await writeFile(path.join(workspace, '.cognition', 'agents', file), text);
    }
    const answer = answerText(ANSWER_WORDS);
    const fake = await FakeOpenAIServer.start({
      fallback: (request) =>
        isSummaryRequest(request)
          ? { text: 'The user sent numbered turns of filler text; each was answered in 50 words.' }
          : { text: answer },
    });
    let agentServer: AgentServer | undefined;
    try {
      agentServer = await startAgentServer(ctx, {
        provider: 'sqlite',
        fake,
        env: { COGNITION_WORKSPACE_ROOT: workspace },
      });
      const contenders: Contender[] = [];
      for (const [label, agent] of [
        ['with compaction', 'compacting'],
        ['without compaction', 'whole'],
      ] as const) {
        const { id } = await agentServer.client.sessions.create.mutate({ agentName: agent });
        contenders.push({ label, agent, sessionId: id, latencies: [], sent: [], summarySent: [] });
      }
      await runTurns(ctx, agentServer, fake, contenders, turns);
      const [withCompaction, without] = contenders as [Contender, Contender];
      const rows: ResultRow[] = [];
      for (const turn of checkpoints) {
        for (const contender of contenders) {
          const latency = latencyAt(contender, turn);
          const sent = at(contender.sent, turn);
          rows.push({
            case: `${contender.label}, turn ${turn}`,
            figures: `${formatMs(latency)} per turn · ${sent.toLocaleString('en-US')} tokens sent`,
            metrics: { latencyMs: latency, tokensSent: sent },
            ...(contender === withCompaction
              ? {
                  comparison: compare(
                    sent,
                    at(without.sent, turn),
                    'without compaction (tokens sent)',
                    `${at(without.sent, turn).toLocaleString('en-US')} tokens sent`,
                  ),
                }
              : {}),
          });
        }
      }
      const compactions = withCompaction.summarySent.filter((n) => n > 0).length;
      const summaryTokens = withCompaction.summarySent.reduce((a, b) => a + b, 0);
      return {
        rows,
        notes: [
          `${turns} turns per session; each turn is a ${ANSWER_WORDS}-word answer to a short prompt (no tools); compaction budget ${budget} tokens.`,
          `With compaction: ${compactions} turns compacted first (one summary call each), ${summaryTokens.toLocaleString('en-US')} tokens sent to the summary calls in all; tokens sent at a turn exclude them.`,
          "Tokens sent are the fake provider's count of the request (its JSON, 4 characters per token), not the runtime's own estimate. Both sessions keep every message in their checkpoint, which the server still rewrites whole at each step, so latency grows with the thread either way.",
        ],
      };
    } finally {
      await agentServer?.cleanup();
      await fake.close();
    }
  },
};
