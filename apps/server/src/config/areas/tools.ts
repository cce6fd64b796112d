import path from 'node:path';
import { langGraphConfigPath } from '@cognition/runtime';
import type { AreaBuilder, SettingsReader } from '../settings';
import { need } from '../settings';
import type { ServerConfig } from '../types';

/** The built-in tools that reach the network, and the MCP servers offered to every agent. */
export function readTools(settings: SettingsReader): AreaBuilder<Pick<ServerConfig, 'tools'>> {
  const webFetchAllowPrivate = settings.read('COGNITION_WEB_FETCH_ALLOW_PRIVATE_NETWORK');
  const mcpServersFile = settings.read('COGNITION_MCP_SERVERS_FILE');
  const langgraphConfig = settings.read('COGNITION_LANGGRAPH_CONFIG');
  const searchProvider = settings.read('COGNITION_WEB_SEARCH_PROVIDER');
  const searchUrl = settings.read('COGNITION_WEB_SEARCH_URL');
  const searchKey = settings.read('COGNITION_WEB_SEARCH_API_KEY');
  if (searchProvider === 'searxng' && searchUrl === undefined) {
    settings.check('COGNITION_WEB_SEARCH_URL: required when COGNITION_WEB_SEARCH_PROVIDER=searxng');
  }
  if ((searchProvider === 'brave' || searchProvider === 'tavily') && searchKey === undefined) {
    settings.check(
      `COGNITION_WEB_SEARCH_API_KEY: required when COGNITION_WEB_SEARCH_PROVIDER=${searchProvider}`,
    );
  }
  const workspaceRoot = settings.workspaceRoot();
  return () => ({
    tools: {
      webFetchAllowPrivateNetwork: need(webFetchAllowPrivate),
      webSearch:
        searchProvider === undefined
          ? null
          : { provider: searchProvider, url: searchUrl ?? null, apiKey: searchKey ?? null },
      mcpServersFile:
        mcpServersFile === undefined ? null : path.resolve(workspaceRoot, mcpServersFile),
      langgraphConfig: langGraphConfigPath(langgraphConfig, settings.cwd),
    },
  });
}
