import type { CircuitBreaker } from '@cognition/circuit-breaker';
import { isCircuitOpenError } from '@cognition/circuit-breaker';
import type { AgentEvent, Todo } from '@cognition/contracts';
import type { ExecutionBackend } from '@cognition/sandbox';
import { COGNITION_KWARGS_KEY } from '@cognition/storage';
import type { CognitionMessageKwargs } from '@cognition/storage';
import type { BaseLanguageModelInput } from '@langchain/core/language_models/base';
import type { Span } from '@opentelemetry/api';
import type { AIMessageChunk, BaseMessage, MessageContent } from '@langchain/core/messages';
import { AIMessage, SystemMessage, ToolMessage } from '@langchain/core/messages';
import type { Runnable } from '@langchain/core/runnables';
import type { ToolCall as LcToolCall } from '@langchain/core/messages/tool';
import type { AgentDefinition } from '../agents/agent';
import type { ContextCompactor, Prepared } from '../context/compactor';
import type { ContextState } from '../context/window';
import { RuntimeError, errorMessage } from '../errors';
import type { AgentGraphSteps } from '../graph/agent-graph';
import { newMessageId } from '../ids';
import { isContextLengthError, providerErrorStatus } from '../providers/chat-model';
import type { ResolvedModel } from '../providers/registry';
import type { UsageMeter } from '../providers/usage';
import { estimateMessagesTokens, estimateTokens } from '../providers/usage';
import { endModelCallSpan, inToolSpan, startModelCallSpan } from '../telemetry/spans';
import type { ArtifactToolContext, RuntimeTool, ToolResult } from '../tools/types';
import { checkToolArgs } from '../tools/types';

export type BoundChatModel = Runnable<BaseLanguageModelInput, AIMessageChunk>;

export interface AgentTurnOptions {
  agent: AgentDefinition;
  tools: readonly RuntimeTool[];
  model: BoundChatModel;
  resolved: ResolvedModel;
  breaker: CircuitBreaker;
  signal: AbortSignal;
  emit: (event: AgentEvent) => void;
  /** false for subagents: their tokens and tool traffic stay out of the session's stream. */
  streamToClient: boolean;
  /** Stamped on every message the turn produces (projection: parent and metadata). */
  parentId: string | null;
  runId: string;
  usage: UsageMeter;
  backend: () => Promise<ExecutionBackend>;
  delegate: (agentName: string, task: string) => Promise<ToolResult>;
  /** The run's view of the artifact store, for the artifact tools. */
  artifacts?: ArtifactToolContext;
  /** The system prompt to send (the agent's plus its memory/policy artifacts); default the agent's. */
  systemPrompt?: string;
  /**
   * Waits for the run's events to be in the log and returns the last id (checkpointed as the
   * step's `eventMark`).
   */
  settleEvents?: () => Promise<string | null>;
  /**
   * Calls of non-idempotent tools that were running when the previous process died: answered
   * "interrupted" instead of being run again (see `RuntimeTool.idempotent`).
   */
  interruptedCalls?: ReadonlySet<string>;
  /**
   * Fits each model call into the agent's context budget (see `createCompactor`); absent: the
   * model sees the whole thread (strategy `none`, subagents).
   */
  compactor?: ContextCompactor | null;
}

