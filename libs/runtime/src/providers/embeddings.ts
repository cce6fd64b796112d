import type { StoreEmbedder } from '@cognition/storage';
import { RuntimeError } from '../errors';
import type { LlmConfig } from './config';

/**
 * Embeddings for the store's semantic index (`langgraph.json`'s `store.index.embed`,
 * `"<provider>:<model>"`), from the named provider's OpenAI-compatible `POST {baseUrl}/embeddings`.
 */

const OPENAI_BASE_URL = 'https://api.openai.com/v1';
/** Inputs per request (OpenAI accepts 2048; compatible servers often fewer). */
const BATCH = 512;
/** A request waits at most this long (or the provider's `timeoutMs`, when shorter). */
const MAX_TIMEOUT_MS = 30_000;

export interface EmbeddingsEndpoint {
  /** The provider's id, or `openai` for the `OPENAI_API_KEY` fallback. */
  provider: string;
  /** `{baseUrl}/embeddings`. */
  url: string;
  model: string;
  apiKey?: string;
  timeoutMs: number;
  maxRetries: number;
}

/**
 * The endpoint `embed` names: the prefix is a provider's id, else a provider kind (the enabled
 * provider of that kind with the lowest priority); `openai` with no such provider falls back to
 * `OPENAI_API_KEY` on api.openai.com. Anthropic serves no embeddings.
 * @throws RuntimeError PROVIDER_CONFIG_ERROR naming `store.index.embed`.
 */
export function resolveEmbeddings(
  embed: string,
  llm: Pick<LlmConfig, 'providers'>,
  fallback: { openaiApiKey?: string } = {},
): EmbeddingsEndpoint {
  const colon = embed.indexOf(':');
  const prefix = embed.slice(0, colon);
  const model = embed.slice(colon + 1);
  const enabled = llm.providers.filter((p) => p.enabled);
  const provider =
    enabled.find((p) => p.id === prefix) ??
    enabled.filter((p) => p.kind === prefix).sort((a, b) => a.priority - b.priority)[0];
  const fail = (message: string) =>
    new RuntimeError('PROVIDER_CONFIG_ERROR', `store.index.embed "${embed}": ${message}`, {
      issues: [{ path: 'store.index.embed', message }],
    });
  if (!provider) {
    if (prefix === 'openai' && fallback.openaiApiKey) {
      return {
        provider: 'openai',
        url: `${OPENAI_BASE_URL}/embeddings`,
        model,
        apiKey: fallback.openaiApiKey,
        timeoutMs: MAX_TIMEOUT_MS,
        maxRetries: 2,
      };
    }
    throw fail(
      `no enabled provider with id or kind "${prefix}" (docs/configuration.md: LLM providers)`,
    );
  }
  if (provider.kind === 'anthropic') {
    throw fail(`provider "${provider.id}" is anthropic, which has no embeddings endpoint`);
  }
  const base = (provider.baseUrl ?? OPENAI_BASE_URL).replace(/\/+$/, '');
  return {
    provider: provider.id,
    url: `${base}/embeddings`,
    model,
    ...(provider.apiKey ? { apiKey: provider.apiKey } : {}),
    timeoutMs: Math.min(provider.timeoutMs, MAX_TIMEOUT_MS),
    maxRetries: provider.maxRetries,
  };
}

/** Network failures by their code, in words. */
const NETWORK_REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  UND_ERR_SOCKET: 'connection closed',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found',
  ETIMEDOUT: 'connect timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connect timed out',
};

/**
 * Why a request got no answer, in words. Not fetch's own text: the LangGraph SDK takes any error
 * whose message holds "fetch failed" or "ECONNREFUSED" for its own server being unreachable, so
 * our 503 naming the embeddings endpoint would reach its caller as "Unable to connect to
 * LangGraph server".
 */
function networkReason(error: unknown, timeoutMs: number): string {
  // Duck-typed: fetch's errors come from another realm than this module's `Error` under jest.
  const e = error as { name?: string; cause?: { code?: unknown; message?: unknown } } | null;
  if (e?.name === 'TimeoutError') return `no answer within ${timeoutMs} ms`;
  const code = typeof e?.cause?.code === 'string' ? e.cause.code : undefined;
  const message = typeof e?.cause?.message === 'string' ? e.cause.message : 'no answer';
  const reason = (code && NETWORK_REASONS[code]) ?? code ?? message;
  return `unreachable (${reason.replace(/ECONNREFUSED|fetch failed/gi, 'refused')})`;
}

class Retryable extends Error {}

/** `StoreEmbedder` over an OpenAI-compatible `/embeddings` endpoint (plain fetch). */
export class EndpointEmbedder implements StoreEmbedder {
  constructor(private readonly endpoint: EmbeddingsEndpoint) {}

  async embedDocuments(texts: string[]): Promise<number[][]> {
    const out: number[][] = [];
    for (let i = 0; i < texts.length; i += BATCH) {
      out.push(...(await this.request(texts.slice(i, i + BATCH))));
    }
    return out;
  }

  async embedQuery(text: string): Promise<number[]> {
    const [vector] = await this.request([text]);
    return vector ?? [];
  }

  private async request(input: string[]): Promise<number[][]> {
    const { url, model, maxRetries } = this.endpoint;
    const where = `embeddings endpoint ${url} (provider "${this.endpoint.provider}", model "${model}")`;
    for (let attempt = 0; ; attempt += 1) {
      try {
        return await this.once(input);
      } catch (error) {
        if (!(error instanceof Retryable) || attempt >= maxRetries) {
          throw new Error(`${where}: ${error instanceof Error ? error.message : String(error)}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 250 * 2 ** attempt));
      }
    }
  }

  private async once(input: string[]): Promise<number[][]> {
    const { url, model, apiKey, timeoutMs } = this.endpoint;
    let response: Response;
    try {
      response = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
        },
        body: JSON.stringify({ model, input }),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      throw new Retryable(networkReason(error, timeoutMs));
    }
    if (!response.ok) {
      const body = (await response.text().catch(() => '')).slice(0, 300);
      const message = `answered ${response.status}${body ? `: ${body}` : ''}`;
      throw response.status === 429 || response.status >= 500
        ? new Retryable(message)
        : new Error(message);
    }
    const json = (await response.json()) as { data?: { embedding?: unknown; index?: number }[] };
    const data = Array.isArray(json.data) ? [...json.data] : [];
    if (data.length !== input.length) {
      throw new Error(`answered ${data.length} embeddings for ${input.length} inputs`);
    }
    data.sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
    return data.map((entry) => (Array.isArray(entry.embedding) ? entry.embedding : []) as number[]);
  }
}
