import { readdir, readFile } from 'node:fs/promises';
import { basename, extname, join } from 'node:path';
import type { FieldIssue } from '@cognition/contracts';
import {
  AgentNameSchema,
  ContextSettingsSchema,
  InterruptOnSchema,
  McpServerConfigSchema,
  McpToolNamePattern,
  normalizeInterruptOn,
  toFieldIssues,
} from '@cognition/contracts';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { RuntimeError } from '../errors';
import { TOOL_NAMES } from '../tools/names';
import type { AgentDefinition } from './agent';
import { splitFrontmatter } from './frontmatter';

/** Where agent files live, relative to the workspace. */
export const AGENTS_DIR = join('.cognition', 'agents');

const AGENT_FILE_EXTENSIONS = ['.md', '.yaml', '.yml'];

const CommonFieldsSchema = z.strictObject({
  name: AgentNameSchema.optional(),
  description: z.string().min(1).max(1000),
  mode: z.enum(['primary', 'subagent']).default('primary'),
  tools: z.array(z.enum(TOOL_NAMES)).optional(),
  model: z.string().min(1).max(256).optional(),
  temperature: z.number().min(0).max(2).optional(),
  context: ContextSettingsSchema.optional(),
  interrupt_on: InterruptOnSchema.optional(),
  mcp_servers: z.array(McpServerConfigSchema).optional(),
  skills: z.array(z.string().min(1).max(64)).optional(),
});

/** Cross-field rules: `interrupt_on` names tools that exist; MCP server names are unique. */
function checkReferences(fields: z.infer<typeof CommonFieldsSchema>): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const servers = new Set<string>();
  (fields.mcp_servers ?? []).forEach((server, index) => {
    if (servers.has(server.name)) {
      issues.push({
        path: `mcp_servers.${index}.name`,
        message: `duplicate server "${server.name}"`,
      });
    }
    servers.add(server.name);
  });
  for (const tool of Object.keys(fields.interrupt_on ?? {})) {
    const known =
      (TOOL_NAMES as readonly string[]).includes(tool) ||
      (McpToolNamePattern.test(tool) && servers.has(tool.split('__')[1] ?? ''));
    if (!known) {
      issues.push({
        path: `interrupt_on.${tool}`,
        message: `unknown tool "${tool}" (a built-in tool, or mcp__<server>__<tool> of a server in mcp_servers)`,
      });
    }
  }
  return issues;
}

const MarkdownFrontmatterSchema = CommonFieldsSchema;
const YamlAgentSchema = CommonFieldsSchema.extend({ system_prompt: z.string().min(1) });

function fileError(file: string, issues: FieldIssue[]): RuntimeError {
  const prefixed = issues.map((issue) => ({
    path: `${file}: ${issue.path}`,
    message: issue.message,
  }));
  return new RuntimeError(
    'VALIDATION_ERROR',
    `Invalid agent file ${file}: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
    { issues: prefixed },
  );
}

function frontmatterOf(file: string, text: string): { frontmatter: string; body: string } {
  const split = splitFrontmatter(text);
  if (!split) {
    throw fileError(file, [
      { path: '(frontmatter)', message: 'expected YAML frontmatter between --- lines at the top' },
    ]);
  }
  return split;
}

function parseYamlValue(file: string, text: string): unknown {
  try {
    return parseYaml(text) as unknown;
  } catch (error) {
    throw fileError(file, [
      { path: '(yaml)', message: error instanceof Error ? error.message : String(error) },
    ]);
  }
}

/**
 * Parses one agent file. Markdown: YAML frontmatter (`description`, `mode`, `tools`, `model`,
 * `temperature`, `context`, optional `name`) and the body as the system prompt. YAML: the same keys plus
 * `system_prompt`. The agent's name is `name` or else the file name without extension.
 *
 * @throws RuntimeError VALIDATION_ERROR naming the file and every problem in it.
 */
export function parseAgentFile(file: string, text: string): AgentDefinition {
  const ext = extname(file).toLowerCase();
  let fields: z.infer<typeof CommonFieldsSchema>;
  let systemPrompt: string;
  if (ext === '.md') {
    const { frontmatter, body } = frontmatterOf(file, text);
    const parsed = MarkdownFrontmatterSchema.safeParse(parseYamlValue(file, frontmatter) ?? {});
    if (!parsed.success) throw fileError(file, toFieldIssues(parsed.error));
    if (body.length === 0) {
      throw fileError(file, [
        { path: '(body)', message: 'the system prompt (file body) is empty' },
      ]);
    }
    fields = parsed.data;
    systemPrompt = body;
  } else {
    const parsed = YamlAgentSchema.safeParse(parseYamlValue(file, text) ?? {});
    if (!parsed.success) throw fileError(file, toFieldIssues(parsed.error));
    const { system_prompt, ...rest } = parsed.data;
    fields = rest;
    systemPrompt = system_prompt.trim();
  }
  const referenceIssues = checkReferences(fields);
  if (referenceIssues.length > 0) throw fileError(file, referenceIssues);
  const name = fields.name ?? basename(file, extname(file));
  const nameCheck = AgentNameSchema.safeParse(name);
  if (!nameCheck.success) {
    throw fileError(file, [{ path: 'name', message: `"${name}" is not a valid agent name` }]);
  }
  return {
    name,
    description: fields.description,
    mode: fields.mode,
    tools: fields.tools ?? TOOL_NAMES,
    model: fields.model ?? null,
    temperature: fields.temperature ?? null,
    ...(fields.context ? { context: fields.context } : {}),
    interruptOn: normalizeInterruptOn(fields.interrupt_on),
    mcpServers: fields.mcp_servers ?? [],
    skills: fields.skills ?? null,
    systemPrompt,
    source: file,
  };
}

/**
 * Reads every `*.md`, `*.yaml` and `*.yml` file of `<workspace>/.cognition/agents` (a missing
 * directory means no custom agents). Files are read in name order so duplicates are reported
 * deterministically.
 *
 * @throws RuntimeError VALIDATION_ERROR listing every invalid file and its problems.
 */
export async function loadAgentFiles(workspace: string): Promise<AgentDefinition[]> {
  const dir = join(workspace, AGENTS_DIR);
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new RuntimeError('VALIDATION_ERROR', `Cannot read agents directory ${dir}`, {
      cause: error,
    });
  }
  const files = entries
    .filter((entry) => AGENT_FILE_EXTENSIONS.includes(extname(entry).toLowerCase()))
    .sort()
    .map((entry) => join(dir, entry));
  const agents: AgentDefinition[] = [];
  const problems: RuntimeError[] = [];
  for (const file of files) {
    try {
      agents.push(parseAgentFile(file, await readFile(file, 'utf8')));
    } catch (error) {
      if (error instanceof RuntimeError) problems.push(error);
      else throw error;
    }
  }
  if (problems.length > 0) {
    throw new RuntimeError('VALIDATION_ERROR', problems.map((p) => p.message).join('\n'), {
      issues: problems.flatMap((p) => p.issues),
    });
  }
  return agents;
}
