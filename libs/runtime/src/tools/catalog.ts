import { z } from 'zod';
import { ARTIFACT_TOOLS } from './artifact-tools';
import { FILE_TOOLS } from './file-tools';
import { taskTool, writeTodosTool } from './planning-tools';
import { readSkillTool } from './skill-tools';
import type { InspectPackageOptions } from './inspect/inspect-package';
import { createInspectPackageTool } from './inspect/inspect-package';
import type { RuntimeTool } from './types';
import type { WebFetchOptions } from './web-fetch';
import { createWebFetchTool } from './web-fetch';
import type { WebSearchOptions } from './web-search';
import { createWebSearchTool } from './web-search';

export interface ToolCatalogOptions {
  webFetch?: WebFetchOptions;
  /** Without it `web_search` does not exist, so no agent is offered it. */
  webSearch?: WebSearchOptions;
  inspectPackage?: InspectPackageOptions;
}

/** The OpenAI function format, which every LangChain chat model's `bindTools` accepts. */
export interface ToolDefinition {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

/** Tools are immutable, so each one's JSON schema is converted once (it is offered every run). */
const definitions = new WeakMap<RuntimeTool, ToolDefinition>();

export function toToolDefinition(tool: RuntimeTool): ToolDefinition {
  let definition = definitions.get(tool);
  if (!definition) {
    // An MCP tool's schema is offered as its server published it.
    const parameters = tool.inputSchema ?? zodParameters(tool.schema);
    definition = {
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters },
    };
    definitions.set(tool, definition);
  }
  return definition;
}

function zodParameters(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _schema, ...parameters } = z.toJSONSchema(schema, { io: 'input' }) as Record<
    string,
    unknown
  >;
  return parameters;
}

/**
 * What the catalog reads of an agent (an `AgentDefinition` is one): agents list the tools they
 * use by name, so agents/ stands above tools/ and the catalog names only what it needs.
 */
export interface ToolUser {
  name: string;
  description: string;
  mode: 'primary' | 'subagent';
  tools: readonly string[];
}

/** Every tool implementation, by name. */
export class ToolCatalog {
  private readonly tools: ReadonlyMap<string, RuntimeTool>;

  constructor(options: ToolCatalogOptions = {}) {
    const all = [
      ...FILE_TOOLS,
      writeTodosTool,
      taskTool,
      createWebFetchTool(options.webFetch),
      ...(options.webSearch ? [createWebSearchTool(options.webSearch)] : []),
      createInspectPackageTool(options.inspectPackage),
      ...ARTIFACT_TOOLS,
      readSkillTool,
    ];
    this.tools = new Map(all.map((tool) => [tool.name, tool]));
  }

  /**
   * The tools a run of `agent` offers, in the agent's order. `task` is offered only to primary
   * agents and only when subagents exist (a subagent cannot delegate further), and its
   * description lists them.
   */
  forAgent(agent: ToolUser, subagents: readonly ToolUser[]): RuntimeTool[] {
    const out: RuntimeTool[] = [];
    for (const name of agent.tools) {
      const tool = this.tools.get(name);
      if (!tool) continue;
      if (name === 'task') {
        if (agent.mode !== 'primary' || subagents.length === 0) continue;
        const list = subagents.map((s) => `- ${s.name}: ${s.description}`).join('\n');
        out.push({ ...tool, description: `${tool.description}\nAvailable subagents:\n${list}` });
        continue;
      }
      out.push(tool);
    }
    return out;
  }
}
