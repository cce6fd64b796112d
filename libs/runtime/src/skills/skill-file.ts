import { SKILL_DESCRIPTION_MAX, SkillNameSchema } from '@cognition/contracts';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { splitFrontmatter } from '../frontmatter';

/** The file that makes a directory of `.cognition/skills` a skill. */
export const SKILL_FILE = 'SKILL.md';

// Other keys of the Agent Skills format (license, allowed-tools, metadata...) are accepted and
// ignored, so a skill written for another agent loads unchanged.
const SkillFrontmatterSchema = z.object({
  name: SkillNameSchema,
  description: z
    .string({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be text') })
    .trim()
    .min(1, 'must not be empty')
    .max(SKILL_DESCRIPTION_MAX, `must be at most ${SKILL_DESCRIPTION_MAX} characters`),
});

/** A SKILL.md as parsed: its frontmatter and its body (the instructions). */
export interface ParsedSkillFile {
  name: string;
  description: string;
  body: string;
}

export type SkillFileResult = { ok: true; skill: ParsedSkillFile } | { ok: false; message: string };

/**
 * Parses the SKILL.md of directory `dirName`. Its frontmatter must hold a valid `name` equal to
 * the directory's name and a non-empty `description`; the body is the instructions (it may be
 * empty when the files beside it say everything). Never throws: a problem is a message naming
 * the field, for the `problems` of the skill list.
 */
export function parseSkillFile(dirName: string, text: string): SkillFileResult {
  const split = splitFrontmatter(text);
  if (!split) {
    return { ok: false, message: 'expected YAML frontmatter between --- lines at the top' };
  }
  let yaml: unknown;
  try {
    yaml = parseYaml(split.frontmatter) as unknown;
  } catch (error) {
    return { ok: false, message: `invalid YAML: ${(error as Error).message}` };
  }
  const parsed = SkillFrontmatterSchema.safeParse(yaml ?? {});
  if (!parsed.success) {
    const issues = parsed.error.issues.map(
      (issue) => `${issue.path.join('.') || '(frontmatter)'}: ${issue.message}`,
    );
    return { ok: false, message: issues.join('; ') };
  }
  if (parsed.data.name !== dirName) {
    return {
      ok: false,
      message: `name: "${parsed.data.name}" must equal the directory's name "${dirName}"`,
    };
  }
  return {
    ok: true,
    skill: { name: parsed.data.name, description: parsed.data.description, body: split.body },
  };
}
