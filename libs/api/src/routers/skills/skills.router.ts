import type { SkillList } from '@cognition/contracts';
import type { ApiContext } from '../../context';
import { publicProcedure, router } from '../../trpc';

/**
 * The server workspace's skills: name, description, SKILL.md path and the files beside it, plus
 * the SKILL.md files that were skipped and why (docs/agents.md "Skills"). Read from disk on each
 * call, so it shows what the next turn will see.
 */
function listSkillsHandler({ ctx }: { ctx: ApiContext }): Promise<SkillList> {
  return ctx.services.skills.list();
}

export const skillsRouter = router({
  list: publicProcedure.query(listSkillsHandler),
});
