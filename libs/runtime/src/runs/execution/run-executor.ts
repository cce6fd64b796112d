import type { Usage } from '@cognition/contracts';
import { COGNITION_KWARGS_KEY, isRunFenced, RUN_FENCE_KEY } from '@cognition/storage';
import type { CognitionMessageKwargs } from '@cognition/storage';
import { isAIMessage } from '@langchain/core/messages';
import type { BaseMessage } from '@langchain/core/messages';
import { INTERRUPT, isInterrupted } from '@langchain/langgraph';
import type { Span } from '@opentelemetry/api';
import { RuntimeError } from '../../errors';
import { createAgentGraph } from '../../graph/agent-graph';
import type { DecisionRequest } from '../../graph/agent-graph';
import { HeadReadReuse } from './head-read-reuse';
import { inRunSpan, setRunOutcome } from '../../telemetry/spans';
import type { AgentTurn } from './agent-turn';
import type { RunQueue } from '../coordination/ports';
import type { ActiveRuns } from '../coordination/active-runs';
import type { Outcome } from '../../run-outcome';
import type { ActiveRun, RunContext } from '../run-context';
import type { Logger } from '../../logger';
import { cancelledOutcome, stopFenced, toRuntimeError } from '../run-context';
import type { RunEnding, RunFinisher } from '../run-finisher';
import type { GraphRunInput } from './graph-run';
import { runGraph } from './graph-run';
import type { AgentRunInput } from './turn-input';
import { turnInput } from './turn-input';
import type { TurnHold } from './turn-setup';
import { setUpTurn } from './turn-setup';

/** What one run executes: an agent's turn answering a user message, or a graph run. */
export type RunInput = AgentRunInput | GraphRunInput;

/**
 * Executes one run: waits for a slot of the run queue (the run stays `queued`), runs the agent
 * graph on the session's checkpoint thread, decides the outcome and hands it to the finisher.
 * Resolves once the run finished; never rejects for a failure of the run itself.
 */
export class RunExecutor {
  constructor(
    private readonly ctx: RunContext,
    private readonly queue: RunQueue,
    private readonly finisher: Pick<RunFinisher, 'finish'>,
  ) {}

  async execute(active: ActiveRun, input: RunInput): Promise<void> {
    const run = {
      runId: active.runId,
      sessionId: input.session.id,
      resumed: input.resumed === true,
    };
    this.ctx.observer.runStarted(run);
    await inRunSpan(run, (span) => this.executeInSpan(active, input, span));
  }

  private async executeInSpan(active: ActiveRun, input: RunInput, span: Span): Promise<void> {
    const release = await this.queue.acquire(active.controller.signal);
    try {
      if (release === null) {
        // Cancelled while queued: it ends without having started.
        const outcome: Outcome = cancelledOutcome(active.cancelReason);
        await this.finish(active, input, span, {
          outcome,
          meter: null,
          lastAssistantId: null,
          callbackUrl: input.callbackUrl,
        });
        return;
      }
      if ('graph' in input) {
        const outcome = await runGraph(this.ctx, active, input);
        await this.finish(active, input, span, {
          outcome,
          meter: null,
          lastAssistantId: null,
          callbackUrl: input.callbackUrl,
        });
      } else {
        await this.executeTurn(active, input, span);
      }
    } finally {
      release?.();
    }
  }

  private finish(active: ActiveRun, input: RunInput, span: Span, ending: RunEnding): Promise<void> {
    const what = 'graph' in input ? `graph:${input.graph.graph_id}` : input.session.agentName;
    setRunOutcome(span, ending.outcome, what);
    return this.finisher.finish(active, input.session, ending);
  }

