import { SKILL_DESCRIPTION_MAX } from '@cognition/contracts';
import { z } from 'zod';
import type { RestRoute } from './route';
import { defineRoute } from './route';
import { errorResponse } from './responses';

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

export const SKILL_ROUTES: RestRoute[] = [
  defineRoute({
    method: 'get',
    path: '/skills',
    operationId: 'listSkills',
    summary: "The workspace's skills",
    description:
      "The skills of the server's workspace (`<COGNITION_WORKSPACE_ROOT>/.cognition/skills/<name>/" +
      'SKILL.md`), sorted by name, as the next turn of an agent will see them (an agent whose ' +
      '`skills` list names some sees only those). `problems` lists every SKILL.md that was ' +
      'skipped (no frontmatter, missing or invalid `name` / `description`, a name other than ' +
      'its directory, too large) and why. Skills are server-wide, not tenant data: a valid key ' +
      'is needed when keys are configured, scope headers are not.',
    tag: 'agents',
    caller: 'key',
    request: {},
    responses: {
      200: { description: 'Skills and skipped SKILL.md files', schema: SkillListBody },
      401: errorResponse('Missing or invalid API key (when API keys are configured)'),
    },
    async handle({ api }) {
      const list = await api.skills.list();
      return { status: 200, body: list satisfies z.infer<typeof SkillListBody> };
    },
  }),
];
