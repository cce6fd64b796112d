import type { z } from 'zod';
import type { RestRoute } from '../route';
import { defineRoute } from '../route';
import { errorResponse } from '../responses';
import { SkillListBody } from '../schemas/skills';

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