  private async executeTurn(active: ActiveRun, input: AgentRunInput, span: Span): Promise<void> {
    const { ctx } = this;
    const { session, userMessage } = input;
    const { emitter, controller } = active;
    const signal = controller.signal;
    const hold: TurnHold = { meter: null, progress: null, mcp: null };
    let turn: AgentTurn | null = null;
    let lastAssistantId: string | null = null;
    let outcome: Outcome;
    let priorUsage: Usage | null = null;
    try {
      const stored = input.fresh ? null : await ctx.storage.runs.get(active.runId);
      // Spent before a pause for a decision (or before a crash that came after one).
      priorUsage = stored?.usage ?? null;
      const firstStart = !stored?.startedAt;
      if (!input.resumed || input.decisions) emitter.emit({ type: 'status', status: 'thinking' });
      const setUp = await setUpTurn(ctx, active, input, priorUsage, hold);
      turn = setUp.turn;
      // The graph's first read of the head is the one `getState` makes just below.
      const graph = createAgentGraph(turn, new HeadReadReuse(ctx.storage.checkpointer));
      const config = {
        configurable: {
          thread_id: session.threadId,
          // Checkpoints and pending writes are stored under the run's claim (run fencing).
          ...(active.fence ? { [RUN_FENCE_KEY]: active.fence } : {}),
        },
        recursionLimit: ctx.maxSteps,
      };
      const state = await graph.getState(config);
      const history = (state.values as { messages?: BaseMessage[] }).messages ?? [];
      // Running from here; the checkpoint the thread stands on before the run first starts is
      // what a rollback returns to (a resumed run keeps the one recorded then). Taken from the
      // state just read: reading the head once more would decode the whole thread again.
      const head = (state.config.configurable as { checkpoint_id?: string } | undefined)
        ?.checkpoint_id;
      await ctx.storage.runs.update(
        active.runId,
        {
          status: 'running',
          startedAt: stored?.startedAt ?? new Date(),
          ...(firstStart ? { baseCheckpointId: head ?? null } : {}),
        },
        active.fence ?? undefined,
      );
      const final: { messages?: BaseMessage[] } = await graph.invoke(
        await turnInput(ctx, active.runId, input, { history, next: state.next }, setUp),
        config,
      );
      lastAssistantId =
        turn.lastAssistantId ?? lastAssistantOf(final.messages ?? [], userMessage.id);
      const request = isInterrupted<DecisionRequest>(final)
        ? final[INTERRUPT][0]?.value
        : undefined;
      outcome = signal.aborted
        ? cancelledOutcome(active.cancelReason)
        : request
          ? { kind: 'paused', action: { tool_calls: request.tool_calls } }
          : { kind: 'completed' };
    } catch (error) {
      // A write refused under the run's claim: another claim took the run over. Stop at once,
      // recording and emitting nothing more (the new owner finishes the run).
      if (isRunFenced(error)) stopFenced(active, ctx.log);
      outcome =
        active.cancelReason === 'lost'
          ? { kind: 'lost' }
          : signal.aborted && !(error instanceof RuntimeError)
            ? cancelledOutcome(active.cancelReason)
            : { kind: 'failed', error: toRuntimeError(error, ctx.maxSteps) };
    }
    hold.mcp?.release();
    await hold.progress?.settled();
    await this.finish(active, input, span, {
      outcome,
      meter: hold.meter,
      lastAssistantId: lastAssistantId ?? turn?.lastAssistantId ?? null,
      callbackUrl: input.callbackUrl,
      priorUsage,
    });
  }
}

/** The id of the last assistant message answering `userMessageId` in a thread. */
function lastAssistantOf(messages: readonly BaseMessage[], userMessageId: string): string | null {
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    const message = messages[i];
    if (!message || !isAIMessage(message)) continue;
    const meta = message.additional_kwargs[COGNITION_KWARGS_KEY] as
      CognitionMessageKwargs | undefined;
    if (meta?.parentId === userMessageId) return message.id ?? null;
  }
  return null;
}

/**
 * Executes `active` in the background: `active.done` settles once the run finished. The
 * executor never rejects for a failure of the run itself; should it crash, that is logged
 * (`what`: which kind of start) and the run forgotten, so its session is not stuck.
 */
export function executeInBackground(
  executor: Pick<RunExecutor, 'execute'>,
  active: ActiveRun,
  input: RunInput,
  o: { runs: Pick<ActiveRuns, 'remove'>; logger: Logger; what: string },
): void {
  active.done = executor.execute(active, input).catch((error: unknown) => {
    o.logger.error({ err: error, runId: active.runId }, `${o.what} execution crashed`);
    o.runs.remove(active.runId);
  });
}
