import type { CircuitBreaker } from '@cognition/circuit-breaker';
import type { ClientTool, HitlDecision, PendingToolCall, Todo } from '@cognition/contracts';
import { COGNITION_KWARGS_KEY } from '@cognition/storage';
import type { CognitionMessageKwargs } from '@cognition/storage';
import type { BaseLanguageModelInput } from '@langchain/core/language_models/base';
import type { Span } from '@opentelemetry/api';
import type { AIMessageChunk, BaseMessage, MessageContent } from '@langchain/core/messages';
import { AIMessage, SystemMessage, ToolMessage } from '@langchain/core/messages';
import type { Runnable } from '@langchain/core/runnables';
import type { ToolCall as LcToolCall } from '@langchain/core/messages/tool';
import type { ContextCompactor, Prepared } from '../../context/compactor';
import type { ContextState } from '../../graph/agent-state';
import { RuntimeError, errorMessage } from '../../errors';
import type { AgentGraphSteps } from '../../graph/agent-graph';
import { newMessageId } from '../../ids';
import { isContextLengthError } from '../../providers/chat-model';
import type { ResolvedModel } from '../../providers/registry';
import type { UsageMeter } from '../../providers/usage';
import { estimateMessagesTokens, estimateTokens } from '../../providers/usage';
import { endModelCallSpan, inToolSpan, startModelCallSpan } from '../../telemetry/spans';
import type { RuntimeTool, ToolResult } from '../../tools/types';
import { applyDecisions, callsToDecide } from './decisions';
import { contextOverflow, toProviderError } from './model-errors';
import type { ToolCallOptions } from './tool-call';
import { runToolCall } from './tool-call';

export type BoundChatModel = Runnable<BaseLanguageModelInput, AIMessageChunk>;

export interface AgentTurnOptions extends ToolCallOptions {
  tools: readonly RuntimeTool[];
  /**
   * Tools the client runs (bound to `model` besides `tools`): a call of one pauses the run for
   * the client's result (`respond`) when `askForDecisions` is on.
   */
  clientTools?: readonly ClientTool[];
  model: BoundChatModel;
  resolved: ResolvedModel;
  breaker: CircuitBreaker;
  /**
   * Whether calls of the agent's `interrupt_on` tools pause the run for a person's decision:
   * the session's own turn only (a subagent turn has no checkpoint to pause on; its calls run).
   */
  askForDecisions?: boolean;
  /** Stamped on every message the turn produces (projection: parent and metadata). */
  parentId: string | null;
  runId: string;
  usage: UsageMeter;
  /** The system prompt to send (the agent's plus its memory/policy artifacts); default the agent's. */
  systemPrompt?: string;
  /**
   * Waits for the run's events to be in the log and returns the last id (checkpointed as the
   * step's `eventMark`).
   */
  settleEvents?: () => Promise<string | null>;
  /**
   * Whether the run, once aborted, still belongs to this process. False when another node owns
   * it now (its lease was lost): then the cut-off step fails instead of being checkpointed —
   * no partial answer, no "aborted" tool results — and the new owner redoes it from the last
   * checkpoint (issue 31: a partial answer checkpointed there made the resumed run end with it).
   */
  ownsRun?: () => boolean;
  /**
   * Checked before each model call and tool round: false when this process may no longer hold
   * the run's claim (it has then stopped the run; see `ActiveRun.claimHeld`).
   */
  claimHeld?: () => boolean;
  /**
   * Fits each model call into the agent's context budget (see `createCompactor`); absent: the
   * model sees the whole thread (strategy `none`, subagents).
   */
  compactor?: ContextCompactor | null;
}

export function textOf(content: MessageContent): string {
  if (typeof content === 'string') return content;
  return content
    .map((part: unknown) => {
      if (typeof part === 'string') return part;
      const block = part as { type?: unknown; text?: unknown };
      return block.type === 'text' && typeof block.text === 'string' ? block.text : '';
    })
    .join('');
}

/**
 * The model and tool steps of one agent run (the graph's `AgentGraphSteps`): streams tokens,
 * meters usage, turns tool failures into tool results, and honours the abort signal so that a
 * partial answer is kept rather than lost.
 */
export class AgentTurn implements AgentGraphSteps {
  private readonly toolsByName: ReadonlyMap<string, RuntimeTool>;
  /** Tool calls whose arguments were not valid JSON: id -> parse error. */
  private readonly invalidCalls = new Map<string, string>();
  /** The last assistant message produced, for the `done` event. */
  lastAssistantId: string | null = null;

  constructor(private readonly options: AgentTurnOptions) {
    this.toolsByName = new Map(options.tools.map((tool) => [tool.name, tool]));
  }

