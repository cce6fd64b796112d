import { readdir, readFile } from 'node:fs/promises';
import { basename, extname, join } from 'node:path';
import type { FieldIssue } from '@cognition/contracts';
import {
  AgentExposeSchema,
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
import { DEFAULT_EXPOSE } from './agent';
import { splitFrontmatter } from '../frontmatter';

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
  expose: AgentExposeSchema.optional(),
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
 * An agent definition as one document: the fields of an agent file plus `system_prompt` (a YAML
 * agent file, and the body of the registry API's agent writes). One schema, so a definition
 * the API accepts is exactly one a file may hold, and the other way round.
 */
export const AgentDefinitionFieldsSchema = CommonFieldsSchema.extend({
  system_prompt: z.string().min(1),
});

/**
 * The definition of agent `name` from already shape-checked fields: cross references checked,
 * the name checked, defaults applied. Issues are named relative to the fields.
 */
function buildAgent(
  fields: z.infer<typeof CommonFieldsSchema>,
  systemPrompt: string,
  name: string,
  source: string,
): { agent: AgentDefinition } | { issues: FieldIssue[] } {
  const referenceIssues = checkReferences(fields);
  if (referenceIssues.length > 0) return { issues: referenceIssues };
  if (!AgentNameSchema.safeParse(name).success) {
    return { issues: [{ path: 'name', message: `"${name}" is not a valid agent name` }] };
  }
  return {
    agent: {
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
      expose: { ...DEFAULT_EXPOSE, ...fields.expose },
      systemPrompt,
      source,
    },
  };
}

/**
 * Validates one agent definition document (the YAML file form): every shape and reference rule
 * of the agent files. `name` defaults to the document's own `name` field.
 * Issues are named relative to the document (`tools.0`, `interrupt_on.deploy`, `temperature`).
 */
export function parseAgentDefinition(
  input: unknown,
  options: { source: string; name?: string },
): { agent: AgentDefinition } | { issues: FieldIssue[] } {
  const parsed = AgentDefinitionFieldsSchema.safeParse(input ?? {});
  if (!parsed.success) return { issues: toFieldIssues(parsed.error) };
  const { system_prompt, ...fields } = parsed.data;
  const name = options.name ?? fields.name;
  if (name === undefined) return { issues: [{ path: 'name', message: 'required' }] };
  return buildAgent(fields, system_prompt.trim(), name, options.source);
}

/**
 * Parses one agent file. Markdown: YAML frontmatter (`description`, `mode`, `tools`, `model`,
 * `temperature`, `context`, optional `name`) and the body as the system prompt. YAML: the same keys plus
 * `system_prompt`. The agent's name is `name` or else the file name without extension.
 *
 * @throws RuntimeError VALIDATION_ERROR naming the file and every problem in it.
 */
export function parseAgentFile(file: string, text: string): AgentDefinition {
  const fallbackName = basename(file, extname(file));
  let result: { agent: AgentDefinition } | { issues: FieldIssue[] };
  if (extname(file).toLowerCase() === '.md') {
    const { frontmatter, body } = frontmatterOf(file, text);
    const parsed = MarkdownFrontmatterSchema.safeParse(parseYamlValue(file, frontmatter) ?? {});
    if (!parsed.success) throw fileError(file, toFieldIssues(parsed.error));
    if (body.length === 0) {
      throw fileError(file, [
        { path: '(body)', message: 'the system prompt (file body) is empty' },
      ]);
    }
    result = buildAgent(parsed.data, body, parsed.data.name ?? fallbackName, file);
  } else {
    const value = parseYamlValue(file, text) ?? {};
    const named =
      value !== null && typeof value === 'object' && 'name' in value ? undefined : fallbackName;
    result = parseAgentDefinition(value, { source: file, ...(named ? { name: named } : {}) });
  }
  if ('issues' in result) throw fileError(file, result.issues);
  return result.agent;
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
