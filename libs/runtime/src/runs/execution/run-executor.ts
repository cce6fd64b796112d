import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { ClientTool, HitlDecision, Message, Session, Usage } from '@cognition/contracts';
import type { ExecutionBackend } from '@cognition/sandbox';
import type { StorageBackend } from '@cognition/storage';
import { COGNITION_KWARGS_KEY, isRunFenced, RUN_FENCE_KEY } from '@cognition/storage';
import type { CognitionMessageKwargs } from '@cognition/storage';
import { HumanMessage, ToolMessage, isAIMessage } from '@langchain/core/messages';
import type { BaseMessage } from '@langchain/core/messages';
import { Command, INTERRUPT, isInterrupted } from '@langchain/langgraph';
import type { Span } from '@opentelemetry/api';
import { artifactContext } from '../../artifacts/artifact-context';
import { runArtifacts } from '../../artifacts/run-artifacts';
import { createCompactor } from '../../context/setup';
import { RuntimeError } from '../../errors';
import { createAgentGraph } from '../../graph/agent-graph';
import { danglingToolCalls } from '../../graph/agent-state';
import type { DecisionRequest } from '../../graph/agent-graph';
import { sessionSystemPrompt } from '../../sessions/system-prompt';
import { workspaceContext } from '../../workspace/workspace-context';
import { newMessageId } from '../../ids';
import { UsageMeter } from '../../providers/usage';
import { UsageProgress } from './usage-progress';
import { HeadReadReuse } from './head-read-reuse';
import { inRunSpan, setRunOutcome } from '../../telemetry/spans';
import { AgentTurn } from './agent-turn';
import { TOOL_EXIT } from './tool-call';
import { delegate } from './delegation';
import { missingAgent } from '../../registry/config-registry';
import type { RegistrySnapshot } from '../../registry/config-registry';
import { bindModel, breakerFor } from './model-binding';
import type { McpRunTools } from '../../mcp/mcp-manager';
import type { RuntimeTool } from '../../tools/types';
import type { RunQueue } from '../coordination/ports';
import type { ActiveRuns } from '../coordination/active-runs';
import type { Outcome } from '../../run-outcome';
import type { ActiveRun, RunContext } from '../run-context';
import type { Logger } from '../../logger';
import { cancelledOutcome, kwargs, stopFenced, toRuntimeError } from '../run-context';
import type { RunEmitter } from '../run-emitter';
import type { RunEnding, RunFinisher } from '../run-finisher';
import type { GraphRunInput } from './graph-run';
import { runGraph } from './graph-run';

/** What one run executes: an agent's turn answering a user message, or a graph run. */
export type RunInput = AgentRunInput | GraphRunInput;

