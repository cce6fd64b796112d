import { SKILL_DESCRIPTION_MAX } from '@cognition/contracts';
import { z } from 'zod';

/* The workspace's skills. */

export const SkillListBody = z
  .object({
    skills: z.array(
      z.object({
        name: z.string().meta({ description: "The skill's name, equal to its directory's" }),
        description: z
          .string()
          .max(SKILL_DESCRIPTION_MAX)
          .meta({ description: 'What the agent reads to decide when to load the skill' }),
        path: z.string().meta({
          description:
            'Its SKILL.md, relative to the workspace (.cognition/skills/<name>/SKILL.md)',
        }),
        files: z.array(z.string()).meta({
          description: "The other files of the skill's directory, relative to it, sorted",
        }),
      }),
    ),
    problems: z.array(
      z.object({
        path: z.string().meta({ description: 'The SKILL.md that was skipped' }),
        message: z.string().meta({ description: 'Why, naming the field' }),
      }),
    ),
  })
  .meta({ id: 'SkillList' });
