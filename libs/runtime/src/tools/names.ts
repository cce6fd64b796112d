/** Every tool the runtime can offer a model. Agents list a subset (see the agent registry). */
export const TOOL_NAMES = [
  'ls',
  'read_file',
  'write_file',
  'edit_file',
  'glob',
  'grep',
  'delete',
  'execute',
  'write_todos',
  'web_fetch',
  'web_search',
  'inspect_package',
  'task',
  'artifact_list',
  'artifact_read',
  'artifact_write',
  'read_skill',
] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

/** Tools that change the workspace or run code: never offered to the built-in `readonly` agent. */
export const MUTATING_TOOLS: readonly ToolName[] = [
  'write_file',
  'edit_file',
  'delete',
  'execute',
  'artifact_write',
];
