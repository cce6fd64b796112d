import type { ExecutionBackend } from '@cognition/sandbox';
import type { AgentDefinition } from '../agents/agent';
import { errorMessage } from '../errors';
import type { Logger } from '../logger';
import type { SkillLibrary } from '../skills/skill-library';
import type { RuntimeTool, SkillToolContext } from '../tools/types';
import { memorySection, readMemoryFiles } from './memory-files';
import { skillContext } from './skill-context';

export interface WorkspaceContext {
  /** Appended to the system prompt: `## Project memory` and `## Skills`, when there are any. */
  prompt: string;
  /** The tools to offer (see `SkillContext.tools`). */
  tools: RuntimeTool[];
  skills?: SkillToolContext;
}

/**
 * What a primary agent's turn learns from its workspace at the start: the memory files (read
 * through the session's sandbox backend, so the same files its tools see) and the skills it
 * may use. Read at the start of every turn, so an AGENTS.md the agent changed in one turn is in
 * the next one's prompt.
 */
export async function workspaceContext(input: {
  agent: AgentDefinition;
  tools: readonly RuntimeTool[];
  skills: SkillLibrary | null;
  backend: () => Promise<ExecutionBackend>;
  logger: Logger;
}): Promise<WorkspaceContext> {
  const { agent, tools, logger } = input;
  let memory = '';
  try {
    const files = await readMemoryFiles(await input.backend(), logger);
    const writable = tools.some((t) => t.name === 'write_file' || t.name === 'edit_file');
    memory = memorySection(files, { writable });
  } catch (error) {
    logger.warn({ err: errorMessage(error) }, 'Cannot open the workspace to read memory files');
  }
  const skills = await skillContext(input.skills, agent, tools, logger);
  const sections = [memory, skills.section].filter((section) => section !== '');
  return {
    prompt: sections.length === 0 ? '' : `\n\n${sections.join('\n\n')}`,
    tools: skills.tools,
    ...(skills.access ? { skills: skills.access } : {}),
  };
}