/** An agent run: the user message it answers, in its session. */
export interface AgentRunInput {
  session: Session;
  userMessage: Message;
  callbackUrl: string | null;
  /**
   * Taken up again after the process executing it died: continues from the thread's last
   * checkpoint (the cut-off step is redone) instead of starting from the user message.
   */
  resumed?: boolean;
  /**
   * A person's decisions on the tool calls the run paused for (human in the loop): the graph
   * continues from its checkpoint with them.
   */
  decisions?: HitlDecision[];
  /**
   * Set by the send that just created the run: it has not started and spent nothing yet, and
   * `registry` is the snapshot the send checked the agent in. Saves reading the run and the
   * registry again at the start of every turn; without it (recovery, resume, a run promoted
   * from `pending`) both are read, and the client tools from the run's stored input.
   */
  fresh?: { registry: RegistrySnapshot; clientTools: ClientTool[] };
}

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
    let meter: UsageMeter | null = null;
    let turn: AgentTurn | null = null;
    let lastAssistantId: string | null = null;
    let mcp: McpRunTools | null = null;
    let outcome: Outcome;
    let priorUsage: Usage | null = null;
    let progress: UsageProgress | null = null;
    try {
      const stored = input.fresh ? null : await ctx.storage.runs.get(active.runId);
      // Spent before a pause for a decision (or before a crash that came after one).
      priorUsage = stored?.usage ?? null;
      const firstStart = !stored?.startedAt;
      if (!input.resumed || input.decisions) emitter.emit({ type: 'status', status: 'thinking' });
      // Read at every start (by the send, for a fresh run): an agent or provider changed
      // through the registry API applies to the next run on every node.
      const registry = input.fresh?.registry ?? (await ctx.registry.current());
      const agent = registry.agents.get(session.agentName);
      if (!agent) throw missingAgent(session.agentName);
      const resolved = registry.providers.resolve(session.config, agent);
      const runMeter = new UsageMeter(
        resolved.provider.id,
        resolved.model,
        registry.providers.price(resolved.model, resolved.provider),
      );
      progress = new UsageProgress(
        ctx.storage,
        ctx.log,
        active.runId,
        priorUsage,
        runMeter,
        ctx.logger,
        active.fence ?? undefined,
      );
      runMeter.onCall((call) => {
        ctx.observer.modelCall({ runId: active.runId, ...call });
        progress?.record();
      });
      meter = runMeter;
      const backend = sessionBackend(ctx, session, active.runId);
      const workspace = await workspaceContext({
        agent,
        tools: ctx.catalog.forAgent(agent, registry.agents.subagents()),
        skills: ctx.skills,
        backend,
        logger: ctx.logger,
      });
      mcp = await ctx.mcp.forRun(session.id, agent, { backend, signal });
      const tools = [...workspace.tools, ...mcp.tools];
      // A client tool named like one of the agent's is not offered: the agent's own runs.
      const clientTools = (
        input.fresh?.clientTools ??
        (await ctx.storage.runs.pendingInput(active.runId))?.clientTools ??
        []
      ).filter((client) => !tools.some((tool) => tool.name === client.name));
      let firstToken = true;
      const emit = (event: Parameters<RunEmitter['emit']>[0]) => {
        if (firstToken && event.type === 'token') {
          firstToken = false;
          ctx.observer.firstToken({ runId: active.runId });
        }
        void emitter.emit(event);
      };
      const interruptedCalls = new Set<string>();
      const artifacts = runArtifacts(ctx.storage.artifacts, session, active.runId);
      const systemPrompt =
        sessionSystemPrompt(session, agent.systemPrompt) +
        (await artifactContext(artifacts.store, artifacts.access)) +
        workspace.prompt +
        mcp.note;
      turn = new AgentTurn({
        agent,
        tools,
        clientTools,
        model: await bindModel(ctx, resolved, tools, clientTools),
        resolved,
        breaker: breakerFor(ctx, resolved),
        signal,
        emit,
        streamToClient: true,
        askForDecisions: true,
        parentId: userMessage.id,
        runId: active.runId,
        usage: runMeter,
        backend,
        settleEvents: async () => {
          await emitter.flush();
          return emitter.lastId;
        },
        ownsRun: () => active.cancelReason !== 'lost',
        claimHeld: active.claimHeld,
        interruptedCalls,
        artifacts,
        ...(workspace.skills ? { skills: workspace.skills } : {}),
        systemPrompt,
        delegate: (name, task) =>
          delegate(
            ctx,
            { session, signal, emit, meter: runMeter, runId: active.runId, backend, registry },
            name,
            task,
          ),
        compactor: await createCompactor(
          { agent, resolved, tools, meter: runMeter, systemPrompt },
          {
            providers: registry.providers,
            chatModelFactory: ctx.chatModelFactory,
            breakerFor: (model) => breakerFor(ctx, model),
          },
        ),
      });
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
      let final: { messages?: BaseMessage[] };
      if (input.decisions) {
        // Redoes the `tools` step the run paused in, where `interrupt()` returns the decisions.
        final = await graph.invoke(new Command({ resume: input.decisions }), config);
      } else if (input.resumed && history.some((m) => m.id === userMessage.id)) {
        // The checkpoint holds this run's turn: continue it. LangGraph applies the writes of
        // steps that completed after the last checkpoint and redoes the one that was cut off
        // (nothing, if only the finishing was).
        if (state.next.includes('tools')) {
          for (const id of unsafeToRepeat(history, tools)) interruptedCalls.add(id);
        }
        final = await graph.invoke(null, config);
      } else {
        const unanswered = await earlierInputs(ctx.storage, session.id, active.runId, history);
        final = await graph.invoke(
          { messages: [...repairs(history), ...unanswered.map(human), human(userMessage)] },
          config,
        );
      }
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
    mcp?.release();
    await progress?.settled();
    await this.finish(active, input, span, {
      outcome,
      meter,
      lastAssistantId: lastAssistantId ?? turn?.lastAssistantId ?? null,
      callbackUrl: input.callbackUrl,
      priorUsage,
    });
  }
}

