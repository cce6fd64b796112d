import { z } from 'zod';

/**
 * A skill's name: lowercase letters, digits and single hyphens, at most 64 characters (the
 * Agent Skills format's rule). It must equal the name of the skill's directory.
 */
export const SkillNameSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(
    /^[a-z0-9]+(?:-[a-z0-9]+)*$/,
    'skill names are lowercase letters, digits and single hyphens (e.g. "release-notes")',
  );

/** The longest description a skill may have: it is shown to the agent in every turn. */
export const SKILL_DESCRIPTION_MAX = 1024;

/**
 * A skill of the server's workspace: `.cognition/skills/<name>/SKILL.md` (YAML frontmatter
 * `name` and `description`; the body holds the instructions, which the agent loads with the
 * `read_skill` tool). `path` is the SKILL.md file relative to the workspace; `files` are the
 * other files of the skill's directory, relative to that directory, sorted.
 */
export const SkillSchema = z.object({
  name: SkillNameSchema,
  description: z.string().min(1).max(SKILL_DESCRIPTION_MAX),
  path: z.string(),
  files: z.array(z.string()),
});
export type Skill = z.infer<typeof SkillSchema>;

/** A SKILL.md that was skipped, and why (`path` relative to the workspace). */
export const SkillProblemSchema = z.object({ path: z.string(), message: z.string() });
export type SkillProblem = z.infer<typeof SkillProblemSchema>;

/** Every valid skill (sorted by name) and every skipped one. */
export const SkillListSchema = z.object({
  skills: z.array(SkillSchema),
  problems: z.array(SkillProblemSchema),
});
export type SkillList = z.infer<typeof SkillListSchema>;
