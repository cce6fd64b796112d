import { z } from 'zod';
import { capOutput, defineTool } from './types';
import type { SkillToolContext } from './types';

function unknownSkill(name: string, skills: SkillToolContext | undefined) {
  const names = skills && skills.names.length > 0 ? skills.names.join(', ') : 'none';
  return { output: `No skill named "${name}". Available skills: ${names}.`, exitCode: 1 };
}

/**
 * Loads a skill's instructions (the body of its SKILL.md) and lists the files beside it; with
 * `file`, returns one of those files. Skills sit in the server's workspace, outside the
 * session's sandbox, so their files are read through this tool rather than `read_file`.
 */
export const readSkillTool = defineTool({
  name: 'read_skill',
  idempotent: true,
  description:
    'Load the instructions of a skill listed under "Skills" in your instructions, before doing ' +
    "a task it covers. With `file`, read one of the skill's own files instead (as listed when " +
    'the skill was loaded).',
  schema: z.strictObject({
    name: z.string().min(1).max(64).describe('The skill name, e.g. "release-notes"'),
    file: z
      .string()
      .min(1)
      .max(1024)
      .optional()
      .describe('A file of the skill\'s directory, relative to it (e.g. "templates/notes.md")'),
  }),
  async run({ name, file }, ctx) {
    const skills = ctx.skills;
    if (!skills?.names.includes(name)) return unknownSkill(name, skills);
    if (file !== undefined) {
      const read = await skills.readFile(name, file);
      return read.ok
        ? { output: capOutput(read.text), exitCode: 0 }
        : { output: read.message, exitCode: 1 };
    }
    const loaded = await skills.load(name);
    if (!loaded) return unknownSkill(name, skills);
    const { skill, body } = loaded;
    const parts = [`# Skill: ${skill.name}`, skill.description, body === '' ? null : body];
    if (skill.files.length > 0) {
      parts.push(
        `Files of this skill (read one with read_skill {"name": "${skill.name}", "file": "<file>"}):\n` +
          skill.files.map((f) => `- ${f}`).join('\n'),
      );
    }
    return {
      output: capOutput(parts.filter((p): p is string => p !== null).join('\n\n')),
      exitCode: 0,
    };
  },
});
