import path from 'node:path';
import type { AreaBuilder, SettingsReader } from '../settings';
import type { ServerConfig } from '../types';

/**
 * The LLM settings as plain values; the runtime's `loadLlmConfig` checks their combination (and
 * the providers file) at startup.
 */
export function readLlm(settings: SettingsReader): AreaBuilder<Pick<ServerConfig, 'llm'>> {
  const workspaceRoot = settings.workspaceRoot();
  const inWorkspace = (file: string | undefined) =>
    file === undefined ? null : path.resolve(workspaceRoot, file);
  const llm = {
    provider: settings.read('COGNITION_LLM_PROVIDER') ?? null,
    model: settings.read('COGNITION_LLM_MODEL') ?? null,
    openaiApiKey: settings.read('OPENAI_API_KEY') ?? null,
    anthropicApiKey: settings.read('ANTHROPIC_API_KEY') ?? null,
    openaiCompatibleBaseUrl: settings.read('COGNITION_OPENAI_COMPATIBLE_BASE_URL') ?? null,
    openaiCompatibleApiKey: settings.read('COGNITION_OPENAI_COMPATIBLE_API_KEY') ?? null,
    providersFile: inWorkspace(settings.read('COGNITION_PROVIDERS_FILE')),
    pricesFile: inWorkspace(settings.read('COGNITION_PRICES_FILE')),
  };
  return () => ({ llm });
}
