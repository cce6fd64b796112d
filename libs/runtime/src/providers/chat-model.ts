import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { ContextOverflowError } from '@langchain/core/errors';
import type { ResolvedModel } from './registry';

/** Builds the chat model of a run. Injectable in `RunManagerOptions` (tests use fakes). */
export type ChatModelFactory = (resolved: ResolvedModel) => BaseChatModel | Promise<BaseChatModel>;

/** Anthropic requires an explicit output budget. */
const ANTHROPIC_DEFAULT_MAX_TOKENS = 4096;

/**
 * The official LangChain client for a provider kind, streaming, with usage reporting on.
 * `openai_compatible` always speaks Chat Completions (what compatible servers implement), never
 * the Responses API that `ChatOpenAI` may pick for some OpenAI models. Each client library is
 * loaded with the first model of its kind: a server loads only the one it uses, and none before
 * its first turn.
 */
export const createChatModel: ChatModelFactory = async ({
  provider,
  model,
  temperature,
  maxTokens,
}) => {
  switch (provider.kind) {
    case 'openai': {
      const { ChatOpenAI } = await import('@langchain/openai');
      return new ChatOpenAI({
        model,
        apiKey: provider.apiKey,
        configuration: provider.baseUrl ? { baseURL: provider.baseUrl } : undefined,
        temperature,
        maxTokens,
        streaming: true,
        streamUsage: true,
        maxRetries: provider.maxRetries,
        timeout: provider.timeoutMs,
      });
    }
    case 'openai_compatible': {
      const { ChatOpenAICompletions } = await import('@langchain/openai');
      return new ChatOpenAICompletions({
        model,
        // Local servers often need no key, but the OpenAI client insists on one.
        apiKey: provider.apiKey ?? 'not-needed',
        configuration: { baseURL: provider.baseUrl },
        temperature,
        maxTokens,
        streaming: true,
        streamUsage: true,
        maxRetries: provider.maxRetries,
        timeout: provider.timeoutMs,
      });
    }
    case 'anthropic': {
      const { ChatAnthropic } = await import('@langchain/anthropic');
      return new ChatAnthropic({
        model,
        apiKey: provider.apiKey,
        anthropicApiUrl: provider.baseUrl,
        temperature,
        maxTokens: maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS,
        streaming: true,
        maxRetries: provider.maxRetries,
        clientOptions: { timeout: provider.timeoutMs },
      });
    }
  }
};

/** The HTTP status of a provider error, when it carries one. */
export function providerErrorStatus(error: unknown): number | undefined {
  if (error === null || typeof error !== 'object') return undefined;
  const status = (error as { status?: unknown }).status;
  if (typeof status === 'number') return status;
  const responseStatus = (error as { response?: { status?: unknown } }).response?.status;
  return typeof responseStatus === 'number' ? responseStatus : undefined;
}

/**
 * Whether a provider error means the provider is down (opens its circuit breaker): 5xx, network
 * errors and timeouts are; a 4xx is not (the provider answered; the request or quota was wrong).
 */
export function isProviderOutage(error: unknown): boolean {
  if (isContextLengthError(error)) return false;
  const status = providerErrorStatus(error);
  return status === undefined || status >= 500;
}

/** Messages of OpenAI-compatible servers (vLLM, llama.cpp, Ollama...) rejecting a too long input. */
const CONTEXT_LENGTH_MESSAGE =
  /context[_ ]length|context window|maximum context|context size|prompt is too long|too many tokens/i;

/**
 * Whether the provider rejected the call because its input exceeds the model's context window:
 * LangChain's `ContextOverflowError` (its OpenAI and Anthropic clients raise it), or a 400/413
 * whose message says so (servers LangChain does not recognise).
 */
export function isContextLengthError(error: unknown): boolean {
  if (ContextOverflowError.isInstance(error)) return true;
  if (!(error instanceof Error)) return false;
  const status = providerErrorStatus(error);
  return (status === 400 || status === 413) && CONTEXT_LENGTH_MESSAGE.test(error.message);
}