/** Exit codes of tool results the runtime itself produces. */
export const TOOL_EXIT = {
  failed: 1,
  badArguments: 2,
  unknownTool: 127,
  aborted: 130,
} as const;

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

  async callModel(
    history: BaseMessage[],
    context: ContextState | null,
  ): Promise<{ message: AIMessage | null; context?: ContextState | null }> {
    const { signal, agent, compactor, resolved } = this.options;
    if (signal.aborted) return { message: null };
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
        throw overflow(resolved, attempt.error, 'context.strategy is none');
      prepared = await this.compact(compactor, history, prepared.state, true);
      if (signal.aborted) return { message: null };
      input = prepared.input;
      attempt = await this.stream(input);
      if (attempt.error !== undefined && !signal.aborted && isContextLengthError(attempt.error)) {
        throw overflow(resolved, attempt.error, 'even after compacting it');
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

  async runTools(
    message: AIMessage,
    todos: readonly Todo[],
  ): Promise<{ messages: ToolMessage[]; todos?: Todo[] }> {
    const messages: ToolMessage[] = [];
    let plan: readonly Todo[] = todos;
    let planChanged = false;
    for (const call of message.tool_calls ?? []) {
      const id = call.id ?? `call_${newMessageId()}`;
      const result = await inToolSpan({ id, name: call.name }, () =>
        this.runTool(id, call.name, call.args, plan),
      );
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
          name: call.name,
          content: result.output,
          status: result.exitCode === 0 ? 'success' : 'error',
          additional_kwargs: this.kwargs({ exitCode: String(result.exitCode) }),
        }),
      );
    }
    return planChanged ? { messages, todos: [...plan] } : { messages };
  }

  private async runTool(
    id: string,
    name: string,
    args: unknown,
    todos: readonly Todo[],
  ): Promise<ToolResult> {
    const { signal } = this.options;
    if (signal.aborted)
      return { output: 'Not run: the run was aborted.', exitCode: TOOL_EXIT.aborted };
    if (this.options.interruptedCalls?.has(id)) {
      return {
        output: `Not run again: the server stopped while this ${name} call was running, and ${name} is not safe to repeat. It may or may not have taken effect; check before retrying.`,
        exitCode: TOOL_EXIT.aborted,
      };
    }
    const invalid = this.invalidCalls.get(id);
    if (invalid !== undefined) {
      return {
        output: `Invalid arguments for ${name}: ${invalid}`,
        exitCode: TOOL_EXIT.badArguments,
      };
    }
    const tool = this.toolsByName.get(name);
    if (!tool) {
      const available = [...this.toolsByName.keys()].join(', ') || 'none';
      return {
        output: `Tool "${name}" is not available to agent "${this.options.agent.name}". Available tools: ${available}.`,
        exitCode: TOOL_EXIT.unknownTool,
      };
    }
    const parsed = checkToolArgs(tool, args);
    if (!parsed.ok) {
      const problems = parsed.issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ');
      return {
        output: `Invalid arguments for ${name}: ${problems}`,
        exitCode: TOOL_EXIT.badArguments,
      };
    }
    try {
      return await tool.run(parsed.value, {
        backend: this.options.backend,
        signal,
        emit: (event) => {
          if (this.options.streamToClient) this.options.emit(event);
        },
        todos,
        delegate: this.options.delegate,
        ...(this.options.artifacts ? { artifacts: this.options.artifacts } : {}),
      });
    } catch (error) {
      if (signal.aborted) return { output: 'Aborted.', exitCode: TOOL_EXIT.aborted };
      const code = (error as { code?: unknown }).code;
      const prefix = typeof code === 'string' ? `${code}: ` : '';
      return { output: `Error: ${prefix}${errorMessage(error)}`, exitCode: TOOL_EXIT.failed };
    }
  }
}

function overflow(resolved: ResolvedModel, error: unknown, why: string): RuntimeError {
  return new RuntimeError(
    'CONTEXT_OVERFLOW',
    `The conversation exceeds the context window of ${resolved.provider.id}/${resolved.model} (${why}): ${errorMessage(error)}`,
    { cause: error },
  );
}

/** Maps a failed model call to the runtime's typed error (the run's `error` event code). */
export function toProviderError(error: unknown, resolved: ResolvedModel): RuntimeError {
  if (error instanceof RuntimeError) return error;
  if (isCircuitOpenError(error)) {
    return new RuntimeError(
      'CIRCUIT_OPEN',
      `Provider "${resolved.provider.id}" is failing; its circuit breaker is open (${error.message})`,
      { cause: error },
    );
  }
  const status = providerErrorStatus(error);
  const where = `provider "${resolved.provider.id}" (model ${resolved.model})`;
  return new RuntimeError(
    'PROVIDER_ERROR',
    status === undefined
      ? `The call to ${where} failed: ${errorMessage(error)}`
      : `The call to ${where} failed with HTTP ${status}: ${errorMessage(error)}`,
    { cause: error },
  );
}
