import type { LangGraphConfig } from '@cognition/runtime';
import { EndpointEmbedder, isRuntimeError, resolveEmbeddings } from '@cognition/runtime';
import type { StoreIndexConfig } from '@cognition/storage';
import type { LlmSettings } from '../config';
import { ConfigError } from '../config';
import { loadLlmSettings } from './runtime';

/**
 * The store's semantic index from `langgraph.json`'s `store.index` (docs/langgraph-api.md,
 * "Semantic search"): `embed` (`"<provider>:<model>"`) names one of the configured LLM providers
 * (by id, else by kind), whose OpenAI-compatible `/embeddings` endpoint embeds; `dims` and
 * `fields` as LangGraph reads them. Undefined without an index.
 * @throws ConfigError naming the file and `store.index.embed` when no provider can embed.
 */
export async function storeIndexOf(
  langgraph: LangGraphConfig | null,
  llm: LlmSettings,
): Promise<StoreIndexConfig | undefined> {
  const spec = langgraph?.storeIndex;
  if (!langgraph || !spec) return undefined;
  const { config } = await loadLlmSettings(llm);
  try {
    const endpoint = resolveEmbeddings(spec.embed, config, {
      ...(llm.openaiApiKey ? { openaiApiKey: llm.openaiApiKey } : {}),
    });
    return {
      dims: spec.dims,
      embed: new EndpointEmbedder(endpoint),
      ...(spec.fields ? { fields: spec.fields } : {}),
    };
  } catch (error) {
    if (isRuntimeError(error) && error.code === 'PROVIDER_CONFIG_ERROR') {
      throw new ConfigError([`${langgraph.path}: ${error.message}`]);
    }
    throw error;
  }
}
