import type { BaseMessage } from '@langchain/core/messages';
import { Tiktoken } from 'js-tiktoken/lite';
import type { TiktokenBPE } from 'js-tiktoken/lite';
import type { ProviderKind } from '../providers/config';

/**
 * Counts tokens of model inputs before they are sent. For OpenAI models js-tiktoken (OpenAI's
 * BPE ranks, shipped inside the npm package: no download) gives the exact count of a text.
 * Other providers publish no offline tokenizer, so their count is an estimate of
 * {@link CHARS_PER_TOKEN_ESTIMATE} characters per token, on the safe side for English prose and
 * code with Claude and Llama-family tokenizers; a provider that reports more input tokens than
 * counted scales later counts up (`ContextState.token_ratio`). Chat formats add a few tokens
 * per message (role markers): {@link MESSAGE_OVERHEAD}.
 */
export interface TokenCounter {
  /** `tiktoken:<encoding>` or `estimate:chars/<n>`. */
  readonly name: string;
  text(text: string): number;
  message(message: BaseMessage): number;
}

export const MESSAGE_OVERHEAD = 4;
export const CHARS_PER_TOKEN_ESTIMATE = 3.5;

type Encoding = 'o200k_base' | 'cl100k_base';

const encoders = new Map<Encoding, Tiktoken>();

/**
 * The rank table of an encoding, loaded on first use rather than with this module: the two
 * tables are 3.4 MB of source that every server start would read and compile although only
 * OpenAI models count with them. (`require`: counting is synchronous.)
 */
function ranks(encoding: Encoding): TiktokenBPE {
  // The packages' CommonJS builds export the table itself (`module.exports = {...}`).
  /* eslint-disable @typescript-eslint/no-require-imports */
  return (
    encoding === 'o200k_base'
      ? require('js-tiktoken/ranks/o200k_base')
      : require('js-tiktoken/ranks/cl100k_base')
  ) as TiktokenBPE;
  /* eslint-enable @typescript-eslint/no-require-imports */
}

/**
 * Encoders are built on first use: building one parses its rank table, which takes a second or
 * more of CPU, once per process.
 */
function encoder(encoding: Encoding): Tiktoken {
  let found = encoders.get(encoding);
  if (!found) {
    found = new Tiktoken(ranks(encoding));
    encoders.set(encoding, found);
  }
  return found;
}

/** The BPE of an OpenAI model: cl100k_base for GPT-4 / GPT-3.5, o200k_base for later ones. */
function openAiEncoding(model: string): Encoding {
  return /^(gpt-4(-turbo)?|gpt-4-\d|gpt-3\.5)/.test(model) && !model.startsWith('gpt-4o')
    ? 'cl100k_base'
    : 'o200k_base';
}

/** The text a message contributes to the input: its content and its tool calls' names and args. */
function messageText(message: BaseMessage): string {
  const content =
    typeof message.content === 'string' ? message.content : JSON.stringify(message.content);
  const calls = (message as { tool_calls?: unknown[] }).tool_calls;
  return calls?.length ? `${content}${JSON.stringify(calls)}` : content;
}

const CACHE_LIMIT = 20_000;

/** Counts of messages are cached by id and text length (tool results are counted once). */
abstract class CachingTokenCounter implements TokenCounter {
  abstract readonly name: string;
  /**
   * `<message id>:<text length>` -> count: a thread's messages would be counted again on every
   * call otherwise (the length tells a tool result apart from its truncated form).
   */
  private readonly cache = new Map<string, number>();

  abstract text(text: string): number;

  message(message: BaseMessage): number {
    const text = messageText(message);
    const key = message.id ? `${message.id}:${text.length}` : null;
    const cached = key === null ? undefined : this.cache.get(key);
    if (cached !== undefined) return cached;
    const tokens = this.text(text) + MESSAGE_OVERHEAD;
    if (key !== null) {
      if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
      this.cache.set(key, tokens);
    }
    return tokens;
  }
}

class BpeTokenCounter extends CachingTokenCounter {
  readonly name: string;

  constructor(private readonly encoding: Encoding) {
    super();
    this.name = `tiktoken:${encoding}`;
  }

  text(text: string): number {
    return text === '' ? 0 : encoder(this.encoding).encode(text).length;
  }
}

class CharEstimateCounter extends CachingTokenCounter {
  readonly name = `estimate:chars/${CHARS_PER_TOKEN_ESTIMATE}`;

  text(text: string): number {
    return Math.ceil(text.length / CHARS_PER_TOKEN_ESTIMATE);
  }
}

const counters = new Map<string, TokenCounter>();

/** The counter of a model served by a provider of `kind` (shared: its cache spans runs). */
export function tokenCounterFor(kind: ProviderKind, model: string): TokenCounter {
  const key = kind === 'openai' ? openAiEncoding(model) : 'estimate';
  let counter = counters.get(key);
  if (!counter) {
    counter = key === 'estimate' ? new CharEstimateCounter() : new BpeTokenCounter(key);
    counters.set(key, counter);
  }
  return counter;
}