  stopped(): boolean {
    return this.options.signal.aborted;
  }

  /** Aborted because another node owns the run now: this step must leave no trace. */
  private disowned(): boolean {
    return this.options.signal.aborted && this.options.ownsRun?.() === false;
  }

  /**
   * A step of a disowned run fails instead of returning: a step that returned (even nothing)
   * is checkpointed as done, and the owner resuming from that checkpoint would skip it.
   */
  checkOwned(): void {
    if (this.disowned()) throw new Error('the run is executed by another node now');
  }

  async callModel(
    history: BaseMessage[],
    context: ContextState | null,
  ): Promise<{ message: AIMessage | null; context?: ContextState | null }> {
    const result = await this.modelStep(history, context);
    this.checkOwned();
    return result;
  }

  async eventMark(): Promise<string | null> {
    return (await this.options.settleEvents?.()) ?? null;
  }

  private kwargs(extra: Record<string, string> = {}): Record<string, unknown> {
    const value: CognitionMessageKwargs = {
      parentId: this.options.parentId,
      metadata: { runId: this.options.runId, ...extra },
    };
    return { [COGNITION_KWARGS_KEY]: value };
  }

  private async modelStep(
    history: BaseMessage[],
    context: ContextState | null,
  ): Promise<{ message: AIMessage | null; context?: ContextState | null }> {
    const { signal, agent, compactor, resolved } = this.options;
    if (signal.aborted || this.options.claimHeld?.() === false) return { message: null };
    let prepared = compactor ? await this.compact(compactor, history, context, false) : null;
    if (signal.aborted) return { message: null };
    let input = prepared?.input ?? [
      new SystemMessage(this.options.systemPrompt ?? agent.systemPrompt),
      ...history,
    ];
    let attempt = await this.stream(input);
    if (attempt.error !== undefined && !signal.aborted && isContextLengthError(attempt.error)) {
      // The count was off (or the window smaller than the tables say): one forced compaction
      // and one retry, never a loop.
      if (!compactor || !prepared)
        throw contextOverflow(resolved, attempt.error, 'context.strategy is none');
      prepared = await this.compact(compactor, history, prepared.state, true);
      if (signal.aborted) return { message: null };
      input = prepared.input;
      attempt = await this.stream(input);
      if (attempt.error !== undefined && !signal.aborted && isContextLengthError(attempt.error)) {
        throw contextOverflow(resolved, attempt.error, 'even after compacting it');
      }
    }
    if (attempt.error !== undefined && !signal.aborted) {
      throw toProviderError(attempt.error, resolved);
    }
    const acc = attempt.acc;
    let nextContext = prepared?.changed ? prepared.state : undefined;
    const reportedInput = acc?.usage_metadata?.input_tokens;
    if (compactor && prepared && reportedInput !== undefined) {
      nextContext = compactor.calibrate(prepared.state, prepared.counted, reportedInput);
    }
    const message = this.toMessage(input, acc, attempt.span);
    return nextContext === undefined ? { message } : { message, context: nextContext };
  }

  /**
   * Streams one call; a failure is returned with what was received before it. The call's span
   * ends here on a failure (which the caller throws or retries), else — an abort included, whose
   * partial answer is kept — once its usage was counted (`toMessage`).
   */
  private async stream(
    input: BaseMessage[],
  ): Promise<{ acc: AIMessageChunk | undefined; span: Span; error?: unknown }> {
    const { signal, model, breaker, emit, streamToClient, resolved } = this.options;
    const span = startModelCallSpan({ provider: resolved.provider.id, model: resolved.model });
    let acc: AIMessageChunk | undefined;
    try {
      await breaker.execute(
        async (callSignal) => {
          const stream = await model.stream(input, { signal: callSignal ?? signal });
          for await (const chunk of stream) {
            acc = acc ? acc.concat(chunk) : chunk;
            const text = textOf(chunk.content);
            if (text !== '' && streamToClient) emit({ type: 'token', content: text });
          }
        },
        { signal },
      );
      return { acc, span };
    } catch (error) {
      if (!signal.aborted) endModelCallSpan(span, { error, aborted: false });
      return { acc, span, error };
    }
  }

  private async compact(
    compactor: ContextCompactor,
    history: BaseMessage[],
    context: ContextState | null,
    force: boolean,
  ): Promise<Prepared> {
    const { signal, emit, streamToClient } = this.options;
    let prepared: Prepared;
    try {
      prepared = await compactor.prepare(history, context, { signal, force });
    } catch (error) {
      if (error instanceof RuntimeError || signal.aborted) throw error;
      throw new RuntimeError(
        'PROVIDER_ERROR',
        `Compacting the conversation failed: the summary call failed: ${errorMessage(error)}`,
        { cause: error },
      );
    }
    if (prepared.event && streamToClient) emit(prepared.event);
    return prepared;
  }

