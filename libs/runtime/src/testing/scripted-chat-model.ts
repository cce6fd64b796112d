import type { CallbackManagerForLLMRun } from '@langchain/core/callbacks/manager';
import type { BaseLanguageModelInput } from '@langchain/core/language_models/base';
import type {
  BaseChatModelCallOptions,
  BindToolsInput,
} from '@langchain/core/language_models/chat_models';
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import type { BaseMessage } from '@langchain/core/messages';
import { AIMessage, AIMessageChunk } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import { ChatGenerationChunk } from '@langchain/core/outputs';
import type { Runnable } from '@langchain/core/runnables';

/** One scripted model reply. */
export interface ScriptedStep {
  /** Streamed as given (an array = one token event per element). */
  text?: string | string[];
  toolCalls?: { name: string; args: Record<string, unknown>; id?: string }[];
  /** Reported usage; absent: none reported (the runtime then estimates). */
  usage?: { input_tokens: number; output_tokens: number };
  /** Delay before each chunk. */
  delayMs?: number;
  /** Stream the text, then wait until the call is aborted. */
  hang?: boolean;
  /** Fail the call (before any chunk). */
  error?: Error;
}

/** What the model received in one call. */
export interface ScriptedCall {
  messages: BaseMessage[];
  /** Names of the tools bound to the model for this call. */
  tools: string[];
}

export type ScriptEntry = ScriptedStep | ((call: ScriptedCall) => ScriptedStep);

interface SharedScript {
  queue: ScriptEntry[];
  calls: ScriptedCall[];
}

function toolName(tool: BindToolsInput): string {
  const t = tool as { name?: unknown; function?: { name?: unknown } };
  if (typeof t.function?.name === 'string') return t.function.name;
  return typeof t.name === 'string' ? t.name : 'unknown';
}

function wait(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const timer = ms === Infinity ? undefined : setTimeout(done, ms);
    function done(): void {
      if (timer) clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }
    function onAbort(): void {
      if (timer) clearTimeout(timer);
      reject(signal?.reason as Error);
    }
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * An in-process chat model that replays a script, with zero latency unless a step asks for it.
 * `bindTools` returns a model sharing the same script and call record, so a test can assert which
 * tools each call offered and which messages it received. An exhausted script fails the call.
 */
export class ScriptedChatModel extends BaseChatModel {
  private boundTools: string[] = [];

  constructor(
    script: ScriptEntry[] = [],
    private readonly shared: SharedScript = { queue: [...script], calls: [] },
  ) {
    super({});
  }

  /** Every call so far, oldest first. */
  get calls(): ScriptedCall[] {
    return this.shared.calls;
  }

  /**
   * Replies no call has taken yet. A spec sharing one model across tests checks it is 0 after
   * each: a reply left behind (say, a run aborted before it called the model) would be the next
   * test's reply.
   */
  get untaken(): number {
    return this.shared.queue.length;
  }

  /** Appends replies to the script. */
  push(...entries: ScriptEntry[]): this {
    this.shared.queue.push(...entries);
    return this;
  }

  _llmType(): string {
    return 'scripted';
  }

  override bindTools(
    tools: BindToolsInput[],
  ): Runnable<BaseLanguageModelInput, AIMessageChunk, BaseChatModelCallOptions> {
    const bound = new ScriptedChatModel([], this.shared);
    bound.boundTools = tools.map(toolName);
    return bound;
  }

  private next(messages: BaseMessage[]): ScriptedStep {
    const call: ScriptedCall = { messages, tools: [...this.boundTools] };
    this.shared.calls.push(call);
    const entry = this.shared.queue.shift();
    if (!entry) throw new Error('ScriptedChatModel: the script is exhausted');
    return typeof entry === 'function' ? entry(call) : entry;
  }

  override async *_streamResponseChunks(
    messages: BaseMessage[],
    options: this['ParsedCallOptions'],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    const step = this.next(messages);
    if (step.error) throw step.error;
    const signal = options.signal;
    const pieces =
      step.text === undefined ? [] : Array.isArray(step.text) ? step.text : [step.text];
    for (const piece of pieces) {
      if (step.delayMs) await wait(step.delayMs, signal);
      signal?.throwIfAborted();
      yield new ChatGenerationChunk({
        text: piece,
        message: new AIMessageChunk({ content: piece }),
      });
      await runManager?.handleLLMNewToken(piece);
    }
    if (step.hang) await wait(Infinity, signal);
    if (step.toolCalls?.length) {
      yield new ChatGenerationChunk({
        text: '',
        message: new AIMessageChunk({
          content: '',
          tool_call_chunks: step.toolCalls.map((call, index) => ({
            name: call.name,
            args: JSON.stringify(call.args),
            id: call.id ?? `call_${this.shared.calls.length}_${index}`,
            index,
            type: 'tool_call_chunk' as const,
          })),
        }),
      });
    }
    if (step.usage) {
      yield new ChatGenerationChunk({
        text: '',
        message: new AIMessageChunk({
          content: '',
          usage_metadata: {
            input_tokens: step.usage.input_tokens,
            output_tokens: step.usage.output_tokens,
            total_tokens: step.usage.input_tokens + step.usage.output_tokens,
          },
        }),
      });
    }
  }

  override async _generate(
    messages: BaseMessage[],
    options: this['ParsedCallOptions'],
    runManager?: CallbackManagerForLLMRun,
  ): Promise<ChatResult> {
    let acc: AIMessageChunk | undefined;
    for await (const chunk of this._streamResponseChunks(messages, options, runManager)) {
      acc = acc ? acc.concat(chunk.message as AIMessageChunk) : (chunk.message as AIMessageChunk);
    }
    const message = new AIMessage({
      content: acc?.content ?? '',
      tool_calls: acc?.tool_calls ?? [],
      usage_metadata: acc?.usage_metadata,
    });
    return {
      generations: [{ text: typeof message.content === 'string' ? message.content : '', message }],
    };
  }
}
