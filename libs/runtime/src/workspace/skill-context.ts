import type { Skill } from '@cognition/contracts';
import type { AgentDefinition } from '../agents/agent';
import { errorMessage } from '../errors';
import type { Logger } from '../logger';
import type { SkillLibrary } from '../skills/skill-library';
import type { RuntimeTool, SkillToolContext } from '../tools/types';

/** Characters of the skill list (names and descriptions) in the system prompt, at most. */
const SKILL_LIST_MAX_CHARS = 8_000;

/** What a turn of `agent` gets of the workspace's skills. */
export interface SkillContext {
  /** The `## Skills` section of the system prompt; empty when the agent sees no skill. */
  section: string;
  /** The agent's tools, without `read_skill` when there is no skill for it to read. */
  tools: RuntimeTool[];
  /** What `read_skill` may load; absent when the agent sees no skill. */
  access?: SkillToolContext;
}

/**
 * The skills `agent` may use: those its `skills` list names (null: every skill), and only if it
 * has the `read_skill` tool (a list it cannot act on would be noise). Reading the skills
 * directory failing is logged and means no skills, never a failed run.
 */
export async function skillContext(
  library: SkillLibrary | null,
  agent: AgentDefinition,
  tools: readonly RuntimeTool[],
  logger: Logger,
): Promise<SkillContext> {
  const withoutTool = tools.filter((tool) => tool.name !== 'read_skill');
  if (!library || withoutTool.length === tools.length) return { section: '', tools: withoutTool };
  let skills: Skill[];
  try {
    skills = (await library.list()).skills;
  } catch (error) {
    logger.warn({ dir: library.dir, err: errorMessage(error) }, 'Cannot read the skills directory');
    return { section: '', tools: withoutTool };
  }
  const allowed = agent.skills;
  const visible = allowed === null ? skills : skills.filter((s) => allowed.includes(s.name));
  if (visible.length === 0) return { section: '', tools: withoutTool };
  const names = visible.map((s) => s.name);
  return {
    section: skillSection(visible),
    tools: [...tools],
    access: {
      names,
      load: (name) => (names.includes(name) ? library.load(name) : Promise.resolve(null)),
      readFile: (name, file) =>
        names.includes(name)
          ? library.readFile(name, file)
          : Promise.resolve({ ok: false, message: `No skill named "${name}".` }),
    },
  };
}

/** The list the agent chooses from; past the budget, the remaining skills are named only. */
export function skillSection(
  skills: readonly Pick<Skill, 'name' | 'description'>[],
  maxChars: number = SKILL_LIST_MAX_CHARS,
): string {
  const lines: string[] = [];
  let room = maxChars;
  let index = 0;
  for (; index < skills.length; index += 1) {
    const skill = skills[index];
    if (!skill) break;
    const line = `- ${skill.name}: ${skill.description.replace(/\s+/g, ' ')}`;
    if (line.length + 1 > room) break;
    lines.push(line);
    room -= line.length + 1;
  }
  const rest = skills.slice(index).map((s) => s.name);
  if (rest.length > 0) {
    lines.push(`- (not described for length: ${rest.join(', ')})`);
  }
  return [
    '## Skills',
    'Instructions for particular tasks, kept in this workspace. When a task matches a ' +
      "skill's description, load the skill with read_skill before you start, and follow it.",
    lines.join('\n'),
  ].join('\n\n');
}