  private toMessage(
    input: BaseMessage[],
    acc: AIMessageChunk | undefined,
    span: Span,
  ): AIMessage | null {
    const { signal, emit, streamToClient } = this.options;
    const aborted = signal.aborted;
    const text = acc ? textOf(acc.content) : '';
    const toolCalls = aborted || !acc ? [] : this.collectToolCalls(acc);
    const usage = this.options.usage.add(acc?.usage_metadata, () => ({
      input: estimateMessagesTokens(input),
      output:
        estimateTokens(text) + (toolCalls.length ? estimateTokens(JSON.stringify(toolCalls)) : 0),
    }));
    endModelCallSpan(span, { usage, aborted });
    if (aborted && text === '') return null;
    const reportedModel = (acc?.response_metadata as { model_name?: unknown } | undefined)
      ?.model_name;
    const message = new AIMessage({
      id: newMessageId(),
      content: text,
      tool_calls: toolCalls,
      usage_metadata: acc?.usage_metadata,
      response_metadata: {
        model_name:
          typeof reportedModel === 'string' && reportedModel !== ''
            ? reportedModel
            : this.options.resolved.model,
        model_provider: this.options.resolved.provider.id,
      },
      additional_kwargs: this.kwargs(aborted ? { aborted: 'true' } : {}),
    });
    this.lastAssistantId = message.id ?? null;
    if (streamToClient) {
      for (const call of toolCalls) {
        emit({ type: 'tool_call', id: call.id ?? '', name: call.name, args: call.args });
      }
    }
    return message;
  }

  private collectToolCalls(acc: AIMessageChunk): LcToolCall[] {
    const calls: LcToolCall[] = (acc.tool_calls ?? []).map((call) => ({
      ...call,
      id: call.id ?? `call_${newMessageId()}`,
      type: 'tool_call',
    }));
    for (const invalid of acc.invalid_tool_calls ?? []) {
      const id = invalid.id ?? `call_${newMessageId()}`;
      this.invalidCalls.set(
        id,
        invalid.error ?? `arguments are not valid JSON: ${invalid.args ?? ''}`,
      );
      calls.push({ id, name: invalid.name ?? 'unknown', args: {}, type: 'tool_call' });
    }
    return calls;
  }

  callsToDecide(message: AIMessage): PendingToolCall[] {
    if (this.options.askForDecisions !== true) return [];
    // A call with unparseable arguments is answered with the error, never put to a person.
    const clientTools = new Set((this.options.clientTools ?? []).map((tool) => tool.name));
    return callsToDecide(
      message,
      this.options.agent.interruptOn,
      (id) => this.invalidCalls.has(id),
      clientTools,
    );
  }

  async runTools(
    message: AIMessage,
    todos: readonly Todo[],
    decisions?: readonly HitlDecision[],
  ): Promise<{ messages: (ToolMessage | AIMessage)[]; todos?: Todo[] }> {
    // Stopped here when the claim may have run out: the round fails, nothing of it runs.
    if (this.options.claimHeld?.() === false) this.checkOwned();
    const { calls, edited } = applyDecisions(message, decisions);
    const messages: (ToolMessage | AIMessage)[] = edited ? [edited] : [];
    let plan: readonly Todo[] = todos;
    let planChanged = false;
    for (const call of calls) {
      const { id, name } = call;
      if (this.options.streamToClient && call.run && call.edited) {
        // The edited call, as it will run (same id as the call the model made).
        this.options.emit({ type: 'tool_call', id, name, args: call.args });
      }
      const result: ToolResult = call.run
        ? await inToolSpan({ id, name }, () =>
            runToolCall(
              { id, name, args: call.args, todos: plan, invalidArgs: this.invalidCalls.get(id) },
              this.toolsByName,
              this.options,
            ),
          )
        : { output: call.output, exitCode: call.exitCode };
      if (result.todos) {
        plan = result.todos;
        planChanged = true;
      }
      if (this.options.streamToClient) {
        this.options.emit({
          type: 'tool_result',
          tool_call_id: id,
          output: result.output,
          exit_code: result.exitCode,
        });
      }
      messages.push(
        new ToolMessage({
          id: newMessageId(),
          tool_call_id: id,
          name,
          content: result.output,
          status: result.exitCode === 0 ? 'success' : 'error',
          additional_kwargs: this.kwargs({ exitCode: String(result.exitCode) }),
        }),
      );
    }
    this.checkOwned();
    return planChanged ? { messages, todos: [...plan] } : { messages };
  }
}
