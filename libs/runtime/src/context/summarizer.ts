import type { CircuitBreaker } from '@cognition/circuit-breaker';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import type { AIMessageChunk, BaseMessage } from '@langchain/core/messages';
import { HumanMessage, SystemMessage, isAIMessage, isHumanMessage } from '@langchain/core/messages';
import type { UsageMeter } from '../providers/usage';
import { endModelCallSpan, startModelCallSpan } from '../telemetry/spans';
import { estimateMessagesTokens, estimateTokens } from '../providers/usage';
import type { TokenCounter } from './token-counter';

export const SUMMARIZER_PROMPT = `You maintain the running summary of a long conversation between a user and an AI agent that uses tools in a workspace.
You receive the current summary (possibly empty) and the next messages that are leaving the agent's context window.
Write the updated summary: keep the user's goals, requests and constraints, decisions taken, facts learned, files and commands touched with their outcomes, and what is still open.
Drop greetings, repetition and tool output details that no longer matter. Write plain prose or short bullet points, no preamble.`;

/** A tool call's arguments are shown up to this many characters in the transcript. */
const ARGS_PREVIEW = 500;

function textOf(content: BaseMessage['content']): string {
  if (typeof content === 'string') return content;
  return content
    .map((part: unknown) => {
      const block = part as { type?: unknown; text?: unknown };
      return block.type === 'text' && typeof block.text === 'string' ? block.text : '';
    })
    .join('');
}

/** One transcript line per message, as the summary model reads them. */
function transcriptLine(message: BaseMessage): string {
  if (isHumanMessage(message)) return `[user] ${textOf(message.content)}`;
  if (isAIMessage(message)) {
    const calls = (message.tool_calls ?? []).map((call) => {
      const args = JSON.stringify(call.args);
      const shown = args.length > ARGS_PREVIEW ? `${args.slice(0, ARGS_PREVIEW)}…` : args;
      return `\n  -> ${call.name}(${shown})`;
    });
    return `[assistant] ${textOf(message.content)}${calls.join('')}`;
  }
  const name = (message as { name?: string }).name;
  return `[tool${name ? ` ${name}` : ''}] ${textOf(message.content)}`;
}

export interface SummarizerOptions {
  model: BaseChatModel;
  /** The model's name, reported in the `compaction` event. */
  modelName: string;
  breaker: CircuitBreaker;
  /** Where the summary calls' usage is counted (nested in the run's meter). */
  meter: UsageMeter;
  counter: TokenCounter;
  /** Tokens one summary call may be sent; longer transcripts are folded in several calls. */
  inputBudget: number;
}

/**
 * Writes the running summary with a (typically cheaper) model: the previous summary plus the
 * messages leaving the window give the new summary, in as many calls as the summary model's
 * budget needs. Each call runs in the provider's circuit breaker and is metered.
 */
export class Summarizer {
  constructor(private readonly options: SummarizerOptions) {}

  get modelName(): string {
    return this.options.modelName;
  }

  async summarize(
    previous: string | null,
    leaving: readonly BaseMessage[],
    maxTokens: number,
    signal: AbortSignal,
  ): Promise<string> {
    const { counter, inputBudget } = this.options;
    const words = Math.max(20, Math.floor(maxTokens * 0.7));
    const fixed = counter.text(SUMMARIZER_PROMPT) + maxTokens + 64;
    let summary = previous;
    let chunk: string[] = [];
    let chunkTokens = 0;
    const flush = async () => {
      if (chunk.length === 0) return;
      summary = await this.call(summary, chunk.join('\n'), words, signal);
      chunk = [];
      chunkTokens = 0;
    };
    for (const message of leaving) {
      const line = transcriptLine(message);
      const tokens = counter.text(line);
      if (chunk.length > 0 && fixed + chunkTokens + tokens > inputBudget) await flush();
      // A single line longer than the whole budget is cut to fit.
      const room = Math.max(16, inputBudget - fixed);
      const fitted =
        tokens > room ? `${line.slice(0, Math.floor((line.length * room) / tokens))}…` : line;
      chunk.push(fitted);
      chunkTokens += Math.min(tokens, room);
    }
    await flush();
    return summary ?? '';
  }

  private async call(
    previous: string | null,
    transcript: string,
    words: number,
    signal: AbortSignal,
  ): Promise<string> {
    const input = [
      new SystemMessage(SUMMARIZER_PROMPT),
      new HumanMessage(
        `Current summary:\n${previous ?? '(none yet)'}\n\nMessages leaving the context window:\n${transcript}\n\nWrite the updated summary in at most ${words} words.`,
      ),
    ];
    const { model, breaker, meter } = this.options;
    const span = startModelCallSpan({ provider: meter.provider, model: meter.model });
    span.setAttribute('cognition.model_call.purpose', 'summary');
    let reply: AIMessageChunk | undefined;
    try {
      // Streamed like the agent's calls: LangChain's OpenAI `invoke` of a streaming model counts
      // tokens with a tokenizer it downloads, which fails (slowly, with retries) offline.
      reply = await breaker.execute(
        async (callSignal) => {
          let acc: AIMessageChunk | undefined;
          for await (const chunk of await model.stream(input, { signal: callSignal ?? signal })) {
            acc = acc ? acc.concat(chunk) : chunk;
          }
          return acc;
        },
        { signal },
      );
    } catch (error) {
      endModelCallSpan(span, { error, aborted: signal.aborted });
      throw error;
    }
    const text = reply ? textOf(reply.content).trim() : '';
    const usage = meter.add(reply?.usage_metadata, () => ({
      input: estimateMessagesTokens(input),
      output: estimateTokens(text),
    }));
    endModelCallSpan(span, { usage });
    return text === '' ? (previous ?? '') : text;
  }
}

/** Characters of `text` that fit `maxTokens` by `counter` (cut, with an ellipsis). */
export function clampToTokens(text: string, maxTokens: number, counter: TokenCounter): string {
  let out = text;
  for (let tokens = counter.text(out); tokens > maxTokens; tokens = counter.text(out)) {
    const keep = Math.floor((out.length * maxTokens) / tokens) - 1;
    if (keep <= 0) return '';
    out = `${out.slice(0, keep)}…`;
  }
  return out;
}
