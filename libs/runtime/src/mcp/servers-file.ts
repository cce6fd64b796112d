import type { FieldIssue } from '@cognition/contracts';
import { AgentNameSchema, McpServerConfigSchema, toFieldIssues } from '@cognition/contracts';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { RuntimeError } from '../errors';
import type { GlobalMcpServer } from './mcp-manager';

const [StdioServerSchema, HttpServerSchema] = McpServerConfigSchema.options;

const FileSchema = z.strictObject({
  servers: z.array(z.record(z.string(), z.unknown())),
});

const AgentsSchema = z.array(AgentNameSchema).min(1).optional();

/**
 * Parses `COGNITION_MCP_SERVERS_FILE` (YAML, or JSON, which YAML reads too):
 * `servers: [{ name, command, args?, env?, cwd?, timeout_ms?, agents? } | { name, url, headers?,
 * allow_private?, timeout_ms?, agents? }]` — the fields of an agent's `mcp_servers` entry, plus
 * `agents`: the agents that get the server (absent: every agent).
 * @throws RuntimeError VALIDATION_ERROR with every problem (`servers.0.url`, ...).
 */
export function parseMcpServersFile(content: string): GlobalMcpServer[] {
  let value: unknown;
  try {
    value = parseYaml(content) as unknown;
  } catch (error) {
    throw invalid([{ path: '(file)', message: (error as Error).message }]);
  }
  const file = FileSchema.safeParse(value ?? { servers: [] });
  if (!file.success) throw invalid(toFieldIssues(file.error));
  const issues: FieldIssue[] = [];
  const names = new Set<string>();
  const servers: GlobalMcpServer[] = [];
  file.data.servers.forEach((entry, index) => {
    const at = (issue: FieldIssue): FieldIssue => ({
      path: issue.path === '(root)' ? `servers.${index}` : `servers.${index}.${issue.path}`,
      message: issue.message,
    });
    const { agents: rawAgents, ...rest } = entry;
    const agents = AgentsSchema.safeParse(rawAgents);
    if (!agents.success) {
      issues.push(
        ...toFieldIssues(agents.error).map((i) =>
          at({ ...i, path: `agents${i.path === '(root)' ? '' : `.${i.path}`}` }),
        ),
      );
    }
    const schema = 'url' in rest ? HttpServerSchema : StdioServerSchema;
    const server = schema.safeParse(rest);
    if (!server.success) {
      issues.push(...toFieldIssues(server.error).map(at));
      return;
    }
    if (names.has(server.data.name)) {
      issues.push(at({ path: 'name', message: `duplicate server "${server.data.name}"` }));
    }
    names.add(server.data.name);
    if (agents.success) servers.push({ server: server.data, agents: agents.data ?? null });
  });
  if (issues.length > 0) throw invalid(issues);
  return servers;
}

function invalid(issues: FieldIssue[]): RuntimeError {
  return new RuntimeError(
    'VALIDATION_ERROR',
    `Invalid MCP servers file: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
    { issues },
  );
}