/**
 * Opens the session's sandbox once per run, on first use: the memory files are read through it
 * when a turn starts (file operations only; a docker container waits for a command). Commands
 * are recorded under `runId`, so recovery can end what a crash left running (`reapOrphans`).
 */
export function sessionBackend(
  ctx: Pick<RunContext, 'sandbox' | 'workspaceRoot'>,
  session: Session,
  runId?: string,
): () => Promise<ExecutionBackend> {
  let pending: Promise<ExecutionBackend> | null = null;
  return () => {
    pending ??= (async () => {
      const root = session.workspacePath ?? join(ctx.workspaceRoot, session.id);
      await mkdir(root, { recursive: true });
      return ctx.sandbox.forSession(session.id, root, runId === undefined ? {} : { runId });
    })();
    return pending;
  };
}

/** Answers for tool calls a crash left without result, before the next model call. */
function repairs(history: readonly BaseMessage[]): ToolMessage[] {
  return danglingToolCalls(history).map(
    (call) =>
      new ToolMessage({
        id: newMessageId(),
        tool_call_id: call.id,
        name: call.name,
        content: 'Not run: the previous run was interrupted.',
        status: 'error',
        additional_kwargs: kwargs(null, { exitCode: String(TOOL_EXIT.aborted) }),
      }),
  );
}

function human(userMessage: Message): HumanMessage {
  return new HumanMessage({
    id: userMessage.id,
    content: userMessage.content,
    additional_kwargs: kwargs(userMessage.parentId, userMessage.metadata),
  });
}

/**
 * User messages of earlier runs that ended before their turn entered the thread (aborted or
 * interrupted while waiting for a slot, or superseded by a double-texted message): they join
 * the thread with this turn, in order, so the history reads as they were sent (else their rows
 * would stay pending and float after every later turn) and the model sees what the user said.
 * Walks back from this run only until a run whose message the thread holds (usually one step).
 */
async function earlierInputs(
  storage: StorageBackend,
  sessionId: string,
  runId: string,
  history: readonly BaseMessage[],
): Promise<Message[]> {
  const inThread = new Set(history.map((m) => m.id));
  // The session is the executor's: the run need not be read for it.
  const runs = await storage.runs.list(sessionId);
  const at = runs.findIndex((r) => r.id === runId);
  if (at < 0) return [];
  const found: Message[] = [];
  for (const earlier of runs.slice(at + 1)) {
    if (earlier.status === 'pending' || earlier.inputMessageId === null) continue;
    if (inThread.has(earlier.inputMessageId)) break;
    const message = await storage.messages.get(sessionId, earlier.inputMessageId, {});
    if (message) found.unshift(message);
  }
  return found;
}

/** Unanswered calls of the last assistant message whose tool must not run twice. */
function unsafeToRepeat(history: readonly BaseMessage[], tools: readonly RuntimeTool[]): string[] {
  const unsafe = new Set<string>(tools.filter((t) => !t.idempotent).map((t) => t.name));
  return danglingToolCalls(history)
    .filter((call) => unsafe.has(call.name))
    .map((call) => call.id);
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
