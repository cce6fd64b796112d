import type { Stats } from 'node:fs';
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import type { Skill, SkillList, SkillProblem } from '@cognition/contracts';
import type { Logger } from '../logger';
import { silentLogger } from '../logger';
import { SKILL_FILE, parseSkillFile } from './skill-file';

/** Where skills live, relative to the workspace. */
export const SKILLS_DIR = join('.cognition', 'skills');

/** A SKILL.md larger than this is skipped (it is meant to be read by a model in one go). */
export const SKILL_FILE_MAX_BYTES = 256 * 1024;
/** A file beside SKILL.md larger than this is not returned by `read_skill`. */
const SKILL_RESOURCE_MAX_BYTES = 1024 * 1024;
/** Files of one skill listed at most (the rest are left out of the list). */
const FILES_PER_SKILL = 200;

/** A skill with its instructions, as `read_skill` loads it. */
export interface LoadedSkill {
  skill: Skill;
  body: string;
}

export type SkillFileRead = { ok: true; text: string } | { ok: false; message: string };

export interface SkillLibraryOptions {
  /** The server's workspace: skills are `<workspace>/.cognition/skills/<name>/SKILL.md`. */
  workspace: string;
  /** Skipped skills are logged here (a warning, once per problem and library). */
  logger?: Logger;
}

/**
 * The skills of a workspace, read from disk on every call (a skill added, fixed or removed is
 * seen by the next turn, without restart; a directory of a few skills is cheap to read). A bad
 * SKILL.md is skipped and reported in `problems`, never thrown: one broken skill must not break
 * a run or hide the others.
 */
export class SkillLibrary {
  readonly dir: string;
  private readonly logger: Logger;
  private readonly logged = new Set<string>();

  constructor(private readonly options: SkillLibraryOptions) {
    this.dir = resolve(options.workspace, SKILLS_DIR);
    this.logger = options.logger ?? silentLogger;
  }

  /** Every valid skill (sorted by name) and every skipped SKILL.md with its problem. */
  async list(): Promise<SkillList> {
    const skills: Skill[] = [];
    const problems: SkillProblem[] = [];
    for (const name of await this.directories()) {
      const found = await this.read(name);
      if ('problem' in found) problems.push(found.problem);
      else skills.push(found.loaded.skill);
    }
    for (const problem of problems) this.logProblem(problem);
    return { skills, problems };
  }

  /** The skill named `name` with its body; null when there is no such valid skill. */
  async load(name: string): Promise<LoadedSkill | null> {
    if (!isPlainName(name)) return null;
    const found = await this.read(name);
    return 'loaded' in found ? found.loaded : null;
  }

  /**
   * A file of skill `name`'s directory (`file` relative to it, as `Skill.files` lists it). A
   * path leaving the directory — `..`, absolute, or a symlink pointing out — is refused.
   */
  async readFile(name: string, file: string): Promise<SkillFileRead> {
    const loaded = await this.load(name);
    if (!loaded) return { ok: false, message: `No skill named "${name}".` };
    const root = await realpath(join(this.dir, name));
    let target: string;
    let info: Stats;
    try {
      target = await realpath(resolve(root, file));
      info = await stat(target);
    } catch {
      return { ok: false, message: `Skill "${name}" has no file "${file}".` };
    }
    if (!target.startsWith(root + sep)) {
      return { ok: false, message: `"${file}" is not inside the directory of skill "${name}".` };
    }
    if (!info.isFile()) return { ok: false, message: `"${file}" is not a file.` };
    if (info.size > SKILL_RESOURCE_MAX_BYTES) {
      return {
        ok: false,
        message: `"${file}" has ${info.size} bytes, more than read_skill returns (${SKILL_RESOURCE_MAX_BYTES}).`,
      };
    }
    const bytes = await readFile(target);
    if (bytes.includes(0)) {
      return { ok: false, message: `"${file}" is a binary file (${info.size} bytes).` };
    }
    return { ok: true, text: bytes.toString('utf8') };
  }

  private async directories(): Promise<string[]> {
    try {
      const entries = await readdir(this.dir, { withFileTypes: true });
      return entries
        .filter((entry) => entry.isDirectory() || entry.isSymbolicLink())
        .map((entry) => entry.name)
        .sort();
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return [];
      throw error;
    }
  }

  /** One directory of the skills directory: its skill, or why it is not one. */
  private async read(name: string): Promise<{ loaded: LoadedSkill } | { problem: SkillProblem }> {
    const path = join(SKILLS_DIR, name, SKILL_FILE);
    const absolute = join(this.options.workspace, path);
    let text: string;
    try {
      const info = await stat(absolute);
      if (!info.isFile()) return { problem: { path, message: `${SKILL_FILE} is not a file` } };
      if (info.size > SKILL_FILE_MAX_BYTES) {
        return {
          problem: {
            path,
            message: `larger than ${SKILL_FILE_MAX_BYTES / 1024} KB (${info.size} bytes)`,
          },
        };
      }
      text = await readFile(absolute, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') {
        return { problem: { path, message: `the directory has no ${SKILL_FILE}` } };
      }
      return { problem: { path, message: `cannot be read: ${(error as Error).message}` } };
    }
    const parsed = parseSkillFile(name, text);
    if (!parsed.ok) return { problem: { path, message: parsed.message } };
    const { description, body } = parsed.skill;
    const files = await this.filesOf(name);
    return { loaded: { skill: { name, description, path, files }, body } };
  }

  private async filesOf(name: string): Promise<string[]> {
    const dir = join(this.dir, name);
    let entries: string[];
    try {
      entries = await readdir(dir, { recursive: true });
    } catch {
      return [];
    }
    const files: string[] = [];
    for (const entry of entries.sort()) {
      if (entry === SKILL_FILE) continue;
      const info = await stat(join(dir, entry)).catch(() => null);
      if (!info?.isFile()) continue;
      files.push(relative(dir, join(dir, entry)).split(sep).join('/'));
      if (files.length === FILES_PER_SKILL) break;
    }
    return files;
  }

  private logProblem(problem: SkillProblem): void {
    const key = `${problem.path}\n${problem.message}`;
    if (this.logged.has(key)) return;
    this.logged.add(key);
    this.logger.warn({ skill: problem.path, problem: problem.message }, 'Skipped a skill');
  }
}

/** A name that can only mean a directory right under the skills directory. */
function isPlainName(name: string): boolean {
  return name !== '' && name !== '.' && name !== '..' && !/[/\\]/.test(name);
}
